"""Markdown documents as blocks with exact line ranges (pure): the one parser every plugin uses.

A document's *lines* are split at ``\\r\\n``, ``\\r`` or ``\\n`` (:func:`split_lines`); the same rule
numbers lines everywhere (chunks, snippets, ``memory_get``), so a file saved with old Mac line
endings or a stray carriage return numbers the same in all of them.

:func:`parse_blocks` uses markdown-it-py's token maps. A block is a heading, a paragraph, a code
fence, a table, a quote, an HTML block or a list item. By default a list item is a top-level item
with everything nested under it (what a chunk keeps together); with ``nested_items=True`` every
item at any depth is its own block, covering its own lines only, and carries the first lines of
its ancestor items in ``parents`` (what a fact under a parent bullet needs to make sense alone).
Every block carries its heading path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from .facts import MONTH_PATTERN, WEEKDAY_SHORT_FORMS, WEEKDAYS
from .lazy import LazyPattern

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@cache
def _parser() -> MarkdownIt:
    """markdown-it-py's CommonMark parser with tables, made on first use: a search over an index
    that is already up to date parses no markdown and need not import it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


_NEWLINE = re.compile(r"\r\n|\r|\n")
_UNSPACED = LazyPattern(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their terminators (``\\r\\n``, ``\\r`` or ``\\n``). A final
    terminator does not start another line."""
    lines = _NEWLINE.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def normalise_newlines(text: str) -> str:
    return _NEWLINE.sub("\n", text)


_COMMENT = re.compile(r"(`[^`\n]*`)|[ \t]*<!--.*?-->", re.S)  # a code span is kept whole


def strip_comments(text: str) -> str:
    """``text`` without its HTML comments (``<!-- ... -->``, on one line or several), as a
    reader of the rendered markdown sees it: what search indexes, embeds, compares and shows. The
    key and sources the suite writes after each MEMORY.md item (``<!-- key:… src:… on:… -->``)
    are bookkeeping, not content: indexed, "key" in "network key for guests" matched every
    promoted item. An unclosed ``<!--`` is left as it is, and so is one inside a code span
    (`` `<!-- lifelong:… -->` `` is text a reader sees)."""
    return _COMMENT.sub(lambda m: m.group(1) or "", text) if "<!--" in text else text


# what the suite writes around a line it copies: a wiki claim's state, confidence, id and evidence
# ("— unconfirmed, confidence 0.50 (claim.c228497344); evidence: `memory/…#L4-L4`"), a mention's
# claim id ("(claim.c228497344)"), and a struck item's pointer to what replaced it
# ("(superseded by "…", 2026-07-07)") or a contested one's to what disputes it ("(contested by …)")
_CLAIM_TRAILER = re.compile(r"\s+—\s+[\w -]+, confidence \d(?:\.\d+)?\s*\([^)]*\); evidence: .*$")
_CLAIM_ID = re.compile(r"\s*\(claim\.[0-9a-f]{6,}\)")
_SUPERSEDED_BY = re.compile(r'\s*\((?:superseded|contested) by ".*?"(?:, [\d-]+)?\)')
_CONTESTED_MARK = re.compile(r' \(contested by ".*"(?:, [\d-]+)?\)')


def contested_mark(text: str) -> re.Match[str] | None:
    """REM's mark on a MEMORY.md item a later note may have changed, though not surely
    (``text (contested by "…", DATE)``), where ``text`` holds one."""
    return _CONTESTED_MARK.search(text) if "(contested by" in text else None


def strip_bookkeeping(text: str) -> str:
    """``text`` without what the suite writes around a line it copies into MEMORY.md or the wiki
    (HTML comments, a claim's trailer and id, "(superseded by …)", "(contested by …)"): the line as its writer wrote
    it, so the daily line and its copies read as one. A strike-through (``~~…~~``) stays: it
    says the line no longer holds."""
    text = strip_comments(text)
    if "(" not in text:  # every marker below has one: most lines go no further
        return text
    return _SUPERSEDED_BY.sub("", _CLAIM_ID.sub("", _CLAIM_TRAILER.sub("", text)))


_CITED_DAILY = re.compile(r"memory/(?:[\w-]+/)*?(\d{4}-\d{2}-\d{2})[\w-]*\.md")
_PROMOTED_ON = re.compile(r"\bon:(\d{4}-\d{2}-\d{2})")


def stated_date(line: str) -> str | None:
    """When a line of an undated file (MEMORY.md, the wiki) was stated, as ``YYYY-MM-DD``: the
    newest daily it cites (a MEMORY.md item's ``src:``, a wiki claim's evidence), else the day it
    was promoted (``on:``); None when it carries neither (a line a person wrote there)."""
    days = _CITED_DAILY.findall(line)
    if days:
        return str(max(days))
    m = _PROMOTED_ON.search(line)
    return m.group(1) if m else None


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: about four characters per token (at least one per word), and one
    per character of Chinese, Japanese or Korean text, which a subword tokenizer splits finely."""
    unspaced = len(_UNSPACED.findall(text))
    if not unspaced:
        return max(len(text) // 4, len(text.split()))
    rest = _UNSPACED.sub(" ", text)
    return unspaced + max(len(rest.strip()) // 4, len(rest.split()))


# a line that ends a sentence ("... on the 1st." / "... now!)" / "... again?**"), and one that
# starts one (an upper-case letter or a digit, after markup such as ``**``, quotes or a bracket)
_ENDS_SENTENCE = re.compile(r"[.!?…][\"'’”)\]*_`]*\s*$")
_STARTS_SENTENCE = re.compile(r"^[\"'‘“(\[*_`]*[A-Z0-9]")
# a line that opens with a time of day, as a log entry does ("09:40 call w/ Sofia", "[21h00] futsal",
# "9.40am bus"); a decimal such as "1.25 million" is not a time
_STARTS_WITH_TIME = LazyPattern(
    r"^[\"'‘“(\[*_`]*(?:[01]?\d|2[0-3])(?:[:h][0-5]\d(?::[0-5]\d)?|\.[0-5]\d\s?[ap]\.?m\b)(?![\d:.])"
)
# a chat export's message stamp: "[14/03/27 21:04]", "14.03.27, 21:04 -", "3/14/27, 9:04 PM -",
# "2027-03-14 21:04" (WhatsApp, Telegram and Signal exports): a numeric date, then a time
_STARTS_WITH_STAMP = re.compile(
    r"^[\[(]?(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}-\d{2}-\d{2})[,T ]\s*(?:[01]?\d|2[0-3])[:.][0-5]\d"
)


_WEEKDAY_WORD = "(?:" + "|".join(sorted({*WEEKDAYS, *WEEKDAY_SHORT_FORMS}, key=len, reverse=True)) + ")"
_WEEKDAY_SHORT = r"(?:mo|di|mi|do|fr|sa|so)"  # German, only before a date ("Mo 28.9.")
_TITLE_DATE = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}\.\d{{1,2}}\.(?:\d{{2,4}})?|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}}|(?=\s*(?:[—–:|,-]|$)))"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:of\s+)?(?:{MONTH_PATTERN})\b\.?(?:\s+\d{{4}})?"
    rf"|(?:{MONTH_PATTERN})\b\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?)"
)
# the day a note is about, opening a line, as the first line of a daily often names it ("Tue 8 Sep
# — lab log", "Mo 28.9. — writing day", "Saturday, chores.", "12 May"): a weekday before a date,
# a date, or a weekday alone before a separator or the line's end
_TITLE_DAY = LazyPattern(
    rf"^[\s*_#]*(?:(?:{_WEEKDAY_WORD}|{_WEEKDAY_SHORT})\.?,?\s+(?:{_TITLE_DATE}|\d{{1,2}}(?:st|nd|rd|th)?\b\.?)"
    rf"|{_TITLE_DATE}|{_WEEKDAY_WORD}\b\.?(?=\s*(?:[—–:|,.-]|\*|$)))",
    re.IGNORECASE,
)
TITLE_MAX_WORDS = 4  # after the day


def title_line(line: str) -> bool:
    """Whether ``line`` is a day's title rather than a statement: it opens with the day
    (:data:`_TITLE_DAY`) and at most :data:`TITLE_MAX_WORDS` words follow ("Sunday. Did nothing
    at all, called Mama." is a statement; so is "Monday I moved to Lisbon": no date nor
    separator after the weekday)."""
    m = _TITLE_DAY.match(line)
    return m is not None and len(re.findall(r"[^\W_]+", line[m.end() :])) <= TITLE_MAX_WORDS


# a line that visibly goes on: it ends on a comma, a dash, an opening bracket or a word that
# cannot end a sentence ("…because", "…with the")
_OPEN_END = LazyPattern(
    r"(?:[,;:(\[–—-]|\b(?:and|or|but|nor|the|a|an|to|of|with|for|in|on|at|from|by|because|that|which|"
    r"who|whose|so|than|as|if|about|around|into|via|per|like|und|oder|aber|der|die|das|mit|y|o|pero|con|de|et|ou|mais|avec)\b)\s*$",
    re.IGNORECASE,
)
# a line that visibly continues the one before: it opens on a conjunction, a relative word or a
# preposition that cannot open a note ("to April 28.")
_CONTINUES = LazyPattern(
    r"^(?:and|or|but|nor|which|who|whose|because|than|so that|to|of|from|by|into|und|oder|aber|y|et)\b"
)
# a line this long that ends mid-sentence is prose wrapped at a fixed width, not a note a line
WRAPPED_WIDTH = 60


def line_groups(lines: list[str]) -> list[tuple[int, int]]:
    """A paragraph's lines as groups of consecutive lines (0-based, inclusive): each note line is a
    statement of its own unless it visibly continues the one before. Notes are often written a
    thought per line, without full stops or capitals ("mila swim moved to thursdays" / "bought
    milk"; "Rent is 1,250 € a month." / "Tried the new ramen place."). A line continues the one
    before when that one ends on a comma, a dash, an opening bracket or a word no sentence ends
    on ("with", "because", "the"), when it opens on a conjunction ("and …", "which …"), when it
    opens lower case after a line that ended a sentence ("e.g." / "etc."), or when the one before
    is prose wrapped mid-sentence (:data:`WRAPPED_WIDTH` characters or more without a sentence
    end). A line that opens with a time of day always starts an entry ("09:40 call w/ Sofia"), and
    so does a chat export's message stamp ("[14/03/27 21:04] Mum: …")."""
    groups: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(lines)):
        line, before = lines[i].lstrip(), lines[i - 1].rstrip()
        if _STARTS_WITH_TIME.match(line) or _STARTS_WITH_STAMP.match(line):
            new = True
        elif _ENDS_SENTENCE.search(before):
            new = bool(_STARTS_SENTENCE.match(line))
        else:
            new = not (
                _OPEN_END.search(before) or _CONTINUES.match(line) or len(before.lstrip()) >= WRAPPED_WIDTH
            )
        if new:
            groups.append((start, i - 1))
            start = i
    if lines:
        groups.append((start, len(lines) - 1))
    return groups


@dataclass(frozen=True)
class Block:
    start: int  # 1-based, inclusive
    end: int  # 1-based, inclusive
    kind: str  # heading | paragraph | list_item | fence | code_block | table | blockquote | html_block | hr
    heading_path: tuple[str, ...]
    depth: int = 0  # list nesting depth (0 for top-level items and non-items)
    parents: tuple[str, ...] = ()  # first lines of the ancestor list items (nested_items only)


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int]:
    """Shrink a 1-based inclusive range past blank lines at either end (within ``lines``)."""
    end = min(end, len(lines))
    while end > start and not lines[end - 1].strip():
        end -= 1
    while start < end and not lines[start - 1].strip():
        start += 1
    return start, end


def _inline_text(tokens: list[Token], i: int) -> str:
    """The text of the first inline token after position ``i`` (a heading or item's first line)."""
    for tok in tokens[i + 1 : i + 4]:
        if tok.type == "inline":
            return tok.content.split("\n", 1)[0].strip()
    return ""


def parse_blocks(text: str, first_line: int = 1, *, nested_items: bool = False) -> list[Block]:
    """Blocks of ``text`` with 1-based line numbers, offset so that the first line of ``text``
    is ``first_line`` (used when frontmatter precedes the body)."""
    body = normalise_newlines(text)
    lines = body.split("\n")
    tokens = _parser().parse(body)
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    offset = first_line - 1

    def add(start0: int, end0: int, kind: str, depth: int = 0, parents: tuple[str, ...] = ()) -> None:
        s, e = _trim(lines, start0 + 1, end0)
        if e >= s and lines[s - 1 : e] and any(ln.strip() for ln in lines[s - 1 : e]):
            blocks.append(Block(s + offset, e + offset, kind, tuple(h[1] for h in headings), depth, parents))

    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level != 0 or tok.map is None or tok.nesting == -1:
            i += 1
            continue
        start0, end0 = tok.map
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            headings = [h for h in headings if h[0] < level] + [(level, _inline_text(tokens, i))]
            add(start0, end0, "heading")
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            j = i + 1
            close = next(
                (k for k in range(i + 1, len(tokens)) if tokens[k].level == 0 and tokens[k].nesting == -1),
                len(tokens),
            )
            if nested_items:
                _nested(tokens, i + 1, close, add)
            else:
                for j in range(i + 1, close):
                    item = tokens[j]
                    if item.type == "list_item_open" and item.level == 1 and item.map:
                        add(item.map[0], item.map[1], "list_item")
            i = close
        else:
            add(start0, end0, tok.type.replace("_open", ""))
        i += 1
    return blocks


def _nested(tokens: list[Token], begin: int, end: int, add: Callable[..., None]) -> None:
    """Every list item in tokens[begin:end] as its own block: its lines up to its first nested
    list, with the first lines of its ancestors."""
    stack: list[tuple[int, str]] = []  # (token level of the item, its first line)
    for k in range(begin, end):
        tok = tokens[k]
        if tok.type != "list_item_open" or tok.map is None:
            continue
        while stack and stack[-1][0] >= tok.level:
            stack.pop()
        own_end = tok.map[1]
        for m in range(k + 1, end):
            inner = tokens[m]
            if inner.level <= tok.level and inner.type == "list_item_close":
                break
            if inner.type in ("bullet_list_open", "ordered_list_open") and inner.map:
                own_end = inner.map[0]
                break
        depth = len(stack)
        add(tok.map[0], own_end, "list_item", depth, tuple(text for _, text in stack))
        stack.append((tok.level, _inline_text(tokens, k)))
