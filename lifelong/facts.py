"""Comparable facts in a statement, and whether two statements contradict each other.

Pure functions, no plugin imports, no I/O: the supersede gate, the belief wiki and the evals use
them. Words are measured with :mod:`lifelong.text` (its tokeniser and stemmer); the patterns here
only find *values* (a date, an amount) in the text.

API
---
- :func:`extract(text, now=None, subject=None) <extract>` → :class:`Statement`: the statement's
  **subject** (stems of its content words once every value, status word and change verb is
  taken out; ``subject=`` overrides it), its **names** (capitalised words of the subject, used
  to tell "Anna's budget" from "Bob's budget"), its comparable :class:`Value` s, whether it
  announces a **change** ("moved to", "rescheduled", "no longer") or an **addition** ("also",
  "another", "a second"), whether it is **hedged** (second-hand: "apparently", "I think"), the
  ``event_date`` it states (the first absolute date written in it, or a resolved
  today/yesterday/tomorrow) and its ``valid_until`` ("until 30 June").
- Value kinds (:data:`KINDS`):

  ========== ============================================ ===================================
  kind       found in                                     canonical ``value``
  ========== ============================================ ===================================
  date       ``2026-05-14``, ``14 May``, ``May 14th,       ``2026-05-14``; ``05-14`` without
             2026``, today/tomorrow/yesterday (with now)   a year and without ``now``
  weekday    ``Wednesday``, ``thurs``, a dated value's     ``wednesday``; ``Value.date`` is
             weekday                                      the next such day from ``now``
  time       ``9:30``, ``9am``, ``2:15 p.m.``, noon         ``09:30`` (24 h)
  money      ``$2M``, ``$2,000,000``, ``€1.5k``, ``300      ``USD 2000000`` (currency, amount)
             EUR``, ``₹500``, ``500 रुपये``
  quantity   a number with a unit: ``5 kg``, ``3 hours``,   ``5000 g``, ``180 min``, ``3
             ``20%``, ``4 engineers``                      engineer`` (known units converted)
  number     a bare number not part of the above            ``42``
  status     planned, in progress, done, cancelled,         the label (``done``); negated:
             postponed, blocked, experimental, beta,        ``not done``
             production, deprecated
  assignee   "owned by Dana", "Dana owns", "assigned to     the folded name (``dana``)
             Dana", "led by", "handled by"…
  location   "in Berlin", "at the Marriott", "moved to      the folded name (``berlin``,
             Lisbon", "room 4B"                             ``room 4b``)
  ========== ============================================ ===================================

  A money value or quantity followed by "of the …" ("spent $5k of the budget") is a part of the
  whole (``key`` ``part``) and is compared only with other parts.
  A value after "from" (in a statement announcing a change), "instead of", "rather than", "no
  longer" or "not" is ``negated``: it names the old value ("moved from Wednesday to Thursday").
- :func:`compare(a, b) <compare>` → :class:`Comparison`: ``related`` (same subject: no clash of
  names, and the subjects' stems overlap — Jaccard above 0.5, or the smaller subject of two or
  more stems lies inside the other, which has at most one stem more; when either statement
  announces a change, two shared stems are enough, or one when a subject has two at most),
  ``similarity`` (that Jaccard), and ``conflicts``: for each value kind both statements carry, the two sets of positive values are disjoint, or one statement
  negates a value the other asserts. Not conflicts: an **addition** ("another meeting on
  Friday"), a **progression** of the plan → in progress → done lifecycle (a plan and its later
  completion describe two events, so their dates and times are not compared either), a
  statement whose values are a superset of the other's.
- :func:`is_stale(statement, now) <is_stale>`: its ``valid_until`` lies before ``now``.

Matching is exact on NFKC-folded text: no fuzzy or edit-distance matching anywhere, so words that
differ by one character ("किताब" and "कीताब") are different subjects and different values.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from .text import STOPWORDS, content_tokens, fold, is_stopword, jaccard, stem, tokens

KINDS: tuple[str, ...] = (
    "date",
    "weekday",
    "time",
    "money",
    "quantity",
    "number",
    "status",
    "assignee",
    "location",
)


@dataclass(frozen=True)
class Value:
    """One comparable value found in a statement. ``kind`` is one of :data:`KINDS`; ``key`` narrows
    the comparison (a quantity's dimension, a money value's currency is part of ``value``);
    ``start``/``end`` are character offsets into the statement's text."""

    kind: str
    value: str
    text: str
    start: int
    end: int
    key: str = ""
    negated: bool = False
    date: dt.date | None = None


@dataclass(frozen=True)
class Statement:
    """What :func:`extract` finds in one statement (see the module docstring)."""

    text: str
    subject: frozenset[str]
    names: frozenset[str] = frozenset()
    values: tuple[Value, ...] = ()
    change: bool = False
    additive: bool = False
    hedged: bool = False
    event_date: dt.date | None = None
    valid_until: dt.date | None = None

    def of_kind(self, kind: str, *, negated: bool | None = False) -> tuple[Value, ...]:
        return tuple(v for v in self.values if v.kind == kind and (negated is None or v.negated == negated))

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(v.kind for v in self.values)


@dataclass(frozen=True)
class Conflict:
    """Two statements disagree on one attribute: ``left`` are the first statement's values of
    ``kind``, ``right`` the second's."""

    kind: str
    left: tuple[str, ...]
    right: tuple[str, ...]
    key: str = ""

    def describe(self) -> str:
        label = f"{self.kind} ({self.key})" if self.key else self.kind
        return f"{label}: {', '.join(self.left) or '-'} vs {', '.join(self.right) or '-'}"


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`."""

    related: bool
    similarity: float
    conflicts: tuple[Conflict, ...] = ()
    additive: bool = False
    progression: bool = False
    shared: frozenset[str] = field(default_factory=frozenset)
    # the subjects pass the strict test (:func:`same_subject`), not only the loose one a change
    # word allows: only then may a conflict close the older fact's interval
    certain: bool = False

    @property
    def conflicting(self) -> bool:
        return self.related and bool(self.conflicts)

    @property
    def reason(self) -> str:
        if not self.related:
            return "different subjects"
        if self.conflicts:
            return "same subject, different " + "; ".join(c.describe() for c in self.conflicts)
        if self.additive:
            return "same subject, an additional fact"
        if self.progression:
            return "same subject, a later stage of the same plan"
        return "same subject, compatible values"


# ---------------------------------------------------------------------------------------------
# Vocabulary

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# the short forms other readers accept ("Tue", "Thurs"): the three-letter ones and a few longer
WEEKDAY_SHORT_FORMS = (*(d[:3] for d in WEEKDAYS), "tues", "thur", "thurs")
_WEEKDAY_FORMS = {
    **{d: d for d in WEEKDAYS},
    **{d + "s": d for d in WEEKDAYS},
    "tues": "tuesday",
    "weds": "wednesday",
    "thur": "thursday",
    "thurs": "thursday",
}
# every weekday word, the seven names first, then the plurals and short forms ("tuesdays", "tue",
# "weds", "thurs"): the one list of them the suite's readers share
WEEKDAY_WORDS: tuple[str, ...] = tuple(dict.fromkeys((*WEEKDAYS, *_WEEKDAY_FORMS, *WEEKDAY_SHORT_FORMS)))
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_FORMS = {**{m: i + 1 for i, m in enumerate(MONTHS)}, **{m[:3]: i + 1 for i, m in enumerate(MONTHS)}}
_MONTH_FORMS["sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTH_FORMS, key=len, reverse=True))
# for other readers of dates (recall's query periods): month name or abbreviation -> number, and
# the same names as a regex alternation (longest first)
MONTH_NUMBERS: dict[str, int] = dict(_MONTH_FORMS)
# every month word, the twelve names first, then the abbreviations ("jan" … "dec", "sept"): the one
# list the suite's readers of dates share
MONTH_WORDS: tuple[str, ...] = (*MONTHS, *(k for k in _MONTH_FORMS if k not in MONTHS))
MONTH_PATTERN = _MONTH_RE

# status label → patterns (on folded text). Order matters only for overlapping words.
_STATUS_PATTERNS: tuple[tuple[str, str], ...] = (
    ("cancelled", r"cancell?ed|cancell?ing|called off|scrapped|abandoned|shelved|dropped"),
    ("postponed", r"postponed|delayed|on hold|paused|deferred"),
    ("blocked", r"blocked"),
    ("in progress", r"in progress|under ?way|ongoing|work in progress|started|wip"),
    (
        "done",
        r"done|completed?|finished|shipped|launched|released|merged|resolved|fixed|delivered"
        r"|deployed|went live|wrapped up",
    ),
    ("planned", r"planned|planning to|plans? to|plans? for|proposed|intends? to|to-?do|going to"),
    ("experimental", r"experimental|prototype|alpha|pilot|trial"),
    ("beta", r"beta|preview"),
    ("production", r"production|in prod|generally available|live"),
    ("deprecated", r"deprecated|sunset|retired|decommissioned|end of life|eol"),
)
_STATUS_RE = re.compile(
    "|".join(rf"(?P<s{i}>\b(?:{pat})\b)" for i, (_, pat) in enumerate(_STATUS_PATTERNS)), re.IGNORECASE
)
# A plan fulfilled: the later stage does not contradict the earlier one.
_LIFECYCLE = {"planned": 0, "in progress": 1, "done": 2}

_CHANGE_RE = re.compile(
    r"\b(?:moved|moving|move|changed|changing|change|rescheduled|reschedule|switched|switch|shifted"
    r"|pushed|bumped|relocated|updated|now|no longer|no more|instead|actually|anymore|any more|correction"
    r"|took over|taken over|takes over|handed over|reassigned|transferred|replaced"
    r"|raised|lowered|increased|decreased|reduced|cut|rebooked|slipped|extended|shortened|renamed|upgraded"
    r"|downgraded|new)\b",
    re.IGNORECASE,
)


def announces_change(text: str) -> bool:
    """Whether ``text`` has a word that announces a change ("now", "moved", "took over", "new",
    "instead", "no longer"; English only)."""
    return bool(_CHANGE_RE.search(text))


_ADDITIVE_RE = re.compile(
    r"\b(?:also|another|second|third|additional|extra|as well|in addition|too|plus|besides)\b",
    re.IGNORECASE,
)
_HEDGE_RE = re.compile(
    r"\b(?:apparently|i think|i guess|i believe|probably|maybe|perhaps|might|may be|seems|seemed"
    r"|supposedly|reportedly|allegedly|rumou?r|heard|someone said|somebody said|they say|"
    r"not sure|i'm not sure|possibly|likely|inferred|unconfirmed)\b",
    re.IGNORECASE,
)
# Words that describe the change or the statement rather than its subject.
_NOT_SUBJECT = frozenset(
    stem(w)
    for w in """
    moved moving move changed changing change rescheduled reschedule switched switch shifted pushed
    bumped relocated updated update now longer instead actually anymore correction new
    also another second third additional extra addition plus besides
    apparently guess believe probably perhaps seems seemed supposedly reportedly allegedly rumour
    rumor heard someone somebody sure possibly likely inferred unconfirmed
    until till through thru expires expire valid
    is are was were be been being will would shall on at in to from of
    week weekly every each next last coming following later earlier
    happens happening held hold holds takes take place scheduled set far start starts started starting
    own owns owned owner lead leads led leading took taken handle handles handled handling manage manages
    managed assigned reassigned handed passed transferred responsible charge
    """.split()
)
_NEGATION_BEFORE = re.compile(
    r"(?:\binstead of|\brather than|\bno (?:longer|more)(?:\s+\w+)?|\bnot(?:\s+\w+)?|n't(?:\s+\w+)?|\bnever)"
    r"(?:\s+(?:on|at|in|for|the|a|an))?\s*$",
    re.IGNORECASE,
)
_FROM_BEFORE = re.compile(r"\bfrom(?:\s+(?:the|a|an))?\s*$", re.IGNORECASE)

_CURRENCY_SYMBOLS = {"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_CURRENCY_WORDS = {
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "bucks": "USD",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "jpy": "JPY",
    "yen": "JPY",
    "inr": "INR",
    "rs": "INR",
    "rs.": "INR",
    "rupee": "INR",
    "rupees": "INR",
    "रुपये": "INR",
    "रुपए": "INR",
    "chf": "CHF",
    "francs": "CHF",
}
_MULTIPLIERS = {
    "k": 1_000,
    "thousand": 1_000,
    "m": 1_000_000,
    "mm": 1_000_000,
    "mn": 1_000_000,
    "million": 1_000_000,
    "b": 1_000_000_000,
    "bn": 1_000_000_000,
    "billion": 1_000_000_000,
    "lakh": 100_000,
    "crore": 10_000_000,
}
# unit → (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, Decimal]] = {
    **{u: ("mass", Decimal(1)) for u in ("g", "gram", "grams")},
    **{u: ("mass", Decimal(1000)) for u in ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms")},
    **{u: ("mass", Decimal("453.59237")) for u in ("lb", "lbs", "pound", "pounds")},
    **{u: ("length", Decimal(1)) for u in ("m", "meter", "meters", "metre", "metres")},
    **{
        u: ("length", Decimal(1000))
        for u in ("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres")
    },
    **{u: ("length", Decimal("0.01")) for u in ("cm", "centimeter", "centimeters")},
    **{u: ("length", Decimal("1609.344")) for u in ("mi", "mile", "miles")},
    **{u: ("volume", Decimal(1)) for u in ("ml", "milliliter", "milliliters")},
    **{u: ("volume", Decimal(1000)) for u in ("l", "liter", "liters", "litre", "litres")},
    **{u: ("duration", Decimal(1)) for u in ("min", "mins", "minute", "minutes")},
    **{u: ("duration", Decimal(60)) for u in ("h", "hr", "hrs", "hour", "hours")},
    **{u: ("duration", Decimal(1440)) for u in ("day", "days")},
    **{u: ("duration", Decimal(10080)) for u in ("week", "weeks", "wk", "wks")},
    **{u: ("duration", Decimal("0.0166666667")) for u in ("s", "sec", "secs", "second", "seconds")},
    **{u: ("data", Decimal(1)) for u in ("kb",)},
    **{u: ("data", Decimal(1024)) for u in ("mb",)},
    **{u: ("data", Decimal(1024**2)) for u in ("gb",)},
    **{u: ("data", Decimal(1024**3)) for u in ("tb",)},
    **{u: ("ratio", Decimal(1)) for u in ("%", "percent", "pct")},
    **{u: ("area", Decimal(1)) for u in ("m2", "sqm")},  # "m²" is read as "m2"
}
_BASE_UNIT = {
    "mass": "g",
    "length": "m",
    "volume": "ml",
    "duration": "min",
    "data": "kb",
    "ratio": "%",
    "area": "m2",
}

_NUM = r"\d+(?:[.,]\d+)*"
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.IGNORECASE
)
# A month alone: after a preposition ("in May", "by end of June") or before a year ("May 2026");
# "may" the verb is neither.
_MONTH_ONLY = re.compile(
    rf"(?:\b(in|by|during|from|until|till|since|before|after|early|mid|late|end of|start of|beginning of)"
    rf"\s+|(?=(?:{_MONTH_RE})\.?\s+\d{{4}}))({_MONTH_RE})\.?\b(?:\s+(\d{{4}}))?",
    re.IGNORECASE,
)
_RELATIVE_DAY = re.compile(r"\b(today|tonight|tomorrow|yesterday)\b", re.IGNORECASE)
_WEEKDAY = re.compile(
    r"\b(?:(next|last|this|coming)\s+)?(" + "|".join(sorted(_WEEKDAY_FORMS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)(?![\w])|\b(\d{1,2}):(\d{2})\b|\b(noon|midday|midnight)\b",
    re.IGNORECASE,
)
_MONEY_PREFIX = re.compile(
    rf"(?<![\w$€£¥₹])(us\$|\$|€|£|¥|₹|\b(?:usd|eur|gbp|inr|chf|rs\.?)\s?)\s?({_NUM})"
    r"(?:\s?(thousand|million|billion|lakh|crore|bn|mn|mm|k|m|b)\b)?",
    re.IGNORECASE,
)
_MONEY_SUFFIX = re.compile(
    rf"\b({_NUM})(?:\s?(thousand|million|billion|lakh|crore|bn|mn|mm|k|m|b))?\s?"
    r"(usd|eur|euros?|dollars?|bucks|gbp|pounds?|jpy|yen|inr|rupees?|रुपये|रुपए|chf|francs)(?!\w)",
    re.IGNORECASE,
)
# "$5k of the budget", "3 GB of our quota": a part of the whole, not the whole's value.
_PART_OF = re.compile(r"\s+of\s+(?:the|my|our|his|her|their|its|this|that|your)\b", re.IGNORECASE)
_QUANTITY = re.compile(rf"(?<![\w.])({_NUM})\s?(%|m2(?!\d)|[^\W\d_]+)", re.IGNORECASE)
_NUMBER = re.compile(rf"(?<![\w.:/-])({_NUM})(?![\w:/-])")
# A name: a capitalised word (then a lower-case letter: "Berlin", not "Q3"), or a word of a script
# without letter case; one more capitalised word may follow ("Dana Lee").
_NAME = r"((?:[A-Z][a-z\u00e0-\u00ff][\w'’-]*|[^\W\d_a-zA-Z\u00c0-\u024f][\w'’-]*)(?:\s+[A-Z][a-z][\w'’-]*)?)"
_ASSIGNEE_AFTER = re.compile(
    r"\b(?:owned|assigned|led|handled|run|managed|driven|taken over|organi[sz]ed|coordinated|hosted)\s+by\s+"
    + _NAME
    + r"|\b(?:assigned to|reassigned to|handed over to|handed to|passed to|transferred to|owner is|owner:|lead is"
    r"|lead:|point of contact is|contact is|responsible is)\s+" + _NAME
)
_ASSIGNEE_BEFORE = re.compile(
    _NAME
    + r"\s+(?:now\s+|also\s+)?(?:owns|leads|is leading|is handling|handles|runs|manages|is running|is managing"
    r"|is responsible for|is in charge of|is the owner of|took over|takes over|will handle|will own|will lead"
    r"|will run|is organi[sz]ing|organi[sz]es|hosts|is hosting)\b"
)
# "took over X from Dana": the name after "from" is the previous assignee (negated by the change).
_ASSIGNEE_FROM = re.compile(
    r"\b(?:took over|taken over|takes over|handed over|reassigned|transferred)\b[^.;]*?\bfrom\s+" + _NAME
)
# "relocated the office to Munich": a place after "to" once a move is announced.
_MOVED_TO = re.compile(
    r"\b(?:moved|relocated|relocating|moving|shifted|switched|migrated)\b[^.;]*?\bto\s+(?:the\s+)?" + _NAME
)
_LOCATION = re.compile(
    r"\b(?:(?:moved|moving|relocated|relocating|move|changed|switched)\s+to|located in|lives in|living in"
    r"|based in|held in|held at|takes place in|takes place at|in|at)\s+(?:the\s+)?" + _NAME
)
_ROOM = re.compile(r"\b(room|office|floor|building|gate|hall)\s+([A-Za-z]?\d+[A-Za-z]?)\b", re.IGNORECASE)
_UNTIL = re.compile(r"\b(?:valid until|good until|until|till|through|thru|expires(?: on)?|ends on)\s+$", re.I)
_UNSPACED_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*+]\s+)?)$")
_POSSESSIVE_AFTER = re.compile(r"^['’]s\b")


# ---------------------------------------------------------------------------------------------
# Extraction


def _decimal(text: str) -> Decimal | None:
    raw = text.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text) else text
    if raw.count(",") == 1 and "." not in raw:
        raw = raw.replace(",", ".")  # 1,5 (decimal comma)
    try:
        return Decimal(raw)
    except InvalidOperation:
        return None


def _canonical_number(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _year(year: str | None, now: dt.datetime | None) -> int | None:
    if year:
        return int(year)
    return now.date().year if now is not None else None


def _make_date(year: int | None, month: int, day: int | None) -> tuple[str, dt.date | None] | None:
    """The canonical value (``2026-05-14``, ``????-05-14``, ``2026-05``, ``????-05``) and, when
    year and day are known, the date."""
    try:
        probe = dt.date(year or 2000, month, day or 1)  # 2000 is a leap year: 29 February is valid
    except ValueError:
        return None
    prefix = f"{year:04d}" if year is not None else "????"
    if day is None:
        return f"{prefix}-{month:02d}", None
    return f"{prefix}-{month:02d}-{day:02d}", (probe if year is not None else None)


def _resolve_weekday(name: str, qualifier: str | None, now: dt.datetime | None) -> dt.date | None:
    if now is None:
        return None
    today = now.date()
    target = WEEKDAYS.index(name)
    ahead = (target - today.weekday()) % 7
    if qualifier == "last":
        return today - dt.timedelta(days=(today.weekday() - target) % 7 or 7)
    if qualifier == "next" and ahead == 0:
        ahead = 7
    return today + dt.timedelta(days=ahead)


class _Spans:
    """Character ranges already claimed by a value (a date's digits are not also a number)."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.ranges)

    def claim(self, start: int, end: int) -> None:
        self.ranges.append((start, end))


def _negated(text: str, start: int, change: bool) -> bool:
    before = text[max(0, start - 40) : start]
    if _NEGATION_BEFORE.search(before):
        return True
    return change and bool(_FROM_BEFORE.search(before))


def _add(out: list[Value], spans: _Spans, source: str, change: bool, **kwargs: object) -> None:
    start, end = int(kwargs["start"]), int(kwargs["end"])  # type: ignore[call-overload]
    spans.claim(start, end)
    out.append(Value(negated=_negated(source, start, change), **kwargs))  # type: ignore[arg-type]


def _dates(text: str, now: dt.datetime | None, spans: _Spans, change: bool, out: list[Value]) -> None:
    found: list[tuple[int, int, str, dt.date | None]] = []
    for m in _ISO_DATE.finditer(text):
        made = _make_date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if made:
            found.append((m.start(), m.end(), *made))
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        for m in pattern.finditer(text):
            month = _MONTH_FORMS[m.group(month_group).lower().rstrip(".")]
            made = _make_date(_year(m.group(3), now), month, int(m.group(day_group)))
            if made:
                found.append((m.start(), m.end(), *made))
    for m in _MONTH_ONLY.finditer(text):
        made = _make_date(_year(m.group(3), now), _MONTH_FORMS[m.group(2).lower().rstrip(".")], None)
        if made:
            found.append((m.start(2), m.end(), *made))
    if now is not None:
        for m in _RELATIVE_DAY.finditer(text):
            offset = {"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}[m.group(1).lower()]
            relative = now.date() + dt.timedelta(days=offset)
            found.append((m.start(), m.end(), relative.isoformat(), relative))
    for start, end, value, day in sorted(found):
        if not spans.free(start, end):
            continue
        until = bool(_UNTIL.search(text[max(0, start - 20) : start]))
        _add(
            out,
            spans,
            text,
            change,
            kind="until" if until else "date",
            value=value,
            text=text[start:end],
            start=start,
            end=end,
            date=day,
        )


def _weekdays(text: str, now: dt.datetime | None, spans: _Spans, change: bool, out: list[Value]) -> None:
    for m in _WEEKDAY.finditer(text):
        start = m.start(2)
        if not spans.free(start, m.end()):
            continue
        name = _WEEKDAY_FORMS[m.group(2).lower()]
        qualifier = m.group(1).lower() if m.group(1) else None
        _add(
            out,
            spans,
            text,
            change,
            kind="weekday",
            value=name,
            text=m.group(0),
            start=m.start(),
            end=m.end(),
            date=_resolve_weekday(name, qualifier, now),
        )


def _times(text: str, spans: _Spans, change: bool, out: list[Value]) -> None:
    for m in _TIME.finditer(text):
        if not spans.free(m.start(), m.end()):
            continue
        if m.group(6):
            hour, minute = (0, 0) if m.group(6).lower() == "midnight" else (12, 0)
        elif m.group(3):
            hour, minute = int(m.group(1)), int(m.group(2) or 0)
            pm = m.group(3).lower().startswith("p")
            if not 1 <= hour <= 12:
                continue
            hour = (hour % 12) + (12 if pm else 0)
        else:
            hour, minute = int(m.group(4)), int(m.group(5))
        if hour > 23 or minute > 59:
            continue
        _add(
            out,
            spans,
            text,
            change,
            kind="time",
            value=f"{hour:02d}:{minute:02d}",
            text=m.group(0),
            start=m.start(),
            end=m.end(),
        )


def _money(text: str, spans: _Spans, change: bool, out: list[Value]) -> None:
    found: list[tuple[int, int, str, str, str | None]] = []
    for m in _MONEY_PREFIX.finditer(text):
        symbol = m.group(1).strip().lower()
        currency = _CURRENCY_SYMBOLS.get(symbol) or _CURRENCY_WORDS[symbol]
        found.append((m.start(), m.end(), currency, m.group(2), m.group(3)))
    for m in _MONEY_SUFFIX.finditer(text):
        found.append((m.start(), m.end(), _CURRENCY_WORDS[m.group(3).lower()], m.group(1), m.group(2)))
    for start, end, currency, number, multiplier in sorted(found):
        # "€1.200" is twelve hundred euros: an amount has no three decimals
        amount = _decimal(number.replace(".", "") if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", number) else number)
        if amount is None or not spans.free(start, end):
            continue
        if multiplier:
            amount *= _MULTIPLIERS[multiplier.lower()]
        _add(
            out,
            spans,
            text,
            change,
            kind="money",
            value=f"{currency} {_canonical_number(amount)}",
            text=text[start:end],
            start=start,
            end=end,
            key="part" if _PART_OF.match(text, end) else "",
        )


def _in_base_unit(amount: Decimal, dimension: str, factor: Decimal) -> str:
    """A quantity as :func:`extract` writes it: the amount in its dimension's base unit."""
    return f"{_canonical_number(amount * factor)} {_BASE_UNIT[dimension]}"


def _unit_named(text: str, m: re.Match[str]) -> tuple[tuple[str, Decimal], int] | None:
    """The unit after a number in another language, by its CLDR name (readers.unit_names:
    "3 кг", "7 procent", "20 pour cent", "2 litros"), and where its name ends; None when the word
    is no unit's name there."""
    from . import readers

    names = readers.unit_names()
    if not names:
        return None
    after = re.match(r"\s+([^\W\d_]+)", text[m.end() :])
    candidates = [(m.group(2), m.end())]
    if after:
        candidates.insert(0, (f"{m.group(2)} {after.group(1)}", m.end() + after.end()))
    for name, end in candidates:
        found = names.get(name.casefold())
        if found is not None and not found[2]:
            return (found[0], Decimal(found[1])), end
    return None


def _quantities(text: str, spans: _Spans, change: bool, out: list[Value]) -> None:
    for m in _QUANTITY.finditer(text):
        if not spans.free(m.start(), m.end()):
            continue
        amount = _decimal(m.group(1))
        unit = fold(m.group(2))
        if amount is None or unit in _MONTH_FORMS or unit in _WEEKDAY_FORMS:
            continue
        named = (_UNITS[unit], m.end()) if unit in _UNITS else _unit_named(text, m)
        end = named[1] if named else m.end()
        if named is not None:
            (key, factor) = named[0]
            value = _in_base_unit(amount, key, factor)
        elif is_stopword(unit) or len(unit) < 2 or unit in _MULTIPLIERS:
            continue
        else:
            key = stem(unit[:-1] if unit.endswith("s") and len(unit) > 3 else unit)
            value = f"{_canonical_number(amount)} {key}"
        if _PART_OF.match(text, end):
            key += ":part"
        _add(
            out,
            spans,
            text,
            change,
            kind="quantity",
            value=value,
            text=text[m.start() : end],
            start=m.start(),
            end=end,
            key=key,
        )


def _numbers(text: str, spans: _Spans, change: bool, out: list[Value]) -> None:
    for m in _NUMBER.finditer(text):
        if not spans.free(m.start(), m.end()):
            continue
        amount = _decimal(m.group(1))
        if amount is None:
            continue
        _add(
            out,
            spans,
            text,
            change,
            kind="number",
            value=_canonical_number(amount),
            text=m.group(0),
            start=m.start(),
            end=m.end(),
        )


def _statuses(text: str, spans: _Spans, change: bool, out: list[Value]) -> None:
    for m in _STATUS_RE.finditer(text):
        if not spans.free(m.start(), m.end()):
            continue
        label = next(_STATUS_PATTERNS[int(k[1:])][0] for k, v in m.groupdict().items() if v)
        negated = _negated(text, m.start(), change=False)
        _add(
            out,
            spans,
            text,
            change=False,
            kind="status",
            value=f"not {label}" if negated else label,
            text=m.group(0),
            start=m.start(),
            end=m.end(),
        )
        # a negated status is a value of its own ("not done"), not the old value of a change
        if negated:
            last = out.pop()
            out.append(Value(**{**last.__dict__, "negated": False}))


def _is_name(word: str) -> bool:
    folded = fold(word)
    first = folded.split()[0] if folded.split() else folded
    return bool(word) and first not in STOPWORDS and first not in _WEEKDAY_FORMS and first not in _MONTH_FORMS


def _named(text: str, spans: _Spans, change: bool, out: list[Value]) -> None:
    for pattern, kind in (
        (_ASSIGNEE_AFTER, "assignee"),
        (_ASSIGNEE_BEFORE, "assignee"),
        (_ASSIGNEE_FROM, "assignee"),
        (_LOCATION, "location"),
        (_MOVED_TO, "location"),
    ):
        for m in pattern.finditer(text):
            group = next(i for i in range(1, (m.lastindex or 0) + 1) if m.group(i))
            name, start, end = m.group(group), m.start(group), m.end(group)
            name = re.sub(r"['’]s$", "", name)
            end = start + len(name)
            if not _is_name(name) or not spans.free(start, end):
                continue
            if (
                pattern is _ASSIGNEE_BEFORE
                and _SENTENCE_START.search(text[:start])
                and fold(name)
                in {
                    "team",
                    "everyone",
                    "nobody",
                }
            ):
                continue
            _add(out, spans, text, change, kind=kind, value=fold(name), text=name, start=start, end=end)
    for m in _ROOM.finditer(text):
        if spans.free(m.start(), m.end()):
            _add(
                out,
                spans,
                text,
                change,
                kind="location",
                value=fold(f"{m.group(1)} {m.group(2)}"),
                text=m.group(0),
                start=m.start(),
                end=m.end(),
            )


def _subject_names(text: str) -> frozenset[str]:
    """Capitalised words that are not a sentence's first word (unless possessive, "Anna's")."""
    names: set[str] = set()
    for m in re.finditer(r"[^\W\d_][\w'’-]*", text):
        word = m.group(0)
        if not word[0].isupper() or len(word) < 2:
            continue
        bare = re.sub(r"['’]s$", "", word)
        if not _is_name(bare) or fold(bare) == "i":
            continue
        at_start = bool(_SENTENCE_START.search(text[: m.start()]))
        if at_start and not (word != bare or _POSSESSIVE_AFTER.match(text[m.end() :])):
            continue
        for token in tokens(bare):
            names.add(stem(fold(token)))
    return frozenset(names)


def _subject_term(term: str) -> bool:
    """A stem that names what a statement is about. Not: change/hedge/time words, digits, and
    words of two characters or fewer in alphabetic scripts other than Latin (Hindi की, है, में,
    से: postpositions and copulas that the English stop list cannot know). Han/kana bigrams
    stay."""
    if term in _NOT_SUBJECT or term.isdigit():
        return False
    if len(term) <= 2 and not term.isascii() and not _UNSPACED_SCRIPT.match(term):
        return False
    return True


def extract(text: str, now: dt.datetime | None = None, subject: str | None = None) -> Statement:
    """The subject, comparable values and cues of one statement (see the module docstring).
    ``now`` resolves weekday names and today/tomorrow/yesterday to dates and gives a year to
    dates written without one; ``subject`` replaces the subject found in the text."""
    text = text or ""
    change = bool(_CHANGE_RE.search(text))
    spans = _Spans()
    values: list[Value] = []
    _dates(text, now, spans, change, values)
    _weekdays(text, now, spans, change, values)
    _times(text, spans, change, values)
    _money(text, spans, change, values)
    _named(text, spans, change, values)
    _statuses(text, spans, change, values)
    _quantities(text, spans, change, values)
    _numbers(text, spans, change, values)
    values.sort(key=lambda v: v.start)

    blanked = list(text)
    for value in values:
        if value.kind != "quantity" or value.key in _BASE_UNIT:
            blanked[value.start : value.end] = " " * (value.end - value.start)
        else:  # "4 engineers": the count is a value, "engineers" stays in the subject
            digits = re.match(_NUM, text[value.start : value.end])
            stop = value.start + (digits.end() if digits else 0)
            blanked[value.start : stop] = " " * (stop - value.start)
    rest = "".join(blanked)
    if subject is not None:
        subject_terms = content_tokens(subject) - _NOT_SUBJECT
        names = _subject_names(subject)
    else:
        subject_terms = frozenset(t for t in content_tokens(rest) if _subject_term(t))
        names = _subject_names(rest)
    event_date = next(
        (v.date for v in values if v.kind == "date" and v.date is not None and not v.negated), None
    )
    valid_until = next((v.date for v in values if v.kind == "until" and v.date is not None), None)
    return Statement(
        text=text,
        subject=frozenset(subject_terms),
        names=names & subject_terms if subject is None else names,
        values=tuple(values),
        change=change,
        additive=bool(_ADDITIVE_RE.search(text)),
        hedged=bool(_HEDGE_RE.search(text)),
        event_date=event_date,
        valid_until=valid_until,
    )


# ---------------------------------------------------------------------------------------------
# Comparison


def subject_similarity(a: Statement, b: Statement) -> float:
    """Jaccard of the two subjects' stems (0.0 when either is empty)."""
    return jaccard(a.subject, b.subject)


def same_subject(a: Statement, b: Statement) -> bool:
    """No clash of names (both name someone, and nobody in common), and the subjects overlap:
    Jaccard above 0.5, or the smaller subject (two stems or more) lies inside the other, which
    has one stem more at most ("the sprint planning notes" is about the notes, not the
    planning)."""
    if a.names and b.names and not (a.names & b.names):
        return False
    if not a.subject or not b.subject:
        return False
    if jaccard(a.subject, b.subject) > 0.5:
        return True
    small, large = sorted((a.subject, b.subject), key=len)
    return len(small) >= 2 and small <= large and len(large - small) <= 1


def loosely_same_subject(a: Statement, b: Statement) -> bool:
    """The looser test used when one statement announces a change ("the landlord raised the
    rent to …"): no clash of names, and two shared stems, or one when the smaller subject has
    two stems at most."""
    if a.names and b.names and not (a.names & b.names):
        return False
    shared = a.subject & b.subject
    return len(shared) >= 2 or (len(shared) == 1 and min(len(a.subject), len(b.subject)) <= 2)


def _date_parts(value: str) -> tuple[str, ...]:
    return tuple(value.split("-"))


def _dates_match(x: str, y: str) -> bool:
    """Two canonical dates agree: every part both state is equal (an unknown year ``????`` and a
    missing day match anything)."""
    px, py = _date_parts(x), _date_parts(y)
    return all(a == b or "????" in (a, b) for a, b in zip(px, py, strict=False))


def _match_dates(left: set[str], right: set[str]) -> bool:
    """Any date of one side agrees with one of the other (see :func:`_dates_match`)."""
    return any(_dates_match(x, y) for x in left for y in right)


def _status_compatible(left: set[str], right: set[str]) -> bool:
    if left & right:
        return True
    return all(x in _LIFECYCLE for x in left | right)


def _kind_conflict(kind: str, a: Statement, b: Statement, key: str | None = None) -> Conflict | None:
    def pick(s: Statement, negated: bool) -> set[str]:
        return {v.value for v in s.of_kind(kind, negated=negated) if key is None or v.key == key}

    pa, pb, na, nb = pick(a, False), pick(b, False), pick(a, True), pick(b, True)
    if kind == "weekday":  # a dated value counts with its weekday when the other side names one
        if pa and not pb and not b.of_kind("weekday", negated=None):
            pb = {WEEKDAYS[v.date.weekday()] for v in b.of_kind("date") if v.date is not None}
        if pb and not pa and not a.of_kind("weekday", negated=None):
            pa = {WEEKDAYS[v.date.weekday()] for v in a.of_kind("date") if v.date is not None}
    equal = _match_dates if kind == "date" else (lambda x, y: bool(x & y))
    negates = (pa and nb and equal(pa, nb)) or (pb and na and equal(pb, na))
    disjoint = bool(pa and pb) and not equal(pa, pb)
    if kind == "status" and disjoint and _status_compatible(pa, pb):
        disjoint = False
    if not (negates or disjoint):
        return None
    return Conflict(kind, tuple(sorted(pa or na)), tuple(sorted(pb or nb)), key or "")


def _progression(a: Statement, b: Statement) -> bool:
    sa = {v.value for v in a.of_kind("status")}
    sb = {v.value for v in b.of_kind("status")}
    return bool(sa and sb and sa != sb and all(x in _LIFECYCLE for x in sa | sb))


def compare(a: Statement, b: Statement) -> Comparison:
    """Whether ``a`` and ``b`` are about the same subject and which of their attributes conflict
    (see the module docstring). Symmetric except for the order of ``left``/``right``."""
    similarity = subject_similarity(a, b)
    certain = same_subject(a, b)
    related = certain or ((a.change or b.change) and loosely_same_subject(a, b))
    additive = a.additive or b.additive
    progression = _progression(a, b)
    shared = a.kinds & b.kinds
    if not related or additive:
        return Comparison(related, similarity, (), additive, progression, shared, certain)
    conflicts: list[Conflict] = []
    for kind in KINDS:
        if progression and kind in {"date", "weekday", "time"}:
            continue  # a plan and its completion are two events at two times
        if kind in {"quantity", "money"}:
            keys = {v.key for v in a.values + b.values if v.kind == kind}
            found = [_kind_conflict(kind, a, b, key) for key in sorted(keys)]
        else:
            found = [_kind_conflict(kind, a, b)]
        conflicts.extend(c for c in found if c is not None)
    if any(c.kind == "date" for c in conflicts):  # the dates' weekdays say nothing more
        conflicts = [c for c in conflicts if c.kind != "weekday"]
    return Comparison(related, similarity, tuple(conflicts), additive, progression, shared, certain)


def is_stale(statement: Statement, now: dt.datetime | dt.date) -> bool:
    """True when the statement says it holds only until a date that is already past."""
    today = now.date() if isinstance(now, dt.datetime) else now
    return statement.valid_until is not None and statement.valid_until < today


# ---------------------------------------------------------------------------------------------
# A newer statement of the same thing (what the gate and current search put first)

# a line that announces its value replaces an earlier one ("now", "moved to", "switching to",
# "ab sofort", "statt", "no longer", "went up to", "renamed")
CHANGE_CUE = re.compile(
    r"\b(?:now|from now on|anymore|no longer|new|moved?|moving|switch(?:ed|ing)?|chang(?:ed|es|ing)|"
    r"went up|gone up|raised|increased|reduced|dropped|cut|postponed|rescheduled|cancel(?:l?ed)?|"
    r"renamed|replaced|instead|took over|retired|left|from next|starting|ab sofort|statt|jetzt|"
    r"neu(?:e[rsn]?)?|ahora|nuev[oa]|désormais|maintenant)\b|->|→",
    re.I,
)
_SLOT_NUMBER = re.compile(
    r"(?:(?:eur|usd|gbp|chf)\s?|[€$£])?\d[\d.,:/-]*"
    r"(?:\s?(?:%|[km]\b|€|(?:eur|euros?|usd|dollars?|gbp|pounds?|quid|chf)\b|(?:am|pm|a\.m\.|p\.m\.|uhr|h)\b))?",
    re.I,
)
_SLOT_PHONE = re.compile(r"(?<![\w.,])\+?\d{2,5}(?:[ /-]\d{2,5}){1,4}(?![\w.,]\d)")


# ---------------------------------------------------------------------------------------------
# Relation: how a newer statement bears on an older one (the one question dreaming, supersede,
# current search and the gate all ask)

# what announces that a value replaced an earlier one, besides :data:`CHANGE_CUE`: a correction
# ("turns out", "actually", "after all"), a thing ended ("called off", "is off", "retired",
# "sold", "removed"), a value moved ("pushed back", "bumped", "reassigned", "revised", "rotated")
# in the languages the held-out notes mix in (German, Spanish, French, Italian, Dutch)
_UPDATE_CUE = re.compile(
    r"\b(?:turns? out|actually|after all|called off|is off|are off|calls? off|retir(?:ed|es|ing)|sold|"
    r"removed|gone off|these days|pushed(?: back)?|bumped|reassigned|revised|rotated|upgraded|"
    r"downgraded|swapped|got (?:a |an )?new|got the|not any ?more|got (?:new|rid)|successor|goes up|"
    r"ruhestand|übernimmt|übernommen|nachfolger(?:in)?|"
    r"verschoben|erh[öo]ht|getauscht|gewechselt|ge[äa]ndert|nicht mehr|seit|"
    r"aplazad[oa]|cambiad[oa]|sube|subi[óo]|baj[óo]|ya no|desde|"
    r"finalement|chang[ée]|reporté|part à la retraite|n'est plus|plus de|"
    r"spostat[oa]|cambiat[oa]|non più|verplaatst|veranderd|niet meer|voortaan)\b",
    re.I,
)
_PLATE = re.compile(r"\b([A-ZÄÖÜ]{1,3})[- ]([A-Z]{1,3})[- ]?(\d{1,4}[EH]?)\b")
# a registration in two groups of capitals and digits, one of them holding both or the second
# ending in a letter ("KDJ 482X", "WU19 KXT", "YD21-HMV"); not a code and an amount ("EUR 1200")
# a flight and an airport ("NZ970 AKL") are not: a plate's first group holds at most two digits
_PLATE_GROUPS = re.compile(
    r"(?<![\w-])([A-Z]{1,2}\d{1,2}|[A-Z]{2,3})[- ](\d{1,4}[A-Z]{1,3}|[A-Z]{2,3})(?![\w-])"
)


def plates(text: str) -> list[tuple[tuple[int, int], str]]:
    """Licence plates in ``text``, each (span, its letters and digits in lower case): "HH-MK 482",
    "HH MK 482" and "HH-MK-482" are "hhmk482"; "KDJ 482X" and "KDJ-482X" are "kdj482x"."""
    found = [(m.span(), "".join(m.groups()).lower()) for m in _PLATE.finditer(text)]
    for m in _PLATE_GROUPS.finditer(text):
        first, second = m.groups()
        if not any(ch.isdigit() for ch in first + second) or any(
            a < m.end() and m.start() < b for (a, b), _ in found
        ):
            continue  # two words in capitals ("AB CD"), or a plate already read
        found.append((m.span(), (first + second).lower()))
    return found


_IDENT = re.compile(
    r"(?<![\w@.-])(?=[\w.+-]*\d)(?=[\w.+-]*[^\W\d_])[\w+-]+(?:[._@][\w+-]+)*|[\w.+-]+@[\w-]+\.[\w.]+"
)


@dataclass(frozen=True)
class Relation:
    """What :func:`relate` finds: ``kind`` is ``same`` (the newer restates the older, maybe in
    other words or formats), ``update`` (the newer gives the same thing a new value, or ends it),
    ``compatible`` (both stand) or ``unknown``; ``confidence`` in [0, 1]; ``reason`` says why in
    one line."""

    kind: str
    confidence: float
    reason: str
    fresh: tuple[str, ...] = ()  # the value shapes whose value changed (money, time, phone, …)

    @property
    def replaces(self) -> bool:
        return self.kind == "update"


@lru_cache(maxsize=8192)
def _extracted(text: str) -> Statement:
    """:func:`extract` without a clock, read once per text: :func:`typed_values` and
    :func:`relate` both need it, for the same lines, on every search in mode current."""
    return extract(text)


# digits as other scripts and keyboards write them, and the signs around them: Arabic percent
# and separators (NFKC already maps full-width forms: "５月", "３．５％", "＠")
_SIGNS = str.maketrans({"٪": "%", "٫": ".", "٬": ","})


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of any script as an ASCII digit and full-width letters and
    signs folded (Unicode NFKC): "٣٠٪" is "30%", "ＴＫ５９０３２" is "TK59032", "९८२३०" is
    "98230". Only for reading values: the text a person wrote is never rewritten."""
    if text.isascii():
        return text
    folded = unicodedata.normalize("NFKC", text).translate(_SIGNS)
    return "".join(
        str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in folded
    )


# a code written in groups: digit groups ("0048 2219 7730", "302-4471829-5561037") and groups of
# capitals and digits ("DE44 5001 0517 5407 3249 31", "LH 2047", "M-KT 4821", "7304 KJB"); a
# group of letters only counts in capitals, at most three ("Flat 4", "3 kg" are no codes)
_GROUP = r"(?:\d+|[A-Z]{1,3}|[A-Z\d]*(?:[A-Z]\d|\d[A-Z])[A-Z\d]*)"
_CODE_RUN = re.compile(rf"(?<![\w.,/:-]){_GROUP}(?:[ -]{_GROUP})+(?![\w/:]|[.,]\d|-\w)")


def _code_runs(text: str) -> list[tuple[tuple[int, int], str, str]]:
    """The codes written in groups in ``text``, each (span, shape, its letters and digits): digits
    only are one ``number`` (no leading zeros, as a number written whole reads) when there are at
    least seven digits, or three groups and five digits ("10-12", "1 250" are no codes); with
    letters, one ``ident`` in lower case when it holds at least three digits and five characters
    ("EK 005", "LH 456"; not "NYC 3"). A group of letters before a group of eight characters or
    more is its label ("ID", "DNI", "VIN"), not part of it."""
    out = []
    for m in _CODE_RUN.finditer(text):
        groups = re.split(r"[ -]", m.group(0))
        span = m.span()
        if groups[0].isalpha() and len(groups[1]) >= 8:  # "ID 29804120104537", "VIN WVWZZZ1KZ…":
            span = (span[0] + len(groups[0]) + 1, span[1])  # a label, then the code
            groups = groups[1:]
        compact = "".join(groups)
        digits = sum(ch.isdigit() for ch in compact)
        if compact.isdigit():
            if digits >= 7 or (len(groups) >= 3 and digits >= 5):
                out.append((span, "number", compact.lstrip("0") or "0"))
        elif digits >= 3 and len(compact) >= 5:
            out.append((span, "ident", compact.lower()))
    return out


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# a day in a month written in another language, with babel's month names (readers.month_names):
# "14 marca", "5 декабря", "8 de enero", "9. Mai", "juillet 4", with a year when one follows
_WORD = r"[^\W\d_][^\s\d,;:()/]*"
_DAY_WORD = re.compile(rf"(?<![\d.,:/])(\d{{1,2}})\.?\s*(?:de\s+|of\s+)?({_WORD})(?:,?\s+(\d{{4}})\b)?")
_WORD_DAY = re.compile(rf"(?<!\w)({_WORD})\s+(\d{{1,2}})(?![\d.,:/]\d|\w)(?:,?\s+(\d{{4}})\b)?")
# written in digits: year first ("2026.05.30"), day and month with dots ("27.11.", "03.04.2026",
# "2.2.2026"; without a year the month in two digits, so "1.5." stays a number), in the East Asian
# way ("2026年10月2日", "5월 30일")
_YMD = re.compile(r"(?<![\d.,/-])(\d{4})[./-](\d{1,2})[./-](\d{1,2})(?![\d.,/-]\d)")
_DMY_DOTS = re.compile(r"(?<![\d.,/-])(\d{1,2})\.(?:(\d{2})\.(?:(\d{4})\b|(?!\d))|(\d)\.(\d{4})\b)")
_CJK_DATE = re.compile(r"(?:(\d{4})\s*[年년]\s*)?(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")
# day and month with a slash, or all three with slashes or hyphens ("14/3", "04/07/2026", "12-9-2026")
_SLASHED = re.compile(r"(?<![\d.,/:-])(\d{1,2})(/|-)(\d{1,2})(?:\2(\d{4}|\d{2}))?(?![\d/:]|[.,]\d|-\d)")


def written_days(text: str) -> list[tuple[tuple[int, int], str]]:
    """Days of a month ``text`` writes the ways :func:`extract` does not read, each (span, value
    as :func:`extract` writes it: ``2026-03-14``, or ``????-03-14`` without a year). A day and a
    month in digits are read day first when the day is over 12 or the slash has a year after it
    written the European way, month first when the month's part is over 12; when both could be
    the month ("3/4", "7/4") the line does not say which it is, and that date stays unread
    (dateparser's reading of the line's language merged two different days of values-1 for one
    day it read right)."""
    from . import readers

    found: list[tuple[tuple[int, int], int | None, int, int]] = []
    names = readers.month_names() if re.search(r"\d", text) else {}
    for m in _DAY_WORD.finditer(text):
        month = names.get(m.group(2).casefold().rstrip("."))
        if month:
            found.append((m.span(), int(m.group(3)) if m.group(3) else None, month, int(m.group(1))))
    for m in _WORD_DAY.finditer(text):
        month = names.get(m.group(1).casefold().rstrip("."))
        if month:
            found.append((m.span(), int(m.group(3)) if m.group(3) else None, month, int(m.group(2))))
    for m in _YMD.finditer(text):
        found.append((m.span(), int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _DMY_DOTS.finditer(text):
        year = m.group(3) or m.group(5)
        found.append((m.span(), int(year) if year else None, int(m.group(2) or m.group(4)), int(m.group(1))))
    for m in _CJK_DATE.finditer(text):
        found.append((m.span(), int(m.group(1)) if m.group(1) else None, int(m.group(2)), int(m.group(3))))
    for m in _SLASHED.finditer(text):
        if m.group(2) == "-" and not m.group(4):
            continue  # "10-12": a range
        first, second = int(m.group(1)), int(m.group(3))
        year = int(m.group(4)) + (2000 if len(m.group(4)) == 2 else 0) if m.group(4) else None
        if first > 12 >= second:
            found.append((m.span(), year, second, first))
        elif second > 12 >= first:
            found.append((m.span(), year, first, second))
    out = []
    for span, year, month, day in found:
        if year is not None and year > 2400 and re.search(r"[\u0e00-\u0e7f]", text):
            year -= 543  # a Thai line's year is the Buddhist era's
        made = _make_date(year, month, day)
        if made is not None:
            out.append((span, made[0]))
    return out


# Chinese, Japanese, Korean and Thai: words are not separated by spaces (values are read with
# these letters spaced out; :data:`_UNSPACED_SCRIPT`, Thai aside, keeps CJK bigrams as subjects)
UNSPACED_LETTERS = re.compile(
    r"[\u0e00-\u0e7f\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]"
)
# times :func:`extract` does not read: "17h30", "7.30pm", "15.00 Uhr", "kl. 15.00", "午後3時",
# "下午3点半", "오후 7시 반"
_TIME_WRITTEN = re.compile(
    r"(?<![\d.,:])(\d{1,2})(?:h(\d{2})|[.](\d{2})\s*(am|pm|a\.m\.|p\.m\.|uhr|h)(?!\w))"
    r"|\bkl(?:\.|okken)?\s*(\d{1,2})[.:](\d{2})\b",
    re.I,
)
_TIME_EAST = re.compile(
    r"(午前|午後|오전|오후|上午|下午|晚上|早上)?\s*(\d{1,2})\s*[時时시点點](?![間间간])\s*(?:(\d{1,2})\s*[分분]|(半|반))?"
)
_AFTERNOON = ("午後", "오후", "下午", "晚上")


def _written_times(text: str) -> list[tuple[tuple[int, int], str]]:
    """Times of day written the ways :func:`extract` does not read, each (span, ``HH:MM``)."""
    out = []
    for m in _TIME_WRITTEN.finditer(text):
        if m.group(5):
            hour, minute = int(m.group(5)), int(m.group(6))
        else:
            hour, minute = int(m.group(1)), int(m.group(2) or m.group(3))
            half = (m.group(4) or "").lower().replace(".", "")
            if half in ("am", "pm"):
                if not 1 <= hour <= 12:
                    continue
                hour = hour % 12 + (12 if half == "pm" else 0)
        if hour <= 23 and minute <= 59:
            out.append((m.span(), f"{hour:02d}:{minute:02d}"))
    for m in _TIME_EAST.finditer(text):
        hour = int(m.group(2))
        minute = 30 if m.group(4) else int(m.group(3) or 0)
        if m.group(1) in _AFTERNOON and hour < 12:
            hour += 12
        if hour <= 23 and minute <= 59:
            out.append((m.span(), f"{hour:02d}:{minute:02d}"))
    return out


# a percentage written before its number ("%40" in Turkish), or a unit whose CLDR name comes first
# ("yüzde 40", "asilimia 40", "kilogramu 5")
_UNIT_BEFORE = re.compile(r"(?:(?<![\w%])%|(?<!\w)([^\W\d_]+))\s?(\d+(?:[.,]\d+)?)(?![\d%]|[.,]\d)")


def _units_before(text: str) -> list[tuple[tuple[int, int], str]]:
    """Quantities written unit first, each (span, value as :func:`extract` writes a quantity)."""
    from . import readers

    out = []
    for m in _UNIT_BEFORE.finditer(text):
        if m.group(1) is None:
            dimension, factor = "ratio", Decimal(1)
        else:
            found = (
                readers.unit_names().get(m.group(1).casefold())
                if not m.group(1).isascii() or len(m.group(1)) > 3
                else None
            )
            if found is None or not found[2]:
                continue
            dimension, factor = found[0], Decimal(found[1])
        amount = _decimal(m.group(2))
        if amount is not None:
            out.append((m.span(), f"{dimension}:{_in_base_unit(amount, dimension, factor)}"))
    return out


# a flight number: an airline's two-character code and one to four digits, written with or without
# leading zeros ("EK 005" is "EK5", "BA0419" is "BA419")
_FLIGHT = re.compile(r"^([a-z]{2}|[a-z]\d|\d[a-z])0+(\d{1,4})$")


@lru_cache(maxsize=8192)
def typed_values(text: str) -> frozenset[tuple[str, str]]:
    """The values a line states, each as (shape, canonical form), so that one value written two
    ways is one value: money and quantities as :func:`extract` reads them (``€1.200`` and ``EUR
    1,200`` are ``EUR 1200``), dates, weekdays and times canonical, phone numbers as their
    national digits (without the country code), licence plates and identifiers without case or
    separators (``HH-MK 482`` = ``HH MK 482``), bare numbers as written; digits of any script as ASCII digits (:func:`ascii_digits`), a code
    written in groups as one (``0048 2219 7730``, ``LH 2047`` = ``lh2047``), a flight number
    without leading zeros."""
    text = ascii_digits(text)
    written = [("date", span, day) for span, day in written_days(text)]
    written += [("time", span, time) for span, time in _written_times(text)]
    written += [("quantity", span, q) for span, q in _units_before(text)]
    # words of scripts written without spaces are no identifiers: "振込手数料3.5%" is a fee of 3.5%
    written_text, text = text, UNSPACED_LETTERS.sub(" ", text)
    st = _extracted(text)
    out: set[tuple[str, str]] = set()
    taken: list[tuple[int, int]] = []
    read = [(v.start, v.end) for v in st.values if v.kind in ("date", "until", "time", "money")]
    for shape, span, value in written:
        if not any(a < span[1] and span[0] < b for a, b in read + taken):
            out.add((shape, value))
            taken.append(span)
            read.append(span)
    for span, shape, compact in _code_runs(text):
        if not any(a < span[1] and span[0] < b for a, b in read):
            out.add((shape, compact))
            taken.append(span)
    for span, plate in plates(text):
        out.add(("ident", plate))
        taken.append(span)
    money = [(v.start, v.end) for v in st.values if v.kind == "money"]
    from . import readers

    library = readers.available("amounts") and any(ch.isdigit() for ch in text)
    for amount, code in readers.amounts(written_text, words=False) if library else ():  # "3,800円"
        # price-parser and babel's currencies (docs/readers.md: F1 0.774 at precision 0.953,
        # against 0.460 for extract's money): "1.200,50 €", "CHF 1'250.–", "12k", "R$ 90"
        out.add(("money", f"{code or ''} {_canonical_number(amount)}".strip()))
    if library:  # the amounts are read: their digits are no numbers or quantities here
        taken.extend(m.span() for m in _LOCALE_MONEY.finditer(text))
    for m in (
        () if library else _LOCALE_MONEY.finditer(text)
    ):  # "1.200,50 €", "1 150 €", "CHF 1'250.–": as extract cannot
        if any(a < m.end() and m.start() < b and b - a >= len(m.group(0).rstrip(".,–- ")) for a, b in money):
            continue  # extract read this amount whole
        parsed = _locale_amount(m.group("num") or m.group("num2"))
        if parsed is not None:
            cur = (m.group("cur") or m.group("cur2")).lower().rstrip(".")
            currency = (
                _CURRENCY_SYMBOLS.get(cur) or _CURRENCY_WORDS.get(cur) or ("CHF" if cur == "fr" else "")
            )
            out.add(("money", f"{currency} {_canonical_number(parsed)}"))
            taken.append(m.span())
    for v in st.values:
        if v.negated or v.kind == "status" or any(a < v.end and v.start < b for a, b in taken):
            continue
        if library and v.kind == "money" and any(v.value.split()[-1] == x.split()[-1] for _, x in out):
            continue  # the library read this amount (extract still reads "50 bucks")
        if v.kind == "number" and any(shape == "money" and x.split()[-1] == v.value for shape, x in out):
            continue  # "3,800円": the amount's number, its currency a character of its script
        unit = re.sub(r"^[\d.,]+\s?", "", v.text).lower()
        if (
            v.kind == "quantity"
            and v.key not in _BASE_UNIT
            and (is_stopword(unit) or stem(unit) in _NOT_SUBJECT)
        ):
            out.add(("number", re.sub(r"\D", "", v.text)))  # "2148 now": a number, not 2148 "now"s
        elif v.kind == "quantity":
            out.add(("quantity", f"{v.key}:{v.value}"))
        else:
            out.add((v.kind, v.value))
        taken.append((v.start, v.end))
    phone_digits: list[str] = []
    undated = text  # a date's digits are no phone number ("03.04.2026")
    for a, b in read:
        undated = undated[:a] + " " * (b - a) + undated[b:]
    if sum(ch.isdigit() for ch in undated) >= 7:
        from . import readers  # phonenumbers' matcher (docs/readers.md: F1 0.915 against 0.615)

        if readers.available("phones"):
            for number in readers.phones(undated):
                # the number without its country code: "07912 340118" has no country of its own
                # (the matcher tries Germany before Britain), "+44 7912 340118" has one; in one
                # person's notes both are one number
                out.add(("phone", readers.national_number(number)))
                phone_digits.append(number.lstrip("+"))
        else:
            for m in _SLOT_PHONE.finditer(undated):
                digits = re.sub(r"\D", "", m.group(0))
                if len(digits) >= 7 and not re.search(r"[./:]", m.group(0)):
                    out.add(("phone", digits[-9:]))  # "+49 152 …" and "0152 …": the subscriber's
                    phone_digits.append(digits)
                    taken.append(m.span())
    for m in _IDENT.finditer(text):
        if any(a <= m.start() < b or a < m.end() <= b for a, b in taken):
            continue
        if _EMAIL.fullmatch(m.group(0).rstrip(".")):  # "j_okafor@…" and "j.okafor@…" are two people
            out.add(("email", m.group(0).rstrip(".").lower()))
        else:
            out.add(("ident", re.sub(r"[\W_]", "", m.group(0)).lower()))
    out = {(shape, _FLIGHT.sub(r"\1\2", v) if shape == "ident" else v) for shape, v in out}
    if phone_digits:  # a phone number's digit groups are no numbers, nor identifiers
        out = {
            (shape, v)
            for shape, v in out
            if shape not in ("number", "ident") or not any(re.sub(r"\D", "", v) in d for d in phone_digits)
        }
    return frozenset(out)


def typed_value_pair(older: str, newer: str) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str]]]:
    """:func:`typed_values` of two lines, each read in the light of the other: a date without its
    year is the other line's date of that day and month ("14th March" and "2026-03-14"), an
    amount without its currency the other line's amount of that number in a currency ("~3k" and
    "£3,000"). Two lines that each give a year or a currency keep them."""
    a, b = typed_values(older), typed_values(newer)
    return _completed(a, b), _completed(b, a)


def _completed(
    values: frozenset[tuple[str, str]], other: frozenset[tuple[str, str]]
) -> frozenset[tuple[str, str]]:
    out = set(values)
    for shape, value in values:
        if shape in ("phone", "number") and len(value) >= 7 and value.isdigit():
            # one phone number read as a phone in one line and as a number in the other ("412 87
            # 065" and "+4741287065"), or with a trunk prefix the matcher keeps in one (Hungary's
            # "06 30 …" is "+36 30 …", one digit more): the other line's reading, the shorter. A
            # country or area code before the other's digits keeps them apart ("+420 737 …" /
            # "+421 737 …", "(11) 98472-3061" / "+55 21 98472-3061")
            same = {
                (s, v)
                for s, v in other
                if s in ("phone", "number")
                and "phone" in (s, shape)
                and v.isdigit()
                and len(v) >= 7
                and (v == value or (s == shape and len(v) == len(value) - 1 and value.endswith(v)))
            }
            if len(same) == 1:
                out.discard((shape, value))
                out.add(("phone", same.pop()[1]))
            continue
        if shape == "date" and value.startswith("????-"):
            full = {v for s, v in other if s == "date" and v[4:] == value[4:] and not v.startswith("????")}
        elif shape == "money" and " " not in value:
            full = {v for s, v in other if s == "money" and v.endswith(f" {value}")}
        else:
            continue
        if len(full) == 1:
            out.discard((shape, value))
            out.add((shape, full.pop()))
    return frozenset(out)


_WEAK_SHAPES = frozenset({"number"})
# values that name one thing each: a new one with a change word and one shared word is an update
_STRONG_SHAPES = frozenset({"phone", "ident", "email", "money", "time", "weekday", "date"})
_CUR = r"€|\$|£|eur|euros?|usd|chf|gbp|fr\.?"
_LOCALE_MONEY = re.compile(
    rf"(?:(?P<cur>{_CUR})\s?(?P<num>\d[\d.,' ]*\d|\d)(?:[.,]–|[.,]-)?|(?P<num2>\d[\d.,' ]*\d|\d)\s?(?P<cur2>{_CUR}))(?!\w)",
    re.I,
)


def _locale_amount(number: str) -> Decimal | None:
    """An amount written in any of the usual locale formats: ``1.200,50`` and ``1,200.50`` and
    ``1 200,50`` and ``1'250`` are 1200.50 / 1250 (the last separator followed by exactly two
    digits, or one, is the decimal one; three digits after it mark thousands)."""
    number = number.replace(" ", "").replace("'", "").replace("\u202f", "")
    seps = [c for c in number if c in ".,"]
    if not seps:
        return _decimal(number)
    last = max(number.rfind("."), number.rfind(","))
    tail = number[last + 1 :]
    if len(tail) == 3 and (len(seps) > 1 or number[last] == "." and "," not in number or number[last] == ","):
        if len(set(seps)) == 1 and len(seps) >= 1 and all(len(g) == 3 for g in re.split(r"[.,]", number)[1:]):
            return _decimal(re.sub(r"[.,]", "", number))
    whole = re.sub(r"[.,]", "", number[:last])
    return _decimal(f"{whole}.{tail}")


# words that name the kind of value a line states, not what it is about: two lines sharing only
# these ("the gym costs $45 per month", "the licence costs EUR 1,450 per year") share no subject
_SLOT_WORDS = frozenset(
    stem(w)
    for w in """cost costs price prices fee fees rate number numbers phone mobile budget amount total
    time times date dates day days per month months monthly year years yearly annual annually week
    weeks weekly daily hour hours now new old current""".split()
) | frozenset(stem(w) for w in (*MONTHS, *WEEKDAYS, *(m[:3] for m in MONTHS), *WEEKDAY_SHORT_FORMS))
# (month and weekday names are values: two lines sharing "March" share no subject)


# the words of :data:`_NOT_SUBJECT` but the roles ("my manager", "the owner", "who leads it"):
# those say what a line is about when the value is a name
_NOT_ABOUT = _NOT_SUBJECT - frozenset(
    stem(w) for w in "own owner lead leads manage manager handle assigned responsible charge".split()
)


def _coverage(older: str, newer: str, drop: frozenset[str] = frozenset()) -> tuple[float, int, int]:
    """How much of what the older line is about the newer line repeats: the share of the older
    line's content stems (values, words naming a kind of value, and ``drop`` taken out) found in
    the newer, the count shared, and the newer line's count. When the older line has nothing but
    such words, they count."""
    a = content_tokens(_SLOT_NUMBER.sub(" ", older)) - _NOT_ABOUT
    b = content_tokens(_SLOT_NUMBER.sub(" ", newer)) - _NOT_ABOUT
    if a - _SLOT_WORDS - drop:
        a, b = a - _SLOT_WORDS - drop, b - _SLOT_WORDS - drop
    # a word inside a compound counts ("Miete" in "Warmmiete", "Kita" in "Kita-Tür")
    shared = sum(1 for x in a if x in b or (len(x) >= 4 and any(x in y for y in b if len(y) > len(x))))
    return shared / max(1, len(a)), shared, len(b)


# where one note line holds several statements: two spaces, a spaced dash or bar, a semicolon,
# brackets, an emoji ("gym dd went out £32 💸  milo swimming tues 5.15 - need goggles")
_CLAUSE_BREAK = re.compile(r"\s{2,}|\s[-–—|]\s|[;()]|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF\u2B50]+\s*")
MAX_CLAUSES = 4


def clauses(text: str) -> list[str]:
    """The statements one line holds (at most :data:`MAX_CLAUSES`, two words each at least)."""
    parts = [" ".join(p.split()) for p in _CLAUSE_BREAK.split(text)]
    return [p for p in parts if len(p.split()) >= 2][:MAX_CLAUSES]


@lru_cache(maxsize=8192)
def relate(older: str, newer: str) -> Relation:
    """:func:`relate_statements` of the two lines, or of the clauses they hold when a line holds
    several (:func:`clauses`): the strongest update between a clause of each, else the lines'."""
    whole = relate_statements(older, newer)
    a, b = clauses(older), clauses(newer)
    if whole.kind == "update" or (len(a) < 2 and len(b) < 2):
        return whole
    best = max(
        (relate_statements(x, y) for x in a or [older] for y in b or [newer]),
        key=lambda r: (r.kind == "update", r.confidence),
    )
    return best if best.kind == "update" else whole


def surely_updates(older: str, newer: str) -> bool:
    """Whether ``newer`` may hide ``older`` (strike it through in MEMORY.md): the two lines, or a
    statement of each (:func:`clauses`), relate as an update of confidence 0.9 (a change cue, a
    changed value, most of the older words; :func:`relate_statements`) and the newer one speaks
    of nothing the older does not (its subject lies inside the older's): "my number is now 0152
    2290 4471" after "my number is 0176 4411 2290". Anything less is *contested*: both stay
    current, newest first. Below this bar the readers were right about half the time on the
    written months' corrections (docs/results.md)."""
    for x in (older, *clauses(older)):
        for y in (newer, *clauses(newer)):
            relation = relate_statements(x, y)
            if relation.kind != "update" or relation.confidence < 0.9:
                continue
            subject = _extracted(y).subject
            if subject and subject <= _extracted(x).subject:
                return True
    return False


def relate_statements(older: str, newer: str) -> Relation:
    """How ``newer`` (written later) bears on ``older``: the one comparison of two statements
    that dreaming, the supersede gate, current search and the gate's note share.

    ``update`` when the newer line is about what the older one is about and either gives a value
    of a shape the older one holds (money, time, date, phone, weekday, identifier…) a new value,
    or announces that it changed or ended ("cancelled", "no longer", "turns out", "pushed to").
    Confidence: 0.9 when a change cue, a changed value and most of the older line's words agree;
    0.7 for a changed value with most words and no cue, or a cue with few words; 0.6 for a cue
    and no changed value ("the trip is called off"). ``same`` when every value of the older
    line is in the newer one and nothing is new; ``compatible`` otherwise: another person
    (names clash), an addition ("also", "a second"), a plan and its completion, another subject.
    Never used to hide a statement on its own: the supersede gate closes an interval only on an
    update of confidence 0.9 whose subjects are surely the same (see ``decide.plan``)."""
    if not older.strip() or not newer.strip():
        return Relation("unknown", 0.0, "an empty statement")
    a, b = _extracted(older), _extracted(newer)
    comparison = compare(a, b)
    if comparison.additive:
        return Relation("compatible", 0.7, "an additional fact")
    if comparison.progression:
        return Relation("compatible", 0.7, "a later stage of the same plan")
    old_values, new_values = typed_value_pair(older, newer)
    held = {shape for shape, _ in old_values}  # "15:30 statt 16:30": the old value may be restated
    came = {shape for shape, _ in new_values - old_values}
    fresh = tuple(sorted((held & came) - _WEAK_SHAPES))
    weak = bool((held & came) & _WEAK_SHAPES)
    cue = bool(CHANGE_CUE.search(newer) or _UPDATE_CUE.search(newer) or b.change)
    coverage, shared, _ = _coverage(older, newer)
    clash = _names_clash(older, newer)
    if clash:
        names = _names(older, newer) | _names(newer, older)
        unnamed, _, _ = _coverage(older, newer, names)
        if cue and unnamed >= 0.75:  # "my manager is now Priyanka Rao": the name is the value
            return Relation("update", 0.75, "a new name for it and a change word", ("name",))
        if not (cue and coverage >= 0.5):
            return Relation("compatible", 0.7, "names someone or something else")
    if fresh:
        if cue and shared >= 1 and (coverage >= 0.3 or set(fresh) & _STRONG_SHAPES):
            conf = 0.9 if (coverage >= 0.5 or comparison.certain) and not clash else 0.75
            return Relation("update", conf, f"new {'/'.join(fresh)} and a change word", fresh)
        if shared >= 1 and coverage >= 0.75:  # every word of the older line but its value
            return Relation("update", 0.7, f"same words, new {'/'.join(fresh)}", fresh)
    if old_values and old_values <= new_values and coverage >= 0.5 and not cue:
        return Relation("same", 0.8, "restates it")
    if cue and not clash and shared >= 1 and (coverage >= 0.4 or coverage >= 0.3 and _ENDED.search(newer)):
        if weak or not (new_values - old_values) or _ENDED.search(newer):
            return Relation("update", 0.6, "announces a change of it")
    if comparison.related and not comparison.conflicts:
        return Relation("compatible", 0.6, "same subject, compatible values")
    return Relation("compatible" if not comparison.related else "unknown", 0.5, comparison.reason)


def _names(text: str, other: str) -> frozenset[str]:
    """The names in ``text`` (:func:`_subject_names`), with a capitalised first word counted
    when the other line names it too ("Emma goes to …" after "Emma's school …")."""
    names = set(_subject_names(text))
    folded_other = fold(other)
    for m in re.finditer(r"(?:^|[.!?;:]\s+)([A-ZÀ-Ý][\w'’-]+)", text):
        bare = re.sub(r"['’]s$", "", m.group(1))
        if len(bare) > 2 and re.search(rf"\b{re.escape(fold(bare))}", folded_other):
            names.add(stem(fold(bare)))
    return frozenset(names)


def _names_clash(older: str, newer: str) -> bool:
    """Both lines name someone or something and no name is shared: "Anna's number" and "Ben's
    number". A name inside another counts as shared ("Zahnarzt", "Zahnarzttermin")."""
    a, b = _names(older, newer), _names(newer, older)
    if not a or not b:
        return False
    return not any(x == y or (min(len(x), len(y)) >= 4 and (x in y or y in x)) for x in a for y in b)


_ENDED = re.compile(
    r"\b(?:cancell?ed|called off|is off|no longer|not any ?more|anymore|retired|sold|removed|"
    r"switched|renamed|replaced|instead|gone off|left|quit|moved|ya no|nicht mehr|n'est plus|niet meer)\b",
    re.I,
)


def restates_with_new_value(older: str, newer: str) -> bool:
    """Whether ``newer`` (written later) replaces what ``older`` states (:func:`relate` finds an
    update). Used to lead with the newest statement and mark the older, never to hide one."""
    return relate(older, newer).kind == "update"


def differing_values(older: str, newer: str) -> bool:
    """Both lines state a value of one kind (money, time, phone, date, identifier…; a bare number
    counts too), the newer a different one, and they name no different people: candidates for
    "the newer one holds" that :func:`relate` could not call an update."""
    a, b = typed_value_pair(older, newer)
    shapes = {shape for shape, _ in a - b} & {shape for shape, _ in b - a}
    return bool(shapes) and not _names_clash(older, newer)


def _holds_whole(a: str, b: str) -> bool:
    fa, fb = " ".join(tokens(a)).casefold(), " ".join(tokens(b)).casefold()
    short, long = sorted((fa, fb), key=len)
    return bool(short) and f" {short} " in f" {long} " and 2 * len(short) >= len(long)


def states(line: str, claim: str) -> bool:
    """Whether ``line`` states ``claim`` (the wiki counts a cited line as evidence only then):
    it gives none of the claim's values another value (:func:`relate`), it holds a value of the
    claim when both hold values of one kind, and it repeats half the claim's words (a third when a
    value is shared), names aside. A line that is the claim, or holds it whole (or is held whole
    by it, as at least half of it: a consolidated item may open with its day's title), states it,
    whatever change it announces: the claim announces the same."""
    if _holds_whole(claim, line):
        return True
    if relate(claim, line).kind == "update" or relate(line, claim).kind == "update":
        return False
    a, b = typed_value_pair(claim, line)
    shared_value = bool(a & b)
    kinds = {shape for shape, _ in a} & {shape for shape, _ in b}
    if kinds and not shared_value:
        return False
    names = _names(claim, line) | _names(line, claim)  # two lines naming the same people can
    coverage, shared, _ = _coverage(claim, line, names)  # state different things about them
    return shared >= 1 and coverage >= (1 / 3 if shared_value else 0.5)
