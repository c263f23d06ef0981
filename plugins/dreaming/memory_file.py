"""Writing MEMORY.md (pure text functions; the caller reads and journals the file).

Promoted items go to a bounded set of topic sections, one fenced region each, created at the end
of the file the first time an item needs it::

    <!-- lifelong:topic-projects:start -->
    ## Projects and work
    - Fernwood raised a $2M seed round led by Acme Capital. <!-- key:3f2a9c1b7d10 src:memory/2026-04-02.md#L4-L4,memory/2026-04-09.md#L7-L7 on:2026-04-12 -->
    <!-- lifelong:topic-projects:end -->

Each item keeps its key, the citations of every line that stated it and the day it was promoted.
Files written before topic sections keep their per-night ``promoted-<run>`` regions ("## Promoted
YYYY-MM-DD"); they are read, deduplicated against and compacted as before, never rewritten.

A key already present anywhere in the file is never added again. Bytes outside managed regions
are never changed. *Sticky* items — a line carrying ``<!-- sticky -->``, or any item under a
``## Sticky`` heading — and items a human wrote on (text after the key marker) are never
removed. Compaction keeps the file within ``budget`` bytes by merging first (old per-night
regions into one ``promoted-compacted`` region, then dropping citations from the oldest items,
keys kept), and only then evicting the oldest items, at most a fraction of them per run. What it
did is returned so the run can report it (the diary lists evictions).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lifelong.errors import LifelongError
from lifelong.markdown import contested_mark
from lifelong.text import HASHTAG_RE, content_tokens
from lifelong.workspace import Region, find_regions, read_region, remove_region, replace_region

PROMOTED_PREFIX = "promoted-"
COMPACTED = "promoted-compacted"
COMPACTED_HEADING = "## Promoted earlier (compacted)"
NEW_FILE_HEADER = "# MEMORY\n\nDurable facts, loaded at the start of every session.\n"

_KEY_RE = re.compile(r"<!--\s*key:([0-9a-f]{6,64})\b[^>]*-->")
_SRC_RE = re.compile(r"(<!--\s*key:[0-9a-f]{6,64})\s+src:[^\s>]+")
_ON_RE = re.compile(r"<!--\s*key:[0-9a-f]{6,64}\b[^>]*\bon:(\d{4}-\d\d-\d\d)")
_STICKY_RE = re.compile(r"<!--\s*sticky\s*-->", re.I)
_STICKY_HEADING_RE = re.compile(r"^#{1,6}\s+sticky\b", re.I | re.M)
_ANY_COMMENT = re.compile(r"<!--|-->")


TOPIC_PREFIX = "topic-"
# (region slug, heading, word stems that put an item there): a bounded set of sections, in file order
TOPICS: tuple[tuple[str, str, frozenset[str]], ...] = tuple(
    (slug, heading, frozenset(content_tokens(words_)))
    for slug, heading, words_ in (
        (
            "people",
            "People",
            "birthday born wife husband partner friend friends mum mom dad mother father sister brother "
            "colleague neighbour neighbor turns messages message email emails text texts",
        ),
        (
            "family",
            "Family",
            "kid kids son daughter child children school pickup class teacher nanny daycare",
        ),
        (
            "projects",
            "Projects and work",
            "project launch release ship ships deadline client customer customers seed round investor "
            "investors funding office startup company team standup meeting sprint changelog contract "
            "hiring manager roadmap notes demo pitch budget rota rotation on-call shift shifts",
        ),
        (
            "health",
            "Health",
            "doctor gp physician practice allergic allergy allergist medication dentist gym coach training "
            "trains sessions session therapy appointment check-up patients avoid reacts react menu "
            "physio physiotherapist physiotherapy therapist vet clinic hospital prescription teeth tooth "
            "dental hygienist",
        ),
        (
            "home",
            "Home and money",
            "rent landlord flat apartment wifi router bill bills subscription insurance car garage repair "
            "repairs handyman bank tax salary pay paid euros eur boiler heating plumber electrician "
            "recycling bins mortgage broadband electricity utilities council",
        ),
        (
            "preferences",
            "Preferences",
            "prefer prefers favourite favorite like likes love loves hate never always",
        ),
    )
) + (("other", "Other", frozenset()),)


def _tagged_topic(text: str) -> str | None:
    """The topic an item's own tag names ("#health", "#work", "#kids"): the first tag that is a
    word of a topic's heading or one of its words."""
    for tag in HASHTAG_RE.findall(text):
        stems = content_tokens(tag.replace("-", " "))
        for slug, heading, topic_words in TOPICS[:-1]:
            if stems and stems <= (content_tokens(heading) | topic_words):
                return slug
    return None


# words of the family topic that adults' own lives use too ("my first dialect class", "Regula, the
# Swiss German teacher"): they count only beside a word about children
_SHARED_FAMILY_WORDS = frozenset(content_tokens("class teacher"))


def topic_of(text: str) -> str:
    """The section a promoted item goes to: the one its own tag names, else the topic whose words
    it uses most (the first on a tie); "preferences" only for the first person's own; "family"'s
    "class" and "teacher" only beside a word about children; "other" when none fits."""
    tagged = _tagged_topic(text)
    if tagged is not None:
        return tagged
    found = content_tokens(text)
    first_person = bool(re.search(r"\b(I|I'm|I've|my|me)\b", text))
    best, best_hits = "other", 0
    for slug, _heading, stems in TOPICS:
        if slug == "preferences" and not first_person:
            continue
        hits = len(found & stems)
        if slug == "family" and not found & (stems - _SHARED_FAMILY_WORDS):
            hits = 0
        if hits > best_hits:
            best, best_hits = slug, hits
    return best


def topic_region(slug: str) -> str:
    return f"{TOPIC_PREFIX}{slug}"


@dataclass(frozen=True)
class Item:
    key: str
    text: str
    src: str  # comma-separated citations of every line stating it
    date: str = ""  # the day it was promoted
    topic: str = ""


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
    when = f" on:{item.date}" if item.date else ""
    return f"- {clean_item_text(item.text)} <!-- key:{item.key} src:{item.src}{when} -->"


def add_items(text: str, items: list[Item]) -> tuple[str, list[str]]:
    """Append ``items`` to their topic sections (a managed region each, created in topic order
    at the end of the file when missing). Returns the new text and the regions touched."""
    if not text.strip():
        text = NEW_FILE_HEADER
    touched: list[str] = []
    by_topic: dict[str, list[Item]] = {}
    for item in items:
        by_topic.setdefault(item.topic or topic_of(item.text), []).append(item)
    for slug, heading, _ in TOPICS:
        if slug not in by_topic:
            continue
        name = topic_region(slug)
        body = read_region(text, name)
        new_items = "".join(render_item(i) + "\n" for i in by_topic[slug])
        if body is None:
            text = _insert_topic(text, slug, f"## {heading}\n{new_items}")
        else:
            if body and not body.endswith("\n"):
                body += "\n"
            text = replace_region(text, name, body + new_items)
        touched.append(name)
    return text, touched


def _insert_topic(text: str, slug: str, body: str) -> str:
    """A new topic section, placed before the first existing section that follows it in topic
    order (so the file keeps People, Family, Projects… in order), else at the end."""
    order = [t[0] for t in TOPICS]
    later = {topic_region(t) for t in order[order.index(slug) + 1 :]}
    following = [r for r in find_regions(text) if r.name in later]
    if not following:
        return replace_region(text, topic_region(slug), body)
    at = min(r.start for r in following)
    block = (
        f"<!-- lifelong:{topic_region(slug)}:start -->\n{body}<!-- lifelong:{topic_region(slug)}:end -->\n\n"
    )
    return text[:at] + block + text[at:]


def item_hash(text: str) -> str:
    """The hash of an item's text as written (markers and spacing ignored): a human who changes
    the value changes the hash."""
    return hashlib.sha256(clean_item_text(text).encode("utf-8")).hexdigest()[:12]


_STRUCK = re.compile(r"^~~(?P<text>.+)~~ \(superseded by .*\)$")


def without_contested_mark(text: str) -> str | None:
    """``text`` (an item's body) without REM's trailing ``(contested by …)``; None when it has none."""
    m = contested_mark(text)
    return text[: m.start()] if m and m.end() == len(text) else None


def item_text(line: str) -> str:
    """The text of an item line before its key marker, without the bullet."""
    m = _KEY_RE.search(line)
    head = line[: m.start()] if m else line
    return clean_item_text(re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", head))


def edited_by_human(line: str, written: dict[str, str]) -> bool:
    """An item line whose text no longer hashes to what a run wrote (the supersede gate's
    strike-through, ``~~text~~ (superseded by …)``, and REM's ``text (contested by …)`` are
    automatic edits, not a human's)."""
    m = _KEY_RE.search(line)
    if not m or m.group(1) not in written:
        return False
    text = item_text(line)
    struck = _STRUCK.match(text)
    unmarked = struck.group("text") if struck else without_contested_mark(text) or text
    return item_hash(unmarked) != written[m.group(1)]


def item_identity(line: str, written: dict[str, str]) -> str:
    """What makes two versions of a MEMORY.md line "the same line" to a rollback: an item line the
    suite wrote and no human changed (its text hashes to what a run wrote, nothing after its key
    marker, not sticky) is its key, however a later night re-rendered it (citations dropped by
    compaction, struck through by supersede); any other line is its exact text."""
    m = _KEY_RE.search(line)
    if m and not has_human_text(line.rstrip("\n")) and not edited_by_human(line, written):
        return f"\x00item:{m.group(1)}"
    return line


def section_scaffold_to_keep(lines: tuple[str, ...], drop: frozenset[int]) -> set[int]:
    """For a rollback that would drop the fences (and heading) of a managed section while lines it
    did not write still stand inside it (a later night's item, a human's line): those fence and
    heading lines, so the section stays whole around what remains."""
    text = "".join(lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    line_at = {offset: i for i, offset in enumerate(starts)}
    keep: set[int] = set()
    for region in find_regions(text):
        first, last = line_at.get(region.start), line_at.get(region.body_end)
        if first is None or last is None or first not in drop:
            continue
        scaffold = {first, last}
        if first + 1 < last and lines[first + 1].lstrip().startswith("#"):
            scaffold.add(first + 1)
        inside = [i for i in range(first + 1, last) if i not in scaffold and lines[i].strip()]
        if any(i not in drop for i in inside):
            keep |= scaffold & drop
    return keep


def broken_structure(text: str, was: str) -> str | None:
    """What makes ``text`` no valid MEMORY.md for the suite that ``was`` did not already have
    (unbalanced or repeated sections, an item key twice), in words; None when it is sound."""
    try:
        find_regions(text)
    except LifelongError as exc:
        return str(exc)
    keys, old = _KEY_RE.findall(text), _KEY_RE.findall(was)
    twice = sorted({k for k in keys if keys.count(k) > max(1, old.count(k))})
    return f"item {twice[0]} twice" if twice else None


def item_keys(lines: list[str] | tuple[str, ...]) -> list[str]:
    """The item keys on ``lines``, in order."""
    return [m.group(1) for ln in lines if (m := _KEY_RE.search(ln))]


def _own_heading(region: str, line: str) -> bool:
    stripped = line.strip()
    if region.startswith(TOPIC_PREFIX):
        return any(stripped == f"## {h}" for slug, h, _ in TOPICS if topic_region(slug) == region)
    return stripped == COMPACTED_HEADING or stripped.startswith("## Promoted ")


def human_edits(text: str, written: dict[str, str]) -> list[dict[str, str]]:
    """What a human changed inside the managed sections of MEMORY.md: items whose text no longer
    hashes to what a run wrote (``written``: key -> :func:`item_hash`), text added after a key
    marker, and headings or lines added inside a fence. Items written before hashes were kept
    (no entry in ``written``) count as unedited."""
    out: list[dict[str, str]] = []
    for region in find_regions(text):
        if not (region.name.startswith(TOPIC_PREFIX) or region.name.startswith(PROMOTED_PREFIX)):
            continue
        for line in region.body(text).split("\n"):
            stripped = line.strip()
            if not stripped:
                continue
            m = _KEY_RE.search(line)
            if m:
                key = m.group(1)
                if edited_by_human(line, written):
                    out.append(
                        {"kind": "changed item", "key": key, "section": region.name, "text": item_text(line)}
                    )
                elif line[m.end() :].strip():
                    out.append({"kind": "note on item", "key": key, "section": region.name, "text": stripped})
            elif stripped.startswith("#"):
                if not _own_heading(region.name, line):
                    out.append({"kind": "added heading", "key": "", "section": region.name, "text": stripped})
            else:
                out.append({"kind": "added line", "key": "", "section": region.name, "text": stripped})
    return out


_ITEM_HEAD = re.compile(r"^(?P<lead>\s*(?:[-*+]|\d+[.)])\s+)(?P<body>.*?)(?P<tail>\s*<!--.*)$")


def _keys_of_items(text: str, marked: Callable[[str], object]) -> set[str]:
    out = set()
    for line in text.split("\n"):
        m = _KEY_RE.search(line)
        head = _ITEM_HEAD.match(line) if m else None
        if m and head and marked(head.group("body").strip()):
            out.add(m.group(1))
    return out


def struck_keys(text: str) -> set[str]:
    """Keys of the items already struck through (``- ~~…~~ (superseded by …) <!-- key:… -->``)."""
    return _keys_of_items(text, lambda body: body.startswith("~~"))


def contested_keys(text: str) -> set[str]:
    """Keys of the items marked contested (``- text (contested by …) <!-- key:… -->``)."""
    return _keys_of_items(text, without_contested_mark)


def strike_items(
    text: str, struck: dict[str, str], written: dict[str, str], contested: dict[str, str] | None = None
) -> tuple[str, list[str]]:
    """Strike through the managed items whose key is in ``struck`` (key -> what replaced it):
    ``- ~~text~~ (superseded by …) <!-- key:… -->``, so the file says the value changed and keeps
    what it was; mark those in ``contested`` (a later note that may have changed them, read with
    less than :func:`lifelong.facts.surely_updates`'s certainty) ``- text (contested by …)
    <!-- key:… -->``: still current, with what disputes it. A contested item a sure correction
    reaches is struck. An item a human edited, or one already struck, is left as it is. Returns
    the new text and the regions changed."""
    contested = contested or {}
    touched: list[str] = []
    for name in [r.name for r in find_regions(text)]:
        if not (name.startswith(TOPIC_PREFIX) or name.startswith(PROMOTED_PREFIX)):
            continue
        # read from the text as struck so far: a struck item is longer, and the offsets of the
        # regions after it move (reading them at the old offsets cut across their fences)
        body = read_region(text, name) or ""
        lines = body.split("\n")
        changed = False
        for i, line in enumerate(lines):
            m = _KEY_RE.search(line)
            key = m.group(1) if m else ""
            if not m or (key not in struck and key not in contested) or edited_by_human(line, written):
                continue
            head = _ITEM_HEAD.match(line)
            if not head or not head.group("body").strip() or head.group("body").startswith("~~"):
                continue
            body = head.group("body").strip()
            disputed = without_contested_mark(body)
            if key in struck:
                body = disputed if disputed is not None else body
                pointer = " ".join(struck[key].split())
                lines[i] = f"{head.group('lead')}~~{body}~~ (superseded by {pointer}){head.group('tail')}"
            elif disputed is None:
                pointer = " ".join(contested[key].split())
                lines[i] = f"{head.group('lead')}{body} (contested by {pointer}){head.group('tail')}"
            else:
                continue
            changed = True
        if changed:
            text = replace_region(text, name, "\n".join(lines))
            touched.append(name)
    return text, touched


def has_human_text(line: str) -> bool:
    """An item line a human wrote on: sticky, or text after its key marker."""
    m = _KEY_RE.search(line)
    return is_sticky_line(line) or bool(m and line[m.end() :].strip())


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


@dataclass
class Compaction:
    budget: int
    before_bytes: int
    after_bytes: int = 0
    merged_regions: list[str] = field(default_factory=list)
    evicted: list[dict[str, str]] = field(default_factory=list)
    skipped_sticky: list[str] = field(default_factory=list)
    skipped_human: list[str] = field(default_factory=list)  # items and sections kept for a human's edit
    over_budget: bool = False
    note: str = ""
    evict_cap: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.merged_regions or self.evicted)

    def touched_regions(self) -> list[str]:
        if not self.changed:
            return []
        names = [*self.merged_regions, *(e.get("section", COMPACTED) for e in self.evicted)]
        if any(n.startswith(PROMOTED_PREFIX) and n != COMPACTED for n in self.merged_regions):
            names.append(COMPACTED)
        return list(dict.fromkeys(names))

    def as_json(self) -> dict:
        return {
            "budget": self.budget,
            "before_bytes": self.before_bytes,
            "after_bytes": self.after_bytes,
            "merged_regions": self.merged_regions,
            "evicted": self.evicted,
            "skipped_sticky": self.skipped_sticky,
            "skipped_human": self.skipped_human,
            "over_budget": self.over_budget,
            "evict_cap": self.evict_cap,
            "note": self.note,
        }


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _item_lines(body: str) -> list[str]:
    return [ln for ln in body.split("\n") if ln.strip() and not ln.lstrip().startswith("#")]


def _compact_line(line: str) -> str:
    return _SRC_RE.sub(r"\1", line)


def _replace_span(text: str, region: Region, name: str, body: str) -> str:
    """Replace a whole region (fences included) with region ``name`` holding ``body``."""
    if body and not body.endswith("\n"):
        body += "\n"
    block = f"<!-- lifelong:{name}:start -->\n{body}<!-- lifelong:{name}:end -->\n"
    return text[: region.start] + block + text[region.end :]


def _evictable(
    text: str, keep_keys: set[str], written: dict[str, str] | None = None
) -> list[tuple[str, str, int, str]]:
    """(promoted-on date, region, line index in the body, key) of every item compaction may evict:
    managed, not sticky, no human text on its line, its text as a run wrote it (``written``
    hashes), not promoted by this run. Oldest first; the compacted region (items with no date)
    before everything else."""
    written = written or {}
    out = []
    for region in find_regions(text):
        if not (region.name.startswith(TOPIC_PREFIX) or region.name == COMPACTED):
            continue
        body = region.body(text)
        if region_has_sticky(body) and region.name == COMPACTED:
            pass
        for i, line in enumerate(body.split("\n")):
            m = _KEY_RE.search(line)
            if not m or line.lstrip().startswith("#") or has_human_text(line) or m.group(1) in keep_keys:
                continue
            if edited_by_human(line, written):
                continue  # a human changed its value: kept
            on = _ON_RE.search(line)
            out.append((on.group(1) if on else "", region.name, i, m.group(1)))
    out.sort()
    return out


def compact(
    text: str,
    budget: int,
    *,
    keep: set[str],
    keep_keys: set[str] | None = None,
    max_evict_fraction: float = 0.1,
    written: dict[str, str] | None = None,
) -> tuple[str, Compaction]:
    """Bring ``text`` within ``budget`` bytes, touching only managed promoted sections and never
    the current run's (``keep`` regions, ``keep_keys`` items). Merging first: old per-night
    ``promoted-<run>`` regions (from before topic sections) fold into one compacted region, then
    item citations are dropped, oldest first (the keys stay, the candidates keep their sources);
    only then the oldest items are evicted, at most ``max_evict_fraction`` of the items in one
    run (at least one). What a human edited inside a fence (:func:`human_edits`, given the hashes
    runs ``written``) is never merged, rewritten or evicted. Pure."""
    keep_keys = keep_keys or set()
    written = written or {}
    report = Compaction(budget=budget, before_bytes=_size(text))
    edited = human_edits(text, written)
    report.skipped_human = sorted({e["key"] or e["section"] for e in edited})
    edited_sections = {e["section"] for e in edited}
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
        if region.name in edited_sections:
            continue  # a human wrote inside it: merging would rewrite their lines
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
    # drop citations from topic items, oldest first (merging what is written, evicting nothing)
    if _size(text) > budget:
        for _on, name, index, _key in _evictable(text, keep_keys, written):
            if _size(text) <= budget:
                break
            if not name.startswith(TOPIC_PREFIX):
                continue
            body = read_region(text, name) or ""
            lines = body.split("\n")
            shorter = _compact_line(lines[index])
            if shorter != lines[index]:
                lines[index] = shorter
                text = replace_region(text, name, "\n".join(lines))
                if name not in report.merged_regions:
                    report.merged_regions.append(name)
    if _size(text) > budget:
        total = len(existing_keys(text))
        cap = max(1, int(max_evict_fraction * total))
        for _on, name, _index, key in _evictable(text, keep_keys, written):
            if _size(text) <= budget or len(report.evicted) >= cap:
                break
            body = read_region(text, name) or ""
            lines = body.split("\n")
            for i, line in enumerate(lines):
                m = _KEY_RE.search(line)
                if m and m.group(1) == key:
                    report.evicted.append(
                        {
                            "key": key,
                            "text": clean_item_text(_KEY_RE.sub("", line).lstrip("-*+ ")),
                            "section": name,
                        }
                    )
                    del lines[i]
                    text = replace_region(text, name, "\n".join(lines))
                    break
        report.evict_cap = cap
    report.after_bytes = _size(text)
    if report.after_bytes > budget:
        report.over_budget = True
        limit = (
            f"; eviction stopped at this run's cap of {report.evict_cap} item(s)"
            if report.evict_cap and len(report.evicted) >= report.evict_cap
            else ""
        )
        report.note = (
            f"MEMORY.md is {report.after_bytes} bytes, over the {budget}-byte budget: only managed, "
            f"non-sticky promoted items without human text may be compacted{limit} (human text is never touched)"
        )
    elif report.changed:
        report.note = (
            f"compacted MEMORY.md from {report.before_bytes} to {report.after_bytes} bytes "
            f"(budget {budget}): merged {len(report.merged_regions)} section(s)"
            + (f", evicted {len(report.evicted)} oldest item(s)" if report.evicted else "")
        )
    return text, report
