"""The message a retrieval unit is a fragment of (pure).

Units are small (a sentence of a message written in paragraphs, a line of a paragraph written a
statement per line, a list item), and a search that returns them one by one returns several
fragments of one chat message apart, each without the rest. A *message* is what a reader would
quote whole:

- a chat turn: from a line marking its speaker (``**User:** ...``, ``Caroline: ...``, a chat
  role always, a name in a conversation: the caller says which lines open one) through the
  paragraphs, lists and tables after it, blank lines included, until the next mark or heading;
- otherwise a paragraph (lines up to a blank line), a top-level list item with the lines under
  it, a table row, or a code fence.

:class:`Messages` finds them in the lines a search already read (its candidate chunks: exact
source lines), so a message that runs past those lines ends where they end.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_ITEM = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s")  # a top-level list item (not indented)
_TABLE_ROW = re.compile(r"^\s*\|")
_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")

# per line: True when it opens a speaker's turn, False when it is marked but opens none (a
# label such as "**On call:**", a heading), None when it is not marked
Opens = Callable[[list[str]], list[bool | None]]


def message_spans(
    lines: Sequence[str], first_line: int, opens: Sequence[bool | None]
) -> list[tuple[int, int]]:
    """The messages of consecutive source ``lines`` (the first is line ``first_line``), as
    (start, end) line numbers, blank lines trimmed from their ends; headings and blank lines
    between messages belong to none."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    last = 0  # the last non-blank line of the open message
    turn = False  # the open message is a speaker's turn: blank lines do not end it
    fence = False

    def close() -> None:
        nonlocal start
        if start is not None:
            out.append((start, last))
        start = None

    for i, line in enumerate(lines):
        n = first_line + i
        kind = _kind(line)
        if fence:
            last = n
            if kind == "fence":
                fence = False
            continue
        if kind == "blank":
            if not turn:
                close()
            continue
        if kind == "heading":
            close()
            turn = False
            continue
        if opens[i] is True:
            close()
            start, last, turn = n, n, True
            continue
        if opens[i] is False or (not turn and kind == "item"):
            close()
            start, last, turn = n, n, False
        elif start is None:
            start, last, turn = n, n, False
        else:
            last = n
        if kind == "fence":
            fence = True
    close()
    return out


@lru_cache(maxsize=200_000)
def _kind(line: str) -> str:
    """blank, heading, item (a top-level list item or a table row), fence, or text (cached)."""
    if not line.strip():
        return "blank"
    if _HEADING.match(line):
        return "heading"
    if _ITEM.match(line) or _TABLE_ROW.match(line):
        return "item"
    if _FENCE.match(line):
        return "fence"
    return "text"


class Messages:
    """The messages of the lines a search read: ``chunks`` are (path, start_line, text) of exact
    source lines (chunks may overlap); ``opens`` marks the lines opening a turn, for a run of
    consecutive lines. Each path's messages are found on first use."""

    def __init__(self, chunks: Iterable[tuple[str, int, str]], opens: Opens):
        self._chunks: dict[str, list[tuple[int, str]]] = {}
        for path, start, text in chunks:
            self._chunks.setdefault(path, []).append((start, text))
        self._lines: dict[str, dict[int, str]] = {}
        self._opens = opens
        self._spans: dict[str, list[tuple[int, int]]] = {}

    def lines(self, path: str) -> dict[int, str]:
        """Line number -> text, of the lines of ``path`` read."""
        if path not in self._lines:
            known: dict[int, str] = {}
            for start, text in self._chunks.get(path, ()):
                for i, line in enumerate(text.split("\n")):
                    known.setdefault(start + i, line)
            self._lines[path] = known
        return self._lines[path]

    def spans(self, path: str) -> list[tuple[int, int]]:
        """The messages of the lines of ``path`` read, in line order."""
        if path not in self._spans:
            known = self.lines(path)
            spans: list[tuple[int, int]] = []
            run: list[str] = []
            first = 0
            for n in sorted(known):
                if run and n != first + len(run):
                    spans += message_spans(run, first, self._opens(run))
                    run = []
                if not run:
                    first = n
                run.append(known[n])
            if run:
                spans += message_spans(run, first, self._opens(run))
            self._spans[path] = spans
        return self._spans[path]

    def of(self, path: str, start: int, end: int) -> tuple[int, int] | None:
        """The message holding lines ``start``-``end`` of ``path``, or None (lines not read, or a
        unit across two messages)."""
        for a, b in self.spans(path):
            if a <= start and end <= b:
                return a, b
            if a > start:
                break
        return None

    def text(self, path: str, start: int, end: int) -> str:
        """Lines ``start``-``end`` of ``path`` as read."""
        known = self.lines(path)
        return "\n".join(known.get(n, "") for n in range(start, end + 1))

    def joined(self, path: str, ranges: Sequence[tuple[int, int]]) -> str:
        """The lines from the first of ``ranges`` to the last (sorted, not overlapping), each run
        of lines between them that holds text written as one line "…"."""
        known = self.lines(path)
        out: list[str] = []
        prev = None
        for a, b in ranges:
            if prev is not None and a > prev + 1:
                gap = [known.get(n, "") for n in range(prev + 1, a)]
                out += ["…"] if any(g.strip() for g in gap) else gap
            out += [known.get(n, "") for n in range(max(a, (prev or 0) + 1), b + 1)]
            prev = b if prev is None else max(prev, b)
        return "\n".join(out)
