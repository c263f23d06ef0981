"""What kind of answer a query asks for, and whether a line holds one (pure).

"Where is the food bank held" asks for a place: of "Food bank in the morning, busy." and "we're
in St Bride's church hall on Hyndland Road", both about the food bank, only the second can
answer it, yet the first is shorter and matches the same words, so lexical and embedding scores
rank it first. A question word names the kind of its answer:

- ``place``: where, location, address, venue, which city/town/street/shop… — a line holds one
  when it names something (a capitalised word inside a sentence) or a kind of place ("road",
  "hall", "library") that the query does not;
- ``time``: when, what time/day/date/month/year, how long ago, how often — a clock time, a
  date, a weekday or month, a relative time ("yesterday", "last week", "two days ago") or a
  frequency ("weekly", "twice", "every morning");
- ``person``: who, whom, whose — a name the query does not hold;
- ``amount``: how much, how many, what does it cost, price, fee — a number (in digits or words)
  or an amount of money.

Search multiplies the score of a unit holding the asked kind by ``1 + answer_boost`` when the
unit, its chunk or its heading holds a word of the query (the kind of answer decides between
lines about the thing asked; a line that only names a place is no answer to an unrelated
"where …"); a query that asks for no kind ("what activities does Melanie do") is scored as
before. English only."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from lifelong.facts import MONTH_PATTERN, WEEKDAY_SHORT_FORMS, WEEKDAYS
from lifelong.text import STOPWORDS, spelled_numbers, stem, words

_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "time",
        re.compile(
            r"\bwhen\b|\bwhat (?:time|day|date|month|year|evening|morning|night|weekday)s?\b"
            r"|\bwhich (?:day|date|month|year|evening|morning|night|weekday)s?\b|\bhow long ago\b"
            r"|\bwhat ?time\b|\bhow often\b",
            re.I,
        ),
    ),
    (
        "place",
        re.compile(
            r"\bwhere(?:'s)?\b|\b(?:location|address|venue|whereabouts)\b"
            r"|\b(?:which|what) (?:place|city|town|country|street|road|shop|store|restaurant|cafe|café"
            r"|bar|pub|venue|hotel|school|office|building|park|gym|clinic|hospital|station)s?\b",
            re.I,
        ),
    ),
    ("person", re.compile(r"\bwho(?:m|se|'s)?\b", re.I)),
    (
        "amount",
        re.compile(r"\bhow (?:much|many)\b|\b(?:cost|costs|price|prices|fee|fees|charge|charges)\b", re.I),
    ),
)


def asked_kind(query: str) -> str | None:
    """The kind of answer ``query`` asks for (the first question word's), or None."""
    best: tuple[int, str] | None = None
    for kind, rx in _KINDS:
        m = rx.search(query)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), kind)
    return best[1] if best else None


_CLOCK = re.compile(
    r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)|\bnoon\b|\bmidnight\b|o'clock", re.I
)
_DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}[./]\d{{1,2}}(?:[./]\d{{2,4}})?\b"
    rf"|\b(?:{'|'.join(WEEKDAYS)})s?\b|\b(?:{'|'.join(WEEKDAY_SHORT_FORMS)})\b\.?"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b",
    re.I,
)
_MONTH = re.compile(rf"\b(?:{MONTH_PATTERN})\b", re.I)
_RELATIVE = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|weekend|weekends|ago|since|until|till|daily|weekly|monthly"
    r"|yearly|annually|twice|fortnightly|every (?:day|morning|evening|night)"
    r"|(?:last|next|this|every) (?:week|month|year|time|summer|winter|spring|autumn|fall|weekend))\b",
    re.I,
)
_PLACES = frozenset(
    stem(w)
    for w in (
        "road street st avenue ave lane drive square place park hall church library station airport "
        "building floor room office shop store market cafe café restaurant pub bar hotel school "
        "university campus clinic hospital surgery practice gym pool centre center museum theatre "
        "cinema beach lake mountain city town village country island house flat apartment garden "
        "basement"
    ).split()
)
_MONEY = re.compile(r"[$€£¥]|\b(?:eur|euros?|usd|dollars?|pounds?|gbp|chf|francs?|bucks)\b", re.I)
# a word at the start of a line, after a list marker, a [D1:3]-style tag, or the end of a sentence
_LINE_START = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+)?(?:\[[^\]]*\]\s*)?(?:\*\*)?$")
_SENTENCE_END = re.compile(r"[.!?]['\"”’)]*\s+$|[\"“„«]$")
_CAPITALISED = re.compile(r"(?<![\w'’-])[A-ZÀ-ÖØ-Þ][^\W\d_]+(?:['’-][^\W\d_]+)*(?![\w'’-])")  # no "D1", "N2"


def _names(text: str) -> frozenset[str]:
    """Stems of the capitalised words of ``text`` that do not open a line or a sentence."""
    out = set()
    for m in _CAPITALISED.finditer(text):
        before = text[: m.start()]
        if _LINE_START.match(before) or _SENTENCE_END.search(before[-8:]):
            continue
        for w in words(m.group(0)):
            if w not in STOPWORDS:
                out.add(stem(w))
    return frozenset(out)


@dataclass(frozen=True)
class Holds:
    """The kinds of answer one text can give (see :func:`holds`)."""

    time: bool
    amount: bool
    names: frozenset[str]  # stems of names in it
    places: frozenset[str]  # stems of kinds of place in it


@lru_cache(maxsize=200_000)
def holds(text: str) -> Holds:
    """What answers ``text`` holds, whatever the query (cached: a unit meets many queries)."""
    time = bool(
        _CLOCK.search(text)
        or _DATE.search(text)
        or _RELATIVE.search(text)
        or any(m.group(0) != "may" for m in _MONTH.finditer(text))  # "may" the verb is no month
    )
    amount = bool(re.search(r"\d", text) or _MONEY.search(text) or spelled_numbers(text))
    places = frozenset(stem(w) for w in words(text)) & _PLACES
    return Holds(time, amount, _names(text), places)


def holds_kind(text: str, kind: str, asked: AbstractSet[str]) -> bool:
    """Whether ``text`` holds an answer of ``kind`` beyond the query's own words (``asked``: the
    stems of the query's words, :func:`asked_stems`)."""
    h = holds(text)
    if kind == "time":
        return h.time
    if kind == "amount":
        return h.amount
    if kind == "person":
        return bool(h.names - asked)
    if kind == "place":
        return bool(h.names - asked) or bool(h.places - asked)
    return False


def asked_stems(query: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(query))


# A question asking what to do ("how should I format my resume?", "what should I cook?", "which
# seat should I pick?", "the best way to ..."): a user's own standing rule about it is the answer
# a personal agent needs before any advice it gave.
_ADVICE = re.compile(
    r"\bshould (?:i|we|my|our)\b|^\s*how (?:do|can|could|would) (?:i|we)\b|^\s*how to\b"
    r"|\b(?:best|right|good) way (?:for me |for us )?to\b",
    re.I,
)
# a first-person statement of a preference or a standing instruction: "I prefer short emails",
# "I'd rather take trains", "Always keep my resume minimalist", "Never book me flights before 9",
# "Please keep any gift under 50 euros", "Don't suggest subscriptions"
_PREFERENCE = re.compile(
    r"\b(?:i|we)(?:'d| would)? (?:(?:really|always|usually|generally|much|strongly|only) )?"
    r"(?:prefer|like|love|hate|dislike|want|avoid|never|always|rather|don't|do not|can't stand)\b"
    r"|\bmy preference\b"
    r"|(?:^|[.!?]\s+|:(?:\*\*|__)?\s+)(?:please\s+)?(?:always|never|don't|do not|avoid|only|keep|make sure)\b",
    re.I,
)


def asks_advice(query: str) -> bool:
    """Whether ``query`` asks what to do, in the first person ("... should I / my ...", "how do
    I ...", "how to ...", "the best way to ...")."""
    return bool(_ADVICE.search(query))


def states_preference(text: str) -> bool:
    """Whether ``text`` states a preference or a standing instruction in the first person or as
    an imperative ("Always ...", "Never ...", "Please keep ..."). A role or speaker mark before
    the statement is allowed (``**User:** Always ...``)."""
    return bool(_PREFERENCE.search(text.replace("’", "'")))
