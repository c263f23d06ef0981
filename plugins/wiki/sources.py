"""What the wiki is compiled from: MEMORY.md items and daily-note bullets, as source lines with
exact line ranges and hashes (pure parsing; the caller reads the files).

MEMORY.md items written by consolidation carry a key, the citations of the lines that stated them
and the day they were promoted, in a topic section or (older files) a per-night region::

    <!-- lifelong:topic-projects:start -->
    ## Projects and work
    - Booked the offsite at Gut Boltenhagen. <!-- key:74c0a939fb7c src:memory/2026-03-06.md#L4-L4 on:2026-03-09 -->
    <!-- lifelong:topic-projects:end -->

    <!-- lifelong:promoted-20260306-030000-d93f:start -->
    ## Promoted 2026-03-06
    - Booked the offsite at Gut Boltenhagen. <!-- key:74c0a939fb7c src:memory/2026-03-06.md#L4-L4 -->
    <!-- lifelong:promoted-20260306-030000-d93f:end -->

(the file format, read here as text: plugins never import each other). Bullets a human wrote in
MEMORY.md are sources too; a line carrying ``<!-- sticky -->`` or under a ``## Sticky`` heading is
a rule.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from lifelong.errors import InputError
from lifelong.markdown import (
    contested_mark,
    line_groups,
    parse_blocks,
    split_lines,
    strip_bookkeeping,
    title_line,
)
from lifelong.workspace import daily_date, find_regions

_ITEM_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_KEY = re.compile(r"<!--\s*key:([0-9a-f]{6,64})\b([^>]*?)\s*-->")
_SRC = re.compile(r"\bsrc:([^\s>]+)")
_ON = re.compile(r"\bon:(\d{4}-\d{2}-\d{2})\b")
_STICKY = re.compile(r"<!--\s*sticky\s*-->", re.I)
_RUN_REGION = re.compile(r"^promoted-((\d{4})(\d{2})(\d{2})-\d{6}(?:-[0-9a-z]+)?)$")
_PROMOTED_HEADING = re.compile(r"^Promoted (\d{4}-\d{2}-\d{2})")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_CITATION = re.compile(r"^(?P<path>[^#\s]+)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


@dataclass(frozen=True)
class SourceLine:
    """One statement of a source file (a bullet, or a daily's paragraph line). ``text`` is
    cleaned (marker and comments removed); ``sha256`` is of the raw lines; ``date`` is the daily's
    date or a promoted item's run date."""

    path: str
    start: int
    end: int
    text: str
    sha256: str
    date: str | None
    heading: str = ""
    kind: str = "daily"  # daily | memory
    key: str | None = None  # a promoted item's key
    cites: tuple[tuple[str, int, int], ...] = ()  # (path, start, end) of the daily lines it cites
    run_id: str | None = None  # the dream run that promoted it
    sticky: bool = False
    struck: bool = False  # a MEMORY.md item struck through (``~~…~~``): it no longer holds
    contested: bool = False  # a MEMORY.md item REM marked ``(contested by …)``: a later note may change it
    bullet: bool = True  # a list item (a daily's paragraph line is not)

    @property
    def lines(self) -> str:
        return f"L{self.start}-L{self.end}"

    @property
    def citation(self) -> str:
        return f"{self.path}#{self.lines}"


def lines_sha256(lines: list[str], start: int, end: int) -> str:
    """sha256 of lines ``start``..``end`` (1-based, inclusive) joined with ``\\n``."""
    return hashlib.sha256("\n".join(lines[start - 1 : end]).encode("utf-8")).hexdigest()


def clean_item(text: str) -> str:
    """The bullet's statement: comments, the suite's pointers on a struck or contested MEMORY.md
    item ("(superseded by …)", "(contested by …)", which quote another line) and the list marker
    removed. A strike-through stays: the item no longer holds."""
    text = strip_bookkeeping(text)
    text = _ITEM_MARKER.sub("", text, count=1)
    return re.sub(r"\s+", " ", text).strip()


def parse_citation(text: str) -> tuple[str, int, int] | None:
    m = _CITATION.match(text.strip())
    if not m:
        return None
    start = int(m.group("start"))
    return m.group("path"), start, int(m.group("end") or start)


def _items(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    return [
        (b.start, b.end, b.heading_path)
        for b in parse_blocks(text, nested_items=True)
        if b.kind == "list_item"
    ]


def read_daily(path: str, text: str) -> list[SourceLine]:
    """The statements of a daily note (``memory/YYYY-MM-DD.md``): each bullet, each line of a
    paragraph or a quote (:func:`lifelong.markdown.line_groups`: a note line is a statement unless
    it visibly continues the one before; a day's title line is not one), and each body row of a
    table. Phone notes are written a thought per line with no list marker: read as bullets only,
    a consolidated fact citing such a line found no line there and its evidence went unchecked."""
    day = daily_date(path)
    lines = split_lines(text)
    unquoted = [_QUOTE.sub("", ln) for ln in lines]
    spans: list[tuple[int, int, tuple[str, ...], bool]] = []
    for b in parse_blocks(text, nested_items=True):
        if b.kind == "list_item":
            spans.append((b.start, b.end, b.heading_path, True))
        elif b.kind in ("paragraph", "blockquote"):
            body = unquoted[b.start - 1 : b.end]
            for a, z in line_groups(body):
                if a == z and (not body[a].strip() or title_line(body[a].strip())):
                    continue
                spans.append((b.start + a, b.start + z, b.heading_path, False))
        elif b.kind == "table":  # each body row (not the header, not the delimiter row)
            spans += [(n, n, b.heading_path, False) for n in range(b.start + 2, b.end + 1)]
    out = []
    for start, end, headings, bullet in spans:
        cleaned = clean_item(" ".join(unquoted[start - 1 : end]))
        if not cleaned:
            continue
        heading = next((h for h in reversed(headings) if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", h)), "")
        out.append(
            SourceLine(
                path,
                start,
                end,
                cleaned,
                lines_sha256(lines, start, end),
                day.isoformat() if day else None,
                heading,
                bullet=bullet,
            )
        )
    return out


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def read_memory(path: str, text: str) -> list[SourceLine]:
    """The bullets of MEMORY.md: promoted items (key, cited daily lines, run id and date) and
    bullets a human wrote."""
    lines = split_lines(text)
    regions = []
    try:
        for r in find_regions(text):
            regions.append((_line_of(text, r.start), _line_of(text, max(r.start, r.end - 1)), r.name))
    except InputError:  # unbalanced fences: items still count, without their run
        regions = []
    out = []
    for start, end, headings in _items(text):
        raw = " ".join(lines[start - 1 : end])
        cleaned = clean_item(raw)
        if not cleaned:
            continue
        region = next((name for a, b, name in regions if a <= start <= b), None)
        run = _RUN_REGION.match(region or "")
        run_id = run.group(1) if run else None
        date = f"{run.group(2)}-{run.group(3)}-{run.group(4)}" if run else None
        if date is None:
            promoted = next((m for m in (_PROMOTED_HEADING.match(h) for h in headings) if m), None)
            date = promoted.group(1) if promoted else None
        key = _KEY.search(raw)
        cites: tuple[tuple[str, int, int], ...] = ()
        if key:
            src = _SRC.search(key.group(2))
            found = [parse_citation(c) for c in (src.group(1).split(",") if src else [])]
            cites = tuple(c for c in found if c is not None)
            on = _ON.search(key.group(2))
            date = on.group(1) if on else date
        sticky = bool(_STICKY.search(raw)) or any(h.strip().lower().startswith("sticky") for h in headings)
        out.append(
            SourceLine(
                path,
                start,
                end,
                cleaned,
                lines_sha256(lines, start, end),
                date,
                headings[-1] if headings else "",
                kind="memory",
                key=key.group(1) if key else None,
                cites=cites,
                run_id=run_id,
                sticky=sticky,
                struck=cleaned.startswith("~~"),
                contested=not cleaned.startswith("~~") and contested_mark(raw) is not None,
            )
        )
    return out
