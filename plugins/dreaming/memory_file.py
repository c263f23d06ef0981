"""Writing MEMORY.md (pure text functions; the caller reads and journals the file).

Each run appends one fenced region::

    <!-- lifelong:promoted-20260324-030000-ab12:start -->
    ## Promoted 2026-03-24
    - Decision: the pitch opens with the live offline sync demo. <!-- key:3f2a9c1b7d10 src:memory/2026-03-04.md#L4-L4 -->
    <!-- lifelong:promoted-20260324-030000-ab12:end -->

A key already present anywhere in the file is never added again. Bytes outside managed regions
are never changed. *Sticky* items — a line carrying ``<!-- sticky -->``, or any item under a
``## Sticky`` heading — are never removed or merged: a managed region holding one is left alone
by compaction. Compaction keeps the file within ``budget`` bytes by merging the oldest promoted
regions into one ``promoted-compacted`` region (dropping their date headings and source
citations, keeping each item and its key), then, if still needed, evicting the oldest
non-sticky compacted items. What it did is returned so the run can report it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lifelong.workspace import Region, find_regions, read_region, remove_region, replace_region

PROMOTED_PREFIX = "promoted-"
COMPACTED = "promoted-compacted"
COMPACTED_HEADING = "## Promoted earlier (compacted)"
NEW_FILE_HEADER = "# MEMORY\n\nDurable facts, loaded at the start of every session.\n"

_KEY_RE = re.compile(r"<!--\s*key:([0-9a-f]{6,64})\b[^>]*-->")
_SRC_RE = re.compile(r"(<!--\s*key:[0-9a-f]{6,64})\s+src:\S+?(\s*-->)")
_STICKY_RE = re.compile(r"<!--\s*sticky\s*-->", re.I)
_STICKY_HEADING_RE = re.compile(r"^#{1,6}\s+sticky\b", re.I | re.M)
_ANY_COMMENT = re.compile(r"<!--|-->")


@dataclass(frozen=True)
class Item:
    key: str
    text: str
    src: str


def region_name(run_id: str) -> str:
    return f"{PROMOTED_PREFIX}{run_id}"


def existing_keys(text: str) -> set[str]:
    """Keys of every promoted item in the file (managed or moved by hand)."""
    return set(_KEY_RE.findall(text))


def memory_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text without markers) of every non-empty, non-heading line."""
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("<!-- lifelong:"):
            continue
        clean = re.sub(r"<!--.*?-->", "", stripped).strip()
        clean = re.sub(r"^([-*+]|\d+[.)])\s+", "", clean)
        if clean:
            out.append((i, clean))
    return out


def clean_item_text(text: str) -> str:
    text = _ANY_COMMENT.sub("", text)
    return re.sub(r"\s+", " ", text).strip()


def render_item(item: Item) -> str:
    return f"- {clean_item_text(item.text)} <!-- key:{item.key} src:{item.src} -->"


def render_region_body(date_label: str, items: list[Item]) -> str:
    return f"## Promoted {date_label}\n" + "".join(render_item(i) + "\n" for i in items)


def is_sticky_line(line: str) -> bool:
    return bool(_STICKY_RE.search(line))


def region_has_sticky(body: str) -> bool:
    return bool(_STICKY_RE.search(body) or _STICKY_HEADING_RE.search(body))


def add_run_region(text: str, run_id: str, body: str) -> str:
    """Append this run's region (or refresh it: a re-run with the same id is idempotent)."""
    if not text.strip():
        text = NEW_FILE_HEADER
    return replace_region(text, region_name(run_id), body)


def remove_run_region(text: str, run_id: str) -> str:
    return remove_region(text, region_name(run_id))


@dataclass
class Compaction:
    budget: int
    before_bytes: int
    after_bytes: int = 0
    merged_regions: list[str] = field(default_factory=list)
    evicted: list[dict[str, str]] = field(default_factory=list)
    skipped_sticky: list[str] = field(default_factory=list)
    over_budget: bool = False
    note: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.merged_regions or self.evicted)

    def touched_regions(self) -> list[str]:
        return [*self.merged_regions, COMPACTED] if self.changed else []

    def as_json(self) -> dict:
        return {
            "budget": self.budget,
            "before_bytes": self.before_bytes,
            "after_bytes": self.after_bytes,
            "merged_regions": self.merged_regions,
            "evicted": self.evicted,
            "skipped_sticky": self.skipped_sticky,
            "over_budget": self.over_budget,
            "note": self.note,
        }


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _item_lines(body: str) -> list[str]:
    return [ln for ln in body.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]


def _compact_line(line: str) -> str:
    return _SRC_RE.sub(r"\1\2", line)


def _replace_span(text: str, region: Region, name: str, body: str) -> str:
    """Replace a whole region (fences included) with region ``name`` holding ``body``."""
    if body and not body.endswith("\n"):
        body += "\n"
    block = f"<!-- lifelong:{name}:start -->\n{body}<!-- lifelong:{name}:end -->\n"
    return text[: region.start] + block + text[region.end :]


def compact(text: str, budget: int, *, keep: set[str]) -> tuple[str, Compaction]:
    """Bring ``text`` within ``budget`` bytes by touching only managed promoted regions not in
    ``keep`` (the current run's), oldest first. Pure."""
    report = Compaction(budget=budget, before_bytes=_size(text))
    if report.before_bytes <= budget:
        report.after_bytes = report.before_bytes
        return text, report
    regions = sorted(
        (
            r
            for r in find_regions(text)
            if r.name.startswith(PROMOTED_PREFIX) and r.name != COMPACTED and r.name not in keep
        ),
        key=lambda r: r.name,
    )
    for region in regions:
        if _size(text) <= budget:
            break
        current = next(r for r in find_regions(text) if r.name == region.name)
        body = current.body(text)
        if region_has_sticky(body):
            report.skipped_sticky.append(region.name)
            continue
        lines = [_compact_line(ln) for ln in _item_lines(body)]
        existing = read_region(text, COMPACTED)
        if existing is None:
            text = _replace_span(
                text, current, COMPACTED, COMPACTED_HEADING + "\n" + "".join(f"{ln}\n" for ln in lines)
            )
        else:
            text = remove_region(text, region.name)
            text = replace_region(text, COMPACTED, existing + "".join(f"{ln}\n" for ln in lines))
        report.merged_regions.append(region.name)
    if _size(text) > budget and read_region(text, COMPACTED) is not None:
        body = read_region(text, COMPACTED) or ""
        lines = body.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        index = 0
        while _size(text) > budget and index < len(lines):
            line = lines[index]
            if line.lstrip().startswith("#") or is_sticky_line(line) or not _KEY_RE.search(line):
                index += 1
                continue
            m = _KEY_RE.search(line)
            report.evicted.append(
                {
                    "key": m.group(1) if m else "",
                    "text": clean_item_text(_KEY_RE.sub("", line).lstrip("-*+ ")),
                }
            )
            del lines[index]
            text = replace_region(text, COMPACTED, "\n".join(lines) + "\n")
    report.after_bytes = _size(text)
    if report.after_bytes > budget:
        report.over_budget = True
        report.note = (
            f"MEMORY.md is {report.after_bytes} bytes, over the {budget}-byte budget: only managed, "
            "non-sticky promoted items may be compacted and none are left (human text is never touched)"
        )
    elif report.changed:
        report.note = (
            f"compacted MEMORY.md from {report.before_bytes} to {report.after_bytes} bytes "
            f"(budget {budget}): merged {len(report.merged_regions)} older promoted section(s)"
            + (f", evicted {len(report.evicted)} oldest item(s)" if report.evicted else "")
        )
    return text, report


def restore_regions(current: str, before: str | None, names: list[str]) -> str:
    """For a forced rollback: put regions ``names`` back as they were in ``before`` (removing
    those that did not exist then). Bytes outside regions stay as in ``current``."""
    for name in names:
        body = read_region(before, name) if before else None
        if body is None:
            current = remove_region(current, name)
        else:
            current = replace_region(current, name, body)
    return current
