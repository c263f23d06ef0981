"""Daily notes into snippets, and the text measures consolidation uses (pure).

A *snippet* is one list item (nested items are their own snippets), one paragraph of a daily
note (a paragraph written a statement per line: one line, :func:`lifelong.markdown.line_groups`)
or one row of a table (its cells labelled by the header: "Café Origem — what: green beans;
contact: Leonor"), with its heading path and exact 1-based line range. A paragraph or item longer
than ``max_chars`` is split into sentences. Never staged: code blocks, headings, text inside a
``<!-- lifelong:...:start/end -->`` managed region, any line carrying one of the suite's markers
(``<!-- key:``, ``<!-- lifelong:``) and lines that look like consolidation report output
("Candidate: ... confidence ... evidence", pasted ``Source: path#Lx-Ly`` citations) — the suite
never feeds on its own output (openclaw/openclaw issue 67580).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass

from lifelong.errors import InputError
from lifelong.markdown import line_groups, strip_comments, title_line
from lifelong.text import STOPWORDS, content_tokens, jaccard, stem, without_titles, words
from lifelong.workspace import daily_date, find_regions, split_frontmatter

__all__ = ["STOPWORDS", "content_tokens", "jaccard", "stem", "words"]  # re-exported for REM and deep

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM_RE = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])(\s+|$)(.*)$")
_CHECKBOX_RE = re.compile(r"^\[[ xX]\]\s+")
# a callout's first line (Obsidian, GitHub alerts): "> [!note] Tobi", "> [!WARNING]- Choir moves"
_CALLOUT_RE = re.compile(r"^\[!([\w-]+)\][+-]?\s*(.*)$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE_RE = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_MARKER_RE = re.compile(r"<!--\s*(key:|lifelong:)|lifelong:promoted-|lifelong:dream-", re.I)
_JUNK_RES = (
    # "Candidate: ... confidence 0.8 ... evidence ..." report lines (openclaw/openclaw#67580)
    re.compile(r"\bcandidates?\b\s*[:#=(\[-].*\b(confidence|evidence|score)\b", re.I),
    re.compile(r"\bconfidence\b\s*[:=]?\s*\d*\.?\d+.*\bevidence\b", re.I),
    re.compile(r"\bevidence\b\s*[:=].*\bconfidence\b", re.I),
    # pasted search citations and dry-run score lines of this suite
    re.compile(r"^\s*(\d+\.\s*)?(\[\d\.\d+\]\s*)?Source:\s*\S+#L\d+", re.I),
    re.compile(r"\bS\s*=\s*[01]\.\d+\b.*\b(relevance|recalls?|gates?)\b", re.I),
    re.compile(r"\brelevance\b\s*[:=]?\s*[01]?\.\d+.*\bfrequency\b\s*[:=]?\s*[01]?\.\d+", re.I),
    # this suite's CLI output pasted into a note: `lifelong dream` (score lines, component lists,
    # keys with citations, phase summaries, explain), `lifelong search` (ranked citations, legs)
    re.compile(r"\bS\s*=\s*[01]\.\d{3}\b"),
    re.compile(
        r"\b(rel|freq|div|rec|cons|rich|boost)\s+\d\.\d\d\b.*\b(rel|freq|div|rec|cons|rich|boost)\s+\d\.\d\d\b"
    ),
    re.compile(r"\bkey\s+[0-9a-f]{6,64}\b.*\bSource:", re.I),
    re.compile(r"\bSource:\s*\S+#L\d+(-L\d+)?", re.I),
    re.compile(r"\[\d\.\d{3}\]\s*(Source:|\S+#L\d+|\(\w+\)|'|\")"),
    re.compile(r"\bcos\s+(\d\.\d+|-)\s+bm25\b"),
    re.compile(r"\bdream\s+\d{8}-\d{6}-[0-9a-f]{4}\b"),
    re.compile(r"\b(light|deep|rem):\s+(\d+ dailies|\d+ scored|themes\b)", re.I),
    re.compile(r"\bfails:\s*(score|recalls|unique queries)\b", re.I),
    re.compile(r"\b(recalled|written)\s+\d{4}-\d\d-\d\d\s+(\[\d\.\d+\]|Source:)"),
    re.compile(r"^\s*[0-9a-f]{6,64}\s+S=\d"),
    re.compile(r"\b(status|key)\s+(staged|promoted|dropped|blocked|evicted|superseded|expired)\b"),
    re.compile(r"\bpassed the gates\b|\bwould be promoted\b|\bnear misses\b", re.I),
    re.compile(r"^\s*answered by (hybrid search|the concept index)", re.I),
)
GENERIC_SECTIONS = frozenset(
    """
    work home notes note log journal today personal family misc miscellaneous ideas idea tasks task todo
    todos to-do meetings meeting errands health thoughts random diary summary inbox morning afternoon
    evening night weekend done doing next later reading links calls people projects project admin team
    general other update updates status standup weekly daily monthly
    """.split()
)


def normalise(text: str) -> str:
    """Lower case, whitespace collapsed: the form keys are computed on."""
    return re.sub(r"\s+", " ", text.strip().lower())


def text_key(text: str) -> str:
    """The stable key of a snippet text (12 hex digits of sha256 of the normalised text)."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:12]


_LABEL_RE = re.compile(r"^\s*(?:[A-Za-z][\w-]{0,15}:\s+){1,2}")


def similarity_tokens(text: str) -> frozenset[str]:
    """Content tokens without a leading label ("Reminder:", "Note:", "Reminder: Correction:"):
    what near-duplicate detection compares, so a note restated with a label is the same note."""
    return content_tokens(_LABEL_RE.sub("", text))


def carries_marker(text: str) -> bool:
    """True for text carrying one of the suite's own markers (promoted items, managed fences)."""
    return bool(_MARKER_RE.search(text))


def is_report_junk(text: str) -> bool:
    """True for lines that look like consolidation output rather than a note."""
    return any(r.search(text) for r in _JUNK_RES)


@dataclass(frozen=True)
class Snippet:
    """One note line or paragraph. ``text`` carries the subject it was written under when the
    line itself does not name it ("Emma Rees: prefers short messages after work"); ``context`` is
    that subject (a parent list item or a heading), empty when the line stands alone."""

    path: str
    day: dt.date | None
    start_line: int
    end_line: int
    heading: str
    text: str
    context: str = ""

    @property
    def key(self) -> str:
        return text_key(self.text)

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def overlaps(self, start: int, end: int) -> bool:
        return self.start_line <= end and start <= self.end_line


@dataclass
class ParseStats:
    snippets: int = 0
    skipped_marker: int = 0
    skipped_junk: int = 0
    skipped_short: int = 0
    skipped_managed_lines: int = 0


_DATE_HEADING_RE = re.compile(r"^\W*(\d{4}-\d\d-\d\d|\d{1,2}[./]\d{1,2}([./]\d{2,4})?)\b")


def subject_heading(heading: str) -> str:
    """The heading text when it names what the lines under it are about (a person, a company, a
    project), empty for generic sections ("Work", "Notes", a date)."""
    title = re.sub(r"[*_`#]", "", heading).strip().rstrip(":").strip()
    if not title or _DATE_HEADING_RE.match(title) or len(title) > 60:
        return ""
    found = words(title)
    if not found or len(found) > 6 or all(w in GENERIC_SECTIONS or w in STOPWORDS for w in found):
        return ""
    return title


def with_context(context: str, text: str) -> str:
    """``text`` prefixed with its subject unless it already names any of it."""
    context = context.strip().rstrip(":").strip()
    if not context:
        return text
    own = content_tokens(text)
    ctx_tokens = content_tokens(without_titles(context))  # "Dr. Yilmaz" is not named by "doctor"
    if not ctx_tokens or ctx_tokens & own:
        return text  # the line already names (part of) its subject
    return f"{context}: {text}"


def _is_label(text: str) -> bool:
    """A list item that introduces nested items rather than saying something itself."""
    return text.rstrip().endswith(":") or (len(text) <= 60 and not re.search(r"[.!?;]\s*$", text))


def table_cells(row: str) -> list[str]:
    """The cells of a table row written with outer pipes (``| a | b |``); ``\\|`` is a literal pipe."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def table_row_text(header: list[str], cells: list[str]) -> str:
    """A body row as one statement: its first cell, then the others labelled by their column
    ("Café Origem — what: green beans; contact: Leonor"). A column without a header, or one
    whose header the cell repeats, is the cell alone; empty cells are left out."""
    first = cells[0] if cells else ""
    rest = []
    for i, cell in enumerate(cells[1:], start=1):
        label = header[i] if i < len(header) else ""
        if cell:
            rest.append(cell if not label or label.lower() == cell.lower() else f"{label}: {cell}")
    if not first:
        return "; ".join(rest)
    return f"{first} — {'; '.join(rest)}" if rest else first


def _managed_lines(text: str) -> set[int]:
    """1-based line numbers inside (or fencing) managed regions. Unbalanced fences: only the
    fence lines themselves are skipped (the text is still the user's)."""
    try:
        regions = find_regions(text)
    except InputError:
        return {i + 1 for i, line in enumerate(text.split("\n")) if carries_marker(line)}
    lines: set[int] = set()
    for r in regions:
        first = text.count("\n", 0, r.start) + 1
        last = text.count("\n", 0, max(r.start, r.end - 1)) + 1
        lines.update(range(first, last + 1))
    return lines


def _sentences(parts: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Split the joined text of (line, text) parts into sentences with their line ranges."""
    joined = ""
    starts: list[tuple[int, int]] = []  # (offset, line)
    for line, text in parts:
        if joined:
            joined += " "
        starts.append((len(joined), line))
        joined += text
    out = []
    pos = 0
    pieces = _SENTENCE_RE.split(joined)
    for piece in pieces:
        begin = joined.find(piece, pos)
        end = begin + len(piece)
        pos = end
        first = max((ln for off, ln in starts if off <= begin), default=starts[0][1])
        last = max((ln for off, ln in starts if off < end), default=first)
        out.append((first, last, piece.strip()))
    return out


def parse_snippets(
    text: str,
    path: str,
    *,
    min_chars: int = 8,
    max_chars: int = 400,
    stats: ParseStats | None = None,
) -> list[Snippet]:
    """Snippets of one daily note (pure): :class:`DailyParser` reads it line by line."""
    stats = stats if stats is not None else ParseStats()
    return DailyParser(path, min_chars=min_chars, max_chars=max_chars, stats=stats).parse(text)


# ---------------------------------------------------------------------------------------------
# the parser's steps
#
# Why not ``lifelong.markdown.parse_blocks``: on the dailies of every written month (21 months,
# 597 dailies) each snippet lies inside one of its text blocks, but notes are not CommonMark, and
# where they part the line reader keeps what a note-taker means: a line indented four spaces
# after a blank line is a note, not a code block; "- Emma Rees" / " - prefers short messages"
# (one space) is a subject and its line, not two items; a line wrapped in ``<div>`` is still a
# note. The blocks it does share with the core are grouped with the core's rules
# (:func:`lifelong.markdown.line_groups`, :func:`lifelong.markdown.title_line`).


@dataclass
class _Item:
    """An open list item: its indentation, its text once read, whether it was junk (its nested
    items are too), and where its snippets are in the parser's output."""

    indent: int
    text: str = ""
    junk: bool = False
    first: int | None = None
    last: int | None = None


@dataclass
class _Table:
    """The table being read: its header cells, whether its rule row was seen."""

    header: list[str]
    rule: bool = False


def _clean_block(parts: list[tuple[int, str]], kind: str, stats: ParseStats) -> list[tuple[int, str]]:
    """A block's lines without comments and empty lines; an item without its checkbox; a
    paragraph without the day's title opening it ("Tue 8 Sep — lab log" states no fact)."""
    cleaned = [(ln, strip_comments(t).strip()) for ln, t in parts]
    cleaned = [(ln, t) for ln, t in cleaned if t]
    if not cleaned:
        return []
    if kind == "item":
        cleaned[0] = (cleaned[0][0], _CHECKBOX_RE.sub("", cleaned[0][1]))
    elif kind == "paragraph" and title_line(cleaned[0][1]):
        cleaned = cleaned[1:]
        stats.skipped_short += 1
    return cleaned


def _pieces(cleaned: list[tuple[int, str]], kind: str, max_chars: int) -> list[tuple[int, int, str]]:
    """A block as (first line, last line, text) pieces: a paragraph written a statement per line
    is a piece per line group (:func:`line_groups`), and a piece longer than ``max_chars`` is
    split into sentences."""
    groups = line_groups([t for _, t in cleaned]) if kind == "paragraph" else [(0, len(cleaned) - 1)]
    pieces = []
    for i, j in groups:
        part = cleaned[i : j + 1]
        text = " ".join(t for _, t in part)
        pieces.extend([(part[0][0], part[-1][0], text)] if len(text) <= max_chars else _sentences(part))
    return pieces


def _fit(piece: str, max_chars: int) -> str:
    """Whitespace collapsed; cut at a word before ``max_chars`` with an ellipsis when longer."""
    piece = re.sub(r"\s+", " ", piece).strip()
    if len(piece) > max_chars:
        cut = piece[: max_chars - 1]
        piece = cut[: cut.rfind(" ")] if " " in cut[40:] else cut
        piece = piece.rstrip() + "…"
    return piece


class DailyParser:
    """One daily read line by line into snippets. A line closes the block being read (a list
    item, a paragraph, a table row, a callout's title) or extends it; a closed block becomes
    snippets (:meth:`flush`) under the subject of its context (:meth:`context_of`)."""

    def __init__(self, path: str, *, min_chars: int, max_chars: int, stats: ParseStats):
        self.path = path
        self.day = daily_date(path)
        self.min_chars = min_chars
        self.max_chars = max_chars
        self.stats = stats
        self.headings: list[tuple[int, str]] = []
        self.out: list[Snippet | None] = []  # None: a label item's snippet taken back
        self.block: list[tuple[int, str]] = []
        self.block_kind = ""  # item | paragraph | row
        self.in_code = False
        self.items: list[_Item] = []  # the open list items, outermost first
        self.current: _Item | None = None  # the item last opened
        self.table: _Table | None = None
        self.callout: str | None = None  # inside a callout: its title's subject ("" when it names none)
        self.callout_title: tuple[int, str] | None = None  # a callout's title while no line follows it

    def parse(self, text: str) -> list[Snippet]:
        try:
            _, _, offset = split_frontmatter(text)
        except InputError:
            offset = 0
        managed = _managed_lines(text)
        self.stats.skipped_managed_lines += len(managed)
        for index, line in enumerate(text.split("\n")):
            n = index + 1
            if n <= offset:
                continue
            if not line.lstrip().startswith("|"):
                self.table = None
            if not line.lstrip().startswith(">"):
                self.end_callout()
            if n in managed:
                self.flush()
                continue
            self.read_line(n, line)
        self.end_callout()
        self.flush()
        return [s for s in self.out if s is not None]

    def read_line(self, n: int, line: str) -> None:
        if _FENCE_RE.match(line):
            self.flush()
            self.in_code = not self.in_code
            return
        if self.in_code:
            return
        stripped = line.strip()
        if not stripped:
            self.flush()
            return
        m = _HEADING_RE.match(line)
        if m and len(line) - len(line.lstrip()) < 4:
            self.flush()
            self.items.clear()
            level = len(m.group(1))
            self.headings = [h for h in self.headings if h[0] < level] + [(level, m.group(2).strip())]
            return
        if stripped.startswith("|"):
            self.flush()
            self.table_line(n, stripped)
            return
        if re.fullmatch(r"[-*_]{3,}", stripped.replace(" ", "")):
            self.flush()
            return
        if re.fullmatch(r"<!--.*-->", stripped) and not carries_marker(stripped):
            self.flush()
            return
        m = _ITEM_RE.match(line)
        if m:
            self.flush()
            self.open_item(n, len(m.group(1).expandtabs(4)), m.group(4))
            return
        if stripped.startswith(">"):
            stripped = stripped.lstrip(">").strip()
            if not stripped:
                self.flush()
                return
            m = _CALLOUT_RE.match(stripped)
            if m and self.block_kind != "item":
                self.open_callout(n, m.group(2))
                return
            self.callout_title = None
        if not self.block:
            self.block_kind = "paragraph"
            if len(line) - len(line.lstrip()) == 0:
                self.items.clear()
        self.block.append((n, stripped))

    def table_line(self, n: int, stripped: str) -> None:
        """A table: the first row is the header, a rule row follows it, each later row is a
        statement of its own ("| Café Origem | green beans | Leonor |")."""
        if self.table is None:
            self.table = _Table(table_cells(stripped))
        elif not self.table.rule and _TABLE_RULE_RE.match(stripped):
            self.table.rule = True
        elif self.table.rule:
            row = table_row_text(self.table.header, table_cells(stripped))
            if row:
                self.block, self.block_kind = [(n, row)], "row"
                self.flush()

    def open_item(self, n: int, indent: int, text: str) -> None:
        """A list item opens: the items it is not nested in close, and a label item it is nested
        in ("- Emma Rees") is its subject, not a note: the label's snippets are taken back."""
        while self.items and self.items[-1].indent >= indent:
            self.items.pop()
        if self.items and self.items[-1].first is not None and _is_label(self.items[-1].text):
            parent = self.items[-1]
            for i in range(parent.first or 0, parent.last or 0):
                if self.out[i] is not None:
                    self.out[i] = None
                    self.stats.snippets -= 1
            parent.first = None
        self.current = _Item(indent)
        self.items.append(self.current)
        self.block_kind = "item"
        self.block = [(n, text)]

    def open_callout(self, n: int, title: str) -> None:
        """ "> [!note] Tobi": the marker is markup and the title is the subject of the callout's
        lines, like a heading's ("Tobi: ..."), not a statement of its own."""
        self.flush()
        self.end_callout()
        self.callout = subject_heading(title)
        self.callout_title = (n, title.strip()) if title.strip() else None

    def end_callout(self) -> None:
        """A callout ends; one that was only a title ("> [!tip] Kasia's number is 0113 496 0000")
        says its title."""
        if self.callout is None:
            return
        self.flush()  # its last lines, under its title
        if self.callout_title is not None:
            self.callout = None
            self.block, self.block_kind = [self.callout_title], "paragraph"
            self.flush()
        self.callout, self.callout_title = None, None

    def heading_path(self) -> str:
        return " > ".join(h[1] for h in self.headings)

    def context_of(self, kind: str) -> str:
        """The subject of a block: its parent label items (an item's), the callout it is in, or
        the nearest heading below the title that names something."""
        if kind == "item" and len(self.items) > 1:
            parents = [it.text for it in self.items[:-1] if it.text][-2:]
            if parents and all(_is_label(p) for p in parents):
                return ": ".join(p.rstrip(":").strip() for p in parents)
        if self.callout:
            return self.callout
        for level, title in reversed(self.headings):
            if level >= 2:
                return subject_heading(title)
        return ""

    def flush(self) -> None:
        """The block read so far becomes snippets (none when it carries a marker, is report
        output, or is an item nested in junk)."""
        if not self.block:
            return
        parts, kind = self.block, self.block_kind
        self.block, self.block_kind = [], ""
        stats = self.stats
        entry = self.current if kind == "item" else None
        if carries_marker(" ".join(t for _, t in parts)):
            stats.skipped_marker += 1
            if entry is not None:
                entry.junk = True
            return
        cleaned = _clean_block(parts, kind, stats)
        if not cleaned:
            return
        joined = " ".join(t for _, t in cleaned)
        if entry is not None:
            entry.text = re.sub(r"\s+", " ", joined).strip()
        if is_report_junk(joined) or (entry is not None and any(it.junk for it in self.items)):
            stats.skipped_junk += 1
            if entry is not None:
                entry.junk = True
            return
        context = self.context_of(kind)
        if entry is not None:
            entry.first = len(self.out)
        for first, last, piece in _pieces(cleaned, kind, self.max_chars):
            piece = _fit(piece, self.max_chars)
            if len(piece) < self.min_chars or not re.search(r"[^\W\d_]", piece):
                stats.skipped_short += 1
                continue
            if is_report_junk(piece):
                stats.skipped_junk += 1
                continue
            text = with_context(context, piece)
            self.out.append(
                Snippet(
                    self.path,
                    self.day,
                    first,
                    last,
                    self.heading_path(),
                    text,
                    context if text != piece else "",
                )
            )
            stats.snippets += 1
        if entry is not None:
            entry.last = len(self.out)
