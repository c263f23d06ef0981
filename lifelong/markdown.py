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

from .facts import UNSPACED_LETTERS, ascii_digits, written_days
from .lazy import LazyPattern
from .text import LETTER_RUN

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


TITLE_MAX_WORDS = 4  # words besides the day (and its weather)
TITLE_MAX_CHARS = 120

# a day in digits, either way round and with any separator, a year or not ("3/4", "14.03.",
# "3. 4.", "2031-03-04", "7/6/32"): a title may write a day its reader cannot tell from a month
_DIGIT_DAY = re.compile(
    r"(?<![\d.,:/-])(\d{1,4})\s?([./-])\s?(\d{1,2})(?:\s?\2\s?(\d{2,4}))?\.?(?![\d:]|[.,/-]\d)"
)
# the East Asian markers of a year, a month and a day ("2031年", "4月16日", "3월 4일")
_CJK_DAY_PART = re.compile(r"\d{1,4}\s?[年년]|\d{1,2}\s?[月월]|\d{1,2}\s?[日일号號]")
# a day's number next to a weekday or month name: "14", "3rd", "3.", "3-е", "3e", "15-oji"
_DAY_NUMBER = re.compile(
    r"(?:de\s+|of\s+|the\s+)?(?<!\d)(?:[12]\d|3[01]|0?[1-9])(?:-?[^\W\d_]{1,3}\b|\.)?(?!\d|[.,:/]\d)", re.I
)
_BEFORE_NAME = re.compile(
    r"(?<![\d.,:/])(?:[12]\d|3[01]|0?[1-9])(?:-?[^\W\d_]{1,3}\b)?\.?\s*(?:de\s+|of\s+)?$", re.I
)
_YEAR_AFTER = re.compile(r"[,.]?\s*\d{4}(?!\d)")
# the hour a diary app or a chat export stamps after the day ("14 Mar 2031, 07:12")
_STAMP_TIME = re.compile(
    r"[\s,;|–—-]*(?:T|at\s+)?(?:[01]?\d|2[0-3])[:.h][0-5]\d(?::[0-5]\d)?(?:\s?[ap]\.?m\.?)?(?!\d)", re.I
)
# the weather a title may carry: "27°C", "+19", "−2"
_TEMPERATURE = re.compile(
    r"[+\-−]?\d{1,2}(?:[.,]\d)?\s?°\s?[CF]?|(?<![\w.,])[+\-−]\d{1,2}(?:[.,]\d)?(?![\d.,:/])"
)
# a speaker's name and a colon, as a transcript or a chat export writes a message
_SPEAKER = re.compile(r"[\s\])}>—–-]*[^\W\d_][\w .'’-]{0,30}:\s*\S")  # after the day
_SPEAKER_FIRST = re.compile(r"^\W*[^\W\d_][\w'’-]*\s*:\s*$")  # before it
# what may follow a weekday or a day in digits standing alone: a separator or the line's end
_SEPARATED = re.compile(r"\s*(?:[—–:|,.\-*/)\]）】»]|$)")


def _letter_runs(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s words (:data:`lifelong.text.LETTER_RUN`: letters and the marks
    inside them, which a regular expression's word class breaks Thai or Hindi words at)."""
    return [m.span() for m in LETTER_RUN.finditer(text)]


@cache
def _spaced_names() -> dict[str, tuple[str, ...]]:
    """The weekday and month names of more than one word by their first word, longest first."""
    from . import readers

    names = {n for n in (*readers.weekday_names(), *readers.month_names()) if " " in n}
    by_first: dict[str, list[str]] = {}
    for name in sorted(names, key=len, reverse=True):
        by_first.setdefault(name.split(" ", 1)[0], []).append(name)
    return {first: tuple(group) for first, group in by_first.items()}


def _names_in(text: str, span: tuple[int, int]) -> list[tuple[int, int, str]]:
    """The weekday and month names (babel's CLDR names, :mod:`lifelong.readers`) in one word of
    ``text``: the word itself, or, in scripts written without spaces, the names inside it
    ("4月16日(月)", "วันจันทร์ที่"); each (start, end, "weekday" | "month")."""
    from . import readers

    weekdays, months = readers.weekday_names(), readers.month_names()
    a, b = span
    folded = text.casefold()
    word = folded[a:b]
    for name in _spaced_names().get(word, ()):  # "Thứ Sáu", "יום ג׳", "dydd Llun"
        if folded.startswith(name, a) and not folded[a + len(name) : a + len(name) + 1].isalpha():
            return [(a, a + len(name), "weekday" if name in weekdays else "month")]
    if word in weekdays:
        return [(a, b, "weekday")]
    if word in months:
        return [(a, b, "month")]
    if not UNSPACED_LETTERS.search(word):
        return []
    found, i = [], 0
    while i < len(word):
        for j in range(min(len(word), i + 8), i, -1):
            piece = word[i:j]
            bracketed = (
                text[a + i - 1 : a + i] in "(（"
                and text[a + j : a + j + 1] in ")）"
                and i == 0
                and j == len(word)
            )
            if (len(piece) >= 2 or bracketed) and (piece in weekdays or piece in months):
                found.append((a + i, a + j, "weekday" if piece in weekdays else "month"))
                i = j
                break
        else:
            i += 1
    return found


def _day_parts(text: str) -> tuple[list[tuple[int, int]], bool]:
    """Where ``text`` (digits in ASCII) names a day, and whether any of it names a day for certain:
    a date (:func:`lifelong.facts.written_days`, a day in digits with a year, East Asian markers),
    or a weekday or month name with the day's number. A weekday alone, or a day in digits alone
    without its year, is certain only before a separator or the line's end ("Sunday, chores." /
    "19/11"; not "So, I went" nor "1/2 cup of sugar")."""
    spans: list[tuple[int, int]] = []
    certain = False
    for span, _ in written_days(text):
        spans.append(span)
        certain = True
    for m in _DIGIT_DAY.finditer(text):
        a, b = int(m.group(1)), int(m.group(3))
        if not (1 <= a <= 31 and 1 <= b <= 12 or 1 <= b <= 31 and 1 <= a <= 12 or a > 31 and 1 <= b <= 12):
            continue
        spans.append(m.span())
        certain |= bool(m.group(4)) or a > 31 or bool(_SEPARATED.match(text, m.end()))
    for m in _CJK_DAY_PART.finditer(text):
        spans.append(m.span())
        certain = True
    for word in _letter_runs(text):
        for a, b, kind in _names_in(text, word):
            if text[b : b + 1] == ".":
                b += 1
            at = b + (len(text[b:]) - len(text[b:].lstrip(" ,")))
            after = _DIGIT_DAY.match(text, at) or _DAY_NUMBER.match(text, at)
            before = _BEFORE_NAME.search(text[:a])
            if after:
                b = after.end()
            if before:
                a = before.start()
            if year := _YEAR_AFTER.match(text, b):
                b = year.end() if (after or before) else b
            if kind == "month" and not (after or before):
                continue  # "May I ask", "Mars": a month's name alone names no day
            spans.append((a, b))
            # a weekday alone: before a separator ("Saturday, chores."; not "So, I went"), or
            # in a script without spaces, where no other word reads the same ("火曜日 くもり")
            unspaced = bool(UNSPACED_LETTERS.search(text[a:b]))
            certain |= (
                bool(after or before) or unspaced or (len(text[a:b]) >= 3 and bool(_SEPARATED.match(text, b)))
            )
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    stamped = []
    for a, b in merged:
        if stamp := _STAMP_TIME.match(text, b):
            b = stamp.end() if not text[stamp.end() :].strip(" )]") or certain else b
        stamped.append((a, b))
    return stamped, certain


def title_line(line: str) -> bool:
    """Whether ``line`` is a day's title rather than a statement: it opens with the day (a word may
    come first: "Entry — 14 Mar 2031"), in any language babel's CLDR data names weekdays and
    months in, in digits of any script and any order ("5 Şubat Pzt", "4月16日(月) 晴れ", "Jumatatu
    7/6/32", "pon. 7.06", "══ Thứ Hai, 14/10/2030 ══ ☔ 27°C"), and at most
    :data:`TITLE_MAX_WORDS` words follow, with no digit left besides the weather ("Sunday. Did
    nothing at all, called Mama." and "Mon: dentist 3pm" are statements; so is "Monday I moved
    to Lisbon": no date nor separator after the weekday)."""
    text = ascii_digits(line.strip().strip("*_#").strip())
    if not text or len(text) > TITLE_MAX_CHARS:
        return False
    spans, certain = _day_parts(text)
    if not spans or not certain:
        return False
    before = text[: spans[0][0]]
    if len(_letter_runs(before)) > 1 or _SPEAKER_FIRST.match(before) or _SPEAKER.match(text, spans[0][1]):
        return False  # "Caroline: Sunday, finally." / "[14/03/27 21:04] Linh: ok": a message
    rest = list(text)
    for a, b in spans:
        rest[a:b] = " " * (b - a)
    left = _TEMPERATURE.sub(" ", "".join(rest))
    return not any(ch.isdigit() for ch in left) and len(_letter_runs(left)) <= TITLE_MAX_WORDS


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
