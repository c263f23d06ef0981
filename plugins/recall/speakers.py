"""Who speaks in a chunk: the speaker marks of transcript lines (chat roles, names, names in
bold), the turn an unmarked line continues, and whether a question asks about what someone said
(the search's ``speaker_boost`` and ``preference_boost``, and the query rewrite of
``speaker_pronoun``). Pure text functions, cached where units recur across queries."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from lifelong.text import fold, is_stopword, words

from .chunking import ROLE_RE, SPEAKER_RE

USER_ROLES = frozenset({"user", "human", "me"})
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})


# a name marked in bold, as chat exports write a named speaker: "**Caroline:** ...", "**Caroline**: ..."
BOLD_SPEAKER_RE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\[[^\]\n]{1,40}\]\s*)?(?:\*\*|__)([A-Z][\w.'’ -]{0,40}?)"
    r"(?::(?:\*\*|__)|(?:\*\*|__):)\s"
)


@lru_cache(maxsize=200_000)
def speaker_of(text: str) -> tuple[str, ...]:
    """The folded words of the speaker a unit's first line is marked with (``- [D1:3] Caroline:
    ...``, ``**Caroline:** ...``, or a chat role however marked: ``**User:**``, ``assistant:``),
    or () when it has none (cached: a unit meets many queries)."""
    m = ROLE_RE.match(text) or SPEAKER_RE.match(text)
    if m is None:
        m = BOLD_SPEAKER_RE.match(text)
        if m is not None and not _is_name(m.group(1)):
            return ()  # "**On call:** ...": a label
    return tuple(words(m.group(1))) if m else ()


_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")


def _is_name(mark: str) -> bool:
    """A speaker mark that reads as a name: one to three words, each capitalised ("Caroline",
    "Maya Lee"; not "Rent for the flat")."""
    parts = mark.split()
    return 1 <= len(parts) <= 3 and all(p[:1].isupper() for p in parts)


def speaker_names_asked(asked: set[str]) -> frozenset[str]:
    """The words a speaker mark must hold for a question to ask about its speaker: the question's
    own words, and the chat roles when it is in the first person."""
    names = {w for w in asked if len(w) > 1 and not is_stopword(w)}
    if asked & FIRST_PERSON:
        names |= USER_ROLES
    return frozenset(names)


def marks_a_speaker_asked(text: str, names: frozenset[str]) -> bool:
    """Whether a line of ``text`` may open with a mark of one of ``names`` as its speaker (one of
    them before the last colon of its first 64 characters: a mark may follow a time or tag that
    holds colons itself, "- [10:32] User:"): a cheap test, true for every chunk where
    :func:`turn_roles` can find a turn the question asks about, which is run only then."""
    if not names:
        return False
    for line in text.split("\n"):
        cut = line.rfind(":", 0, 64)
        if cut > 0:
            head = line[:cut].casefold()
            if any(n in head for n in names):
                return True
    return False


def _line_marks(lines: list[str]) -> tuple[list[tuple[str, ...] | None], Counter[tuple[str, ...]]]:
    """Per line, the speaker it marks (a chat role, or a name: one to three capitalised words),
    () for a heading or a label in bold ("**On call:**"), None for neither (a plain "Always keep
    my resume minimalist: one page." is a sentence of the turn it is in); and how many lines
    each name marks."""
    marks: list[tuple[str, ...] | None] = []
    names: Counter[tuple[str, ...]] = Counter()
    for line in lines:
        mark, is_name = _line_mark(line)
        if is_name:
            names[mark] += 1  # type: ignore[index]
        marks.append(mark)
    return marks, names


@lru_cache(maxsize=200_000)
def _line_mark(line: str) -> tuple[tuple[str, ...] | None, bool]:
    """One line's mark (see :func:`_line_marks`) and whether it is a name (cached: a daily's
    lines meet every search that reads them)."""
    m = ROLE_RE.match(line)
    if m:
        return tuple(words(m.group(1))), False
    m = SPEAKER_RE.match(line) or BOLD_SPEAKER_RE.match(line)
    if m and _is_name(m.group(1)):
        return tuple(words(m.group(1))), True
    if m and m.re is SPEAKER_RE:
        return None, False  # "Always keep my resume minimalist: one page." goes on a turn
    if m or _HEADING_LINE.match(line):
        return (), False
    return None, False


def _conversation(names: Counter[tuple[str, ...]]) -> bool:
    """Names marking lines as a conversation's do: two or more, and one of them on two lines or
    more (labels such as "**Home:** wifi ..." and "**Car:** insurance ..." mark a line each)."""
    return len(names) >= 2 and max(names.values()) >= 2


def turn_roles(text: str, start_line: int) -> dict[int, tuple[str, ...]]:
    """The speaker each unmarked line of a chunk continues: a message marked once (``**User:**``,
    ``**Caroline:**``) often goes on over more paragraphs or lines ("I moved to Lisbon in May." /
    "The flat is in Alfama."), and each is a unit of its own without the mark. A turn runs until
    another line marks a speaker, or a heading. A chat role always carries over; a name only in a
    chunk that reads as a conversation (:func:`_conversation`): in notes, "Maya: prefers tea." is
    often followed by a line about something else."""
    lines = text.split("\n")
    marks, names = _line_marks(lines)
    carry_names = _conversation(names)
    out: dict[int, tuple[str, ...]] = {}
    current: tuple[str, ...] = ()
    for i, (line, mark) in enumerate(zip(lines, marks, strict=True)):
        if mark is not None:
            current = mark if (mark not in names or carry_names) else ()
        elif current and line.strip():
            out[start_line + i] = current
    return out


def turn_openers(lines: list[str]) -> list[bool | None]:
    """Per line: True when it opens a speaker's turn (a chat role always, a name only in lines
    that read as a conversation, as :func:`turn_roles` carries them), False when it is marked
    but opens none (a label, a heading), None when it is not marked (what
    :class:`~.messages.Messages` needs)."""
    marks, names = _line_marks(lines)
    carry = _conversation(names)
    return [None if m is None else bool(m) and (m not in names or carry) for m in marks]


def speakers_in(text: str) -> set[str]:
    """The words of the speakers a chunk's lines are marked with: plain marks (``Caroline:``,
    ``- [D1:3] Caroline:``, chat roles) always, a name in bold (``**Caroline:**``) only in a
    conversation, as bold labels are common in notes."""
    lines = text.split("\n")
    out = {
        w for line in lines if (m := ROLE_RE.match(line) or SPEAKER_RE.match(line)) for w in words(m.group(1))
    }
    if "**" in text or "__" in text:
        _marks, names = _line_marks(lines)
        if _conversation(names):
            out.update(w for who in names for w in who)
    return out


def speaker_asked(who: tuple[str, ...], asked: set[str]) -> bool:
    """Whether a question is about what ``who`` said: it names them, or it is in the first
    person ("what did I ...", "my sister") and ``who`` is the user's role in a chat transcript."""
    return bool(who) and (set(who) <= asked or (set(who) <= USER_ROLES and bool(asked & FIRST_PERSON)))


def pronoun_query(query: str, names: set[str]) -> str:
    """``query`` with each of the (folded) ``names`` replaced by "they" ("their" for a
    possessive): what the query embedding sees when the speaker boost already carries who is
    asked about, so the vector leg ranks by what is asked ("what does they do to destress?")
    rather than by the name, which every line the person spoke holds."""
    if not names:
        return query

    def repl(m: re.Match[str]) -> str:
        if fold(m.group(1)) not in names:
            return m.group(0)
        return "their" if m.group(2) else "they"

    out = re.sub(r"(?<![\w'’])([^\W\d_][\w-]*)(['’]s\b)?", repl, query)
    return re.sub(r"\b(they|their)(?:\s+(?:they|their)\b)+", r"\1", out)
