"""Markdown-aware chunking (pure).

A document becomes *blocks* (a heading, a paragraph, one top-level list item with everything
nested under it, a code fence, a table, a quote) with exact 1-based line ranges, from the core's
markdown parser (:mod:`lifelong.markdown`). Blocks are packed greedily into chunks of about ``target_tokens``;
each new chunk starts with the trailing blocks of the previous one up to ``overlap_tokens``.
A new chunk starts at a heading once the current one holds a quarter of the target, so chunks
follow sections. A block is kept whole up to twice the target; only a block larger than that
(a huge paragraph or code block) is ever split, and then on line boundaries. A chunk's text is the
exact source lines, so line numbers are exact; the one exception is a single line longer than the
target (a 36k-character paragraph on one line), which becomes several chunks of that line, each a
consecutive slice of it (cut after a sentence or at a space, :func:`line_pieces`), so no chunk or
unit exceeds its bound. Sizes are :func:`lifelong.markdown.estimate_tokens`, which counts Chinese
and Japanese by character, not at English rates.

Search scores *units* (:func:`retrieval_units`): the blocks of a chunk other than headings (a
turn, a list item, a paragraph; a paragraph written a statement per line is a unit per line,
:func:`lifelong.markdown.line_groups`, and a table a unit per body row), a block larger than
``unit_tokens`` split on line boundaries, each clipped to its chunk's line range. A unit is what a search result returns; its chunk is its
context (candidate generation, and part of its score). A unit of two sentences or more is also
embedded sentence by sentence (:meth:`Span.sentence_texts`), so one matching sentence is not
diluted by the rest of its turn or paragraph.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from lifelong.markdown import (
    Block,
    estimate_tokens,
    line_groups,
    parse_blocks,
    split_lines,
    strip_comments,
    title_line,
)

__all__ = ["Block", "Chunk", "Unit", "chunk_markdown", "chunk_units", "estimate_tokens", "parse_blocks"]

SKIPPED_UNIT_KINDS = ("heading", "hr")
# an HTML block of comments only (the fences of the suite's managed sections, an editor's note
# markers) says nothing a search could want: it is no retrieval unit
_ONLY_COMMENTS = re.compile(r"\s*(?:<!--.*?-->\s*)+", re.S)

# a line's list marker, its bracketed tag and who speaks (``- [D1:3] Caroline: ...``)
SPEAKER_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[^\]\n]{1,40}\]\s*)?([A-Z][\w.'’ -]{0,40}?):\s")
# a chat transcript's roles, however a line marks them ("User:", "**user:**", "- [10:32] Human:")
ROLE_RE = re.compile(
    r"^\s*(?:[-*+>]\s+)?(?:\[[^\]\n]{1,40}\]\s*)?(?:\*\*|__|\*|_)?"
    r"(user|human|me|assistant|ai|bot|system)(?:\*\*|__|\*|_)?\s*:(?:\*\*|__|\*|_)?\s",
    re.IGNORECASE,
)
_LINE_MARK = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:\[[ xX]\]\s+)?")
# a sentence ends at . ! ? followed by a space and then a capital, a digit, a quote or a bracket
# (checked in split_sentences), or at a CJK full stop; not after a short abbreviation ("Dr.
# Keller", "e.g. Rome", "J. Smith")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_OPENS_SENTENCE = frozenset("\"'“‘([¿¡")
_ABBREVIATIONS = frozenset("dr mr mrs ms prof st mt jr sr vs etc e.g i.e no fig approx ca".split())
MAX_SENTENCES = 24  # a unit's sentences embedded at most (a unit holds about 160 tokens)


@dataclass(frozen=True)
class Span:
    """Exact source lines under their heading path (what chunks and units have in common)."""

    start_line: int
    end_line: int
    text: str
    heading_path: tuple[str, ...]

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    def embedding_text(self) -> str:
        """What is embedded: the heading path gives a bare list item its context (HTML comments
        left out, :func:`lifelong.markdown.strip_comments`)."""
        text = strip_comments(self.text)
        return f"{self.heading}\n{text}" if self.heading_path else text

    def sentence_texts(self) -> list[str]:
        """:func:`sentence_texts` of this span."""
        return sentence_texts(self.heading, self.text)


def sentence_texts(heading: str, text: str) -> list[str]:
    """What is embedded for each sentence of a text of two sentences or more (nothing
    otherwise): the sentence under the heading path, with the speaker the first line names
    ("Melanie: Just got some new shoes, too!"), without list markers or tags."""
    text = strip_comments(text)
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return []
    m = SPEAKER_RE.match(text)
    who = f"{m.group(1)}: " if m else ""
    head = f"{heading}\n" if heading else ""
    return [f"{head}{who}{s}" for s in sentences[:MAX_SENTENCES]]


def split_sentences(text: str) -> list[str]:
    """The sentences of a block's text (pure): each line without its list marker, tag and
    speaker, cut after sentence ends; a piece without a letter, or of three ASCII characters or
    fewer ("Hi!"), is dropped."""
    out: list[str] = []
    for line in text.splitlines():
        m = SPEAKER_RE.match(line)
        mark = None if m else _LINE_MARK.match(line)  # matches every line (all of it optional)
        body = line[m.end() :] if m else line[mark.end() if mark else 0 :]
        start = 0
        for cut in _SENTENCE_END.finditer(body):
            nxt = body[cut.end() : cut.end() + 1]
            if not nxt or not (nxt.isupper() or nxt.isdigit() or nxt in _OPENS_SENTENCE or not nxt.isascii()):
                continue
            before = body[start : cut.start()].rsplit(None, 1)
            last = before[-1].rstrip(".").lower() if before else ""
            if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
                continue  # "Dr. Keller", "J. Smith"
            out.append(body[start : cut.start()].strip())
            start = cut.end()
        out.append(body[start:].strip())
    return [s for s in out if any(ch.isalpha() for ch in s) and (len(s) > 3 or not s.isascii())]


@dataclass(frozen=True)
class Chunk(Span):
    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


_BREAKS = (". ", "! ", "? ", "。", "！", "？", "; ", ", ", " ")


def line_pieces(line: str, max_tokens: int) -> list[str]:
    """Consecutive slices of ``line``, joined back exactly ``line``, each at most
    ``max_tokens`` (estimated): cut after the last sentence end in reach, else a clause mark or
    a space, else (a run without any) at a character count."""
    if estimate_tokens(line) <= max_tokens:
        return [line]
    out: list[str] = []
    rest = line
    while rest:
        # the longest prefix within the bound (four characters or more make a token), bisected
        hi = min(len(rest), 4 * max_tokens + 4)
        if hi == len(rest) and estimate_tokens(rest) <= max_tokens:
            out.append(rest)
            break
        lo = 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if estimate_tokens(rest[:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        cut = lo
        for mark in _BREAKS:
            at = rest.rfind(mark, 0, lo)
            if at > lo // 2:
                cut = at + len(mark)
                break
        out.append(rest[:cut])
        rest = rest[cut:]
    return out


def chunk_markdown(
    text: str,
    *,
    target_tokens: int = 400,
    overlap_tokens: int = 80,
    first_line: int = 1,
    body: str | None = None,
) -> list[Chunk]:
    """Chunk a markdown document. ``text`` is the whole file (for exact line text); ``body``
    and ``first_line`` let the caller skip frontmatter."""
    all_lines = split_lines(text)
    body_text = body if body is not None else text
    blocks = parse_blocks(body_text, first_line)

    def block_text(start: int, end: int) -> str:
        return "\n".join(all_lines[start - 1 : end])

    # split oversized blocks on line boundaries; a line longer than the target is a piece of its
    # own, chunked into slices below
    pieces: list[Block] = []
    long_lines: set[int] = set()
    for b in blocks:
        if estimate_tokens(block_text(b.start, b.end)) <= 2 * target_tokens and all(
            estimate_tokens(all_lines[ln - 1]) < target_tokens for ln in range(b.start, b.end + 1)
        ):
            pieces.append(b)
            continue
        cur = b.start
        acc = 0
        for ln in range(b.start, b.end + 1):
            t = estimate_tokens(all_lines[ln - 1]) + 1
            if t > target_tokens:
                if ln > cur:
                    pieces.append(Block(cur, ln - 1, b.kind, b.heading_path))
                pieces.append(Block(ln, ln, b.kind, b.heading_path))
                long_lines.add(ln)
                cur, acc = ln + 1, 0
                continue
            if acc and acc + t > target_tokens:
                pieces.append(Block(cur, ln - 1, b.kind, b.heading_path))
                cur, acc = ln, 0
            acc += t
        if cur <= b.end:
            pieces.append(Block(cur, b.end, b.kind, b.heading_path))

    chunks: list[Chunk] = []
    current: list[Block] = []
    size = 0

    def flush() -> None:
        if not current:
            return
        if all(b.kind == "heading" for b in current):
            return
        start, end = current[0].start, current[-1].end
        path = next((b.heading_path for b in current if b.kind != "heading"), current[0].heading_path)
        chunks.append(Chunk(start, end, block_text(start, end), path))

    for piece in pieces:
        if piece.start in long_lines:
            flush()
            current, size = [], 0
            chunks.extend(
                Chunk(piece.start, piece.start, part, piece.heading_path)
                for part in line_pieces(all_lines[piece.start - 1], target_tokens)
                if part.strip()
            )
            continue
        t = estimate_tokens(block_text(piece.start, piece.end))
        has_content = any(b.kind != "heading" for b in current)
        section_break = piece.kind == "heading" and size >= target_tokens / 4
        if current and has_content and (size + t > target_tokens or section_break):
            flush()
            # overlap: carry trailing non-heading blocks up to overlap_tokens
            carry: list[Block] = []
            carried = 0
            for prev in reversed(current):
                pt = estimate_tokens(block_text(prev.start, prev.end))
                if prev.kind == "heading" or carried + pt > overlap_tokens:
                    break
                carry.insert(0, prev)
                carried += pt
            if carry and carry[0].heading_path != piece.heading_path:
                carry = []  # do not drag text across a section boundary
            current, size = carry, carried
        current.append(piece)
        size += t
    flush()
    if not chunks and text.strip():
        nonblank = [n for n in range(first_line, len(all_lines) + 1) if all_lines[n - 1].strip()]
        if nonblank:
            chunks.append(Chunk(nonblank[0], nonblank[-1], block_text(nonblank[0], nonblank[-1]), ()))
    return chunks


@dataclass(frozen=True)
class Unit(Span):
    """One retrieval unit: exact source lines inside one chunk."""


def retrieval_units(
    text: str, *, unit_tokens: int = 160, first_line: int = 1, body: str | None = None
) -> list[Unit]:
    """The document's blocks without headings and rules (a paragraph written a statement per line:
    each such line or group of lines, :func:`lifelong.markdown.line_groups`; a table: each body
    row, its header left to the chunk's context), those above
    ``unit_tokens`` split on line boundaries, a single longer line into slices
    (:func:`line_pieces`)."""
    all_lines = split_lines(text)
    blocks = parse_blocks(body if body is not None else text, first_line)
    units: list[Unit] = []

    def add(start: int, end: int, path: tuple[str, ...]) -> None:
        while end > start and not all_lines[end - 1].strip():
            end -= 1
        if any(all_lines[n - 1].strip() for n in range(start, end + 1)):
            units.append(Unit(start, end, "\n".join(all_lines[start - 1 : end]), path))

    segments: list[tuple[int, int, tuple[str, ...]]] = []
    title: tuple[tuple[str, ...], str] | None = None  # a day's title line, under its heading path
    for b in blocks:
        if b.kind in SKIPPED_UNIT_KINDS:
            continue
        end = min(b.end, len(all_lines))
        if b.kind == "html_block" and _ONLY_COMMENTS.fullmatch("\n".join(all_lines[b.start - 1 : end])):
            continue
        path = b.heading_path
        if title is not None and title[0] == path:
            path = (*path, title[1])
        if b.kind == "paragraph":  # a line per statement: each its own unit
            lines = all_lines[b.start - 1 : end]
            groups = line_groups(lines)
            if title_line(lines[0]):
                # a day's title ("Tue 8 Sep — lab log") is the context of the statements under
                # it, as a heading is, not a statement: alone it would match any query about
                # the lab and tell the reader nothing
                title = (b.heading_path, lines[0].strip().strip("*_# ").strip())
                path = (*b.heading_path, title[1])
                groups = [(max(i, 1), j) for i, j in groups if j >= 1]
            segments.extend((b.start + i, b.start + j, path) for i, j in groups)
        elif b.kind == "table" and end > b.start + 1:  # a row per statement (the header is context)
            segments.extend((n, n, path) for n in range(b.start + 2, end + 1) if all_lines[n - 1].strip())
        else:
            segments.append((b.start, end, path))
    for start, end, path in segments:
        if estimate_tokens("\n".join(all_lines[start - 1 : end])) <= unit_tokens:
            add(start, end, path)
            continue
        cur, acc = start, 0
        for ln in range(start, end + 1):
            t = estimate_tokens(all_lines[ln - 1]) + 1
            if t > unit_tokens:
                if ln > cur:
                    add(cur, ln - 1, path)
                units.extend(
                    Unit(ln, ln, part, path)
                    for part in line_pieces(all_lines[ln - 1], unit_tokens)
                    if part.strip()
                )
                cur, acc = ln + 1, 0
                continue
            if acc and acc + t > unit_tokens:
                add(cur, ln - 1, path)
                cur, acc = ln, 0
            acc += t
        if cur <= end:
            add(cur, end, path)
    return units


def chunk_units(chunk: Chunk, units: list[Unit], all_lines: list[str], unit_tokens: int = 160) -> list[Unit]:
    """The units overlapping ``chunk``, clipped to its lines (a chunk with no unit, such as a
    lone code line the parser did not see as a block, is its own unit)."""
    out: list[Unit] = []
    line = all_lines[chunk.start_line - 1] if chunk.start_line == chunk.end_line else None
    if line is not None and chunk.text != line:
        # a slice of a long line: its units are slices of this slice
        return [
            Unit(chunk.start_line, chunk.end_line, part, chunk.heading_path)
            for part in line_pieces(chunk.text, unit_tokens)
            if part.strip()
        ] or [Unit(chunk.start_line, chunk.end_line, chunk.text, chunk.heading_path)]
    for u in units:
        if u.end_line < chunk.start_line or u.start_line > chunk.end_line:
            continue
        s, e = max(u.start_line, chunk.start_line), min(u.end_line, chunk.end_line)
        if (s, e) == (u.start_line, u.end_line):
            out.append(u)
        else:
            out.append(Unit(s, e, "\n".join(all_lines[s - 1 : e]), u.heading_path))
    return out or [Unit(chunk.start_line, chunk.end_line, chunk.text, chunk.heading_path)]
