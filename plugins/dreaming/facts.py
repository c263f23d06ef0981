"""Facts, not lines: group the candidates that state or elaborate one fact (pure, plus a vector
cache).

A fact is often written down in different words on different days ("Fernwood raised a $2M seed
led by Acme Capital", "Acme Capital put up the lead cheque in Fernwood's $2M round"). Each line is
its own candidate; the deep phase scores *groups* of them, so the recalls, queries, days and
occurrences of all the lines count for the fact.

Two candidates state the same fact when they share a **subject** (a name: a capitalised word that
is not a stop word, or the subject a line was written under) and either

- a **value** (a token with a digit: a date, an amount, a time, a count), or
- a second, different name ("Fernwood" and "Leipzig"; "Emma Rees" is one name), or
- embedding **similarity** at least ``fact_cosine`` (when an embedder is configured; 0.02 more
  when only one of the two states a value), or
- without an embedder, content-word Jaccard (names and values left out) at least ``fact_jaccard``.

Two statements whose values all differ ("May 12" and "May 19"), or that each name something the
other does not in the same place (an office in Hamburg, an office in Dresden) or while sharing no
other content word, are never one fact: that is a
correction, which REM handles. Without a shared subject only near-identical wording joins them
(content Jaccard >= ``fact_jaccard_unnamed``). Measured on the persona generator's paraphrases (evals/bench_dream.py
``--grouping``): a shared name plus cosine alone cannot tell "Coach Nora trains me Tue/Thu" from
"Coach Nora charges EUR 55" apart at a lower bar, which is why the bar is where it is.

Groups are built strongest pair first (union-find); two groups join only when no member of one
contradicts a member of the other (see :func:`conflicting`) and more than ``LINKAGE`` of their
cross pairs state one fact on their own (no chaining through one borderline pair); a wording left
alone just under the bar joins a group that shares its subject and a rare word (``JOIN_RELIEF``);
and two lines of the **same daily** never end
up in one group: a note does not state one fact twice, while it often states two facts about one
subject side by side.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from lifelong.contracts import PluginContext
from lifelong.facts import MONTH_WORDS, MONTHS, WEEKDAYS, plates
from lifelong.text import (
    CHATTER,
    STOPWORDS,
    TITLES,
    content_tokens,
    jaccard,
    spelled_numbers,
    stem,
    without_titles,
    words,
)

from .themes import concept_tags

_TITLES = frozenset(t.lower() for t in TITLES)  # "Dr." says nothing about which fact
_content_tokens = lru_cache(maxsize=100_000)(content_tokens)  # a line's words, once per text
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")  # "14th" is the 14 of "14 March"
_NOT_SUBJECTS = (
    frozenset(MONTH_WORDS)
    | frozenset(WEEKDAYS)
    | frozenset(
        "eur usd gbp chf note reminder correction update todo fyi dr mr mrs ms prof new no keep".split()
    )
)


@dataclass(frozen=True)
class FactView:
    """What grouping looks at for one candidate."""

    key: str
    text: str
    subjects: frozenset[str]
    values: frozenset[str]
    rest: frozenset[str]  # content tokens that are neither subjects nor values
    paths: frozenset[str]
    phrases: frozenset[str] = frozenset()
    strong: frozenset[str] = frozenset()  # values that identify (see _strong_values)
    ident: frozenset[str] = frozenset()  # of those, the ones that are not part of a date
    kinds: frozenset[str] = frozenset()  # what the strong values measure (see _kinds)


_ABBREV = re.compile(
    r"\b(Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|Dept|No|vs|[A-Z])\.$"
)  # a title, an initial ("A. Vermeulen")
# the start of a sentence, or of a quotation (a quoted word is capitalised as a sentence is:
# 'We did numbers. "Zwänzg" — okay', 'she just said "Fine"')
_SENTENCE_START = re.compile(r"(^|[.!?:;]\s+|\s[-–—]\s+)$|[\"“„«‘]$|(?:^|\s)'$")


@lru_cache(maxsize=100_000)
def _capitalised(text: str) -> tuple[tuple[str, bool], ...]:
    """(stem, known as a name from this line alone?) of every capitalised word that may be a
    name. A word that opens a sentence or a quotation is not known from here, nor one in capitals
    ("FIRST", "VAW"): emphasis or an acronym, which :func:`names_seen` tells apart."""
    out = []
    for m in _WORD.finditer(text):
        t = m.group(0)
        low = t.lower()
        if not t[:1].isupper() or len(low) < 2 or any(ch.isdigit() for ch in low):
            continue  # "N2", "F3", "LH1234": a code is a value (``values_of``), not a name
        if low in STOPWORDS or low in CHATTER or low in _NOT_SUBJECTS or low.rstrip("s") in _NOT_SUBJECTS:
            continue
        before = text[: m.start()]
        first = (bool(_SENTENCE_START.search(before)) and not _ABBREV.search(before.rstrip())) or t.isupper()
        for w in words(t):
            out.append((stem(w), first))
    return tuple(out)


_LOWER_WORD = re.compile(r"(?<![\w'’-])[^\W\d_A-Z][^\W\d_]*(?![\w'’-])")


@lru_cache(maxsize=100_000)
def _case_stems(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(stems of the words written all in lower case: used as common words, stems of the words
    written in capitals: "VAW", "FIRST"), once per line (every night reads every candidate)."""
    lower = frozenset(stem(x) for w in _LOWER_WORD.findall(text) if w.islower() for x in words(w))
    capitals = frozenset(
        stem(x)
        for m in _WORD.finditer(text)
        if (w := m.group(0)).isupper() and len(w) >= 2 and not any(ch.isdigit() for ch in w)
        for x in words(w)
    )
    return lower, capitals


def names_seen(texts: Iterable[str]) -> frozenset[str]:
    """Stems of names: capitalised words seen somewhere not at the start of a sentence, and words
    in capitals that the notes never write in lower case ("VAW", "KPLC"; "FIRST" is emphasis when
    "first" is written elsewhere). A word only ever capitalised because it opens a sentence
    ("Coffee at ...") is not one."""
    names: set[str] = set()
    lower: set[str] = set()
    capitals: set[str] = set()
    for t in texts:
        low, caps = _case_stems(t)
        lower |= low
        capitals |= caps
        names.update(s for s, first in _capitalised(t) if not first)
    return frozenset(names | (capitals - lower))


def subjects_of(text: str, names: frozenset[str] | None = None) -> frozenset[str]:
    """Names in ``text``: capitalised words (not stop words, months, weekdays) that are not at the
    start of a sentence, or that are and are known as names from other lines (``names``)."""
    return frozenset(s for s, first in _capitalised(text) if not first or (names is not None and s in names))


@lru_cache(maxsize=100_000)
def _stems(text: str) -> tuple[str, ...]:
    """The stems of every word of ``text`` in order (a line meets many others in grouping)."""
    return tuple(stem(w) for w in words(text))


def name_phrases(text: str, subjects: frozenset[str]) -> frozenset[str]:
    """Runs of adjacent subject words ("emma ree", "acm capit", "leipzig"), in any order ("Beat
    Hürlimann" and "Hürlimann (Beat)" are one name): two lines naming the same two different
    things are about one fact."""
    phrases, run = set(), []
    for s in _stems(text):
        if s in subjects:
            run.append(s)
            continue
        if run:
            phrases.add(" ".join(sorted(run)))
        run = []
    if run:
        phrases.add(" ".join(sorted(run)))
    # a phrase inside another ("emma" in "emma ree") is the same name
    return frozenset(p for p in phrases if not any(p != q and p in q.split(" ") for q in phrases))


_HOUR_WORDS = {
    w: i + 1 for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split())
}
_CLOCK = re.compile(
    r"\b(?:(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?|(?P<w>"
    + "|".join(_HOUR_WORDS)
    + r"))\s*(?P<part>[ap]\.?m\b\.?|in the (?:morning|afternoon|evening)|at night|o'?clock)"
    r"|\b(?P<noon>noon|midday|midnight)\b"
    r"|\b(?P<H>[01]?\d|2[0-3]):(?P<M>[0-5]\d)\b(?![.:]\d)",
    re.I,
)
_HOUR = r"(?P<h>1[0-2]|[1-9]|" + "|".join(_HOUR_WORDS) + r")"  # an hour of the clock, in digits or words
# an hour after "at" with no part of the day, ending a clause or before "on", "every"... ("every
# Saturday at nine.", "at 7 on Fridays"; not "at one point", "at 3 flats"): the morning's or the
# evening's, so it is the same time as "9am" or as "9 pm"
_BARE_HOUR = re.compile(
    r"\bat "
    + _HOUR
    + r"(?=\s*(?:$|[.,;!?)](?!\d)|[—–-]\s|(?:sharp|on|every|each|tonight|today|tomorrow|and)\b))",
    re.I,
)


# "quarter past five", "half past 6 in the evening", "quarter to nine" (British "half five" is 5:30)
_QUARTER = re.compile(
    r"\b(?P<q>quarter past|half past|quarter to|half)\s+"
    + _HOUR
    + r"\b(?:\s*(?P<part>[ap]\.?m\b|in the (?:morning|afternoon|evening)|at night))?",
    re.I,
)
_QUARTER_MINUTES = {"quarter past": 15, "half past": 30, "half": 30, "quarter to": -15}
_AFTER_NOON = ("pm", "in the afternoon", "in the evening", "at night")  # parts of the day past 12


def _hour(word: str) -> int:
    """An hour written in digits or as a word ("9", "nine")."""
    word = word.lower()
    return int(word) if word.isdigit() else _HOUR_WORDS[word]


# a time opening a (log) line, after a list marker or a task box: "09:30 Beat walked me through",
# "- 17.15 Swiss German, lesson 4"
_STAMP = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?)?(\d{1,2}[:.]\d{2})\b")


def clock_times(text: str) -> frozenset[str]:
    """Times of day however written, as 24-hour "HH:MM": "18:00", "6 pm", "6:30pm", "six in the
    evening", "quarter past five", "noon"; "9.15" only with a part of the day ("9.15 am"): 12.50
    is more often money, unless it opens a log line ("17.15 Swiss German"). An hour with no part
    of the day after "at" ("at nine") or in words ("quarter past five") is both readings, 09:00
    and 21:00."""
    out: set[str] = set()
    spans = []  # "half past 6 in the evening" is not also "6 in the evening"
    for m in _QUARTER.finditer(text):
        spans.append(m.span())
        minutes = _hour(m.group("h")) % 12 * 60 + _QUARTER_MINUTES[m.group("q").lower()]
        part = (m.group("part") or "").lower().replace(".", "")
        if part.startswith(_AFTER_NOON):
            readings = [minutes + 720]
        elif part:
            readings = [minutes]
        else:
            readings = [minutes, minutes + 720]
        out.update(f"{r // 60 % 24:02d}:{r % 60:02d}" for r in readings)
    stamp = _STAMP.match(text)
    if stamp and "." in stamp.group(1):
        hour, minute = (int(x) for x in stamp.group(1).split("."))
        if hour <= 23 and minute <= 59:
            out.add(f"{hour:02d}:{minute:02d}")
    for m in _BARE_HOUR.finditer(text):
        hour = _hour(m.group("h"))
        out.update({f"{hour % 12:02d}:00", f"{hour % 12 + 12:02d}:00"})
    for m in _CLOCK.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        if m.group("noon"):
            out.add("00:00" if m.group("noon").lower() == "midnight" else "12:00")
            continue
        if m.group("H") is not None:
            out.add(f"{int(m.group('H')):02d}:{m.group('M')}")
            continue
        hour = _hour(m.group("h") or m.group("w"))
        minute = m.group("m") or "00"
        if not 0 <= hour <= 23 or int(minute) > 59:
            continue
        part = m.group("part").lower().replace(".", "")
        if part.startswith(_AFTER_NOON) and hour < 12:
            hour += 12
        elif part.startswith(("am", "in the morning")) and hour == 12:
            hour = 0
        out.add(f"{hour:02d}:{minute}")
    return frozenset(out)


# a number written in groups ("0113 496 0000", "0113-496-0000", "+49 30 1234567"): seven digits
# or more, a phone or account number however it is spaced
_DIGIT_GROUPS = re.compile(r"(?<![\w.,:/-])\+?\d{2,6}(?:[ .-]\d{2,6}){1,5}(?![\w-]|[.,:/]\d)")


def _digit_runs(text: str) -> set[str]:
    """The digits of each number written in groups, joined ("01134960000"); not a date."""
    out = set()
    for m in _DIGIT_GROUPS.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if len(digits) >= 7 and not _NUMERIC_DATE.fullmatch(m.group(0)):
            out.add(digits)
    return out


# an amount with thousands separators ("1,250", "€1.250", "1,250,000"): also its plain digits
_THOUSANDS = re.compile(r"^[€$£]?(\d{1,3}(?:[.,]\d{3})+)$")


# "2026-03-14"; "14/3" or "14/3/26"; "14.3." or "14.3.2026" (not "9.15", a time, nor "12.50")
_DAY_MONTH = re.compile(
    r"(?<![\d./-])(?:(\d{4})-(\d{1,2})-(\d{1,2})|(\d{1,2})(?:/(\d{1,2})(?:/\d{2}(?:\d{2})?)?"
    r"|\.(\d{1,2})\.(?:\d{4}|\d{2})?))(?![\d/-]|\.\d)"
)


def _numeric_dates(text: str) -> set[str]:
    """Dates written in digits in the form a month name gives ("14 march"): "2026-03-14", and
    "14/3", "14.03." or "14.3.2026" read day first; a day and month that can only be read one
    way round ("3/14") are read that way, and two numbers that can both be either give both
    readings ("3/4": 3 April and 4 March), so "19/11" is the same date as "19 November"."""
    out: set[str] = set()
    for m in _DAY_MONTH.finditer(text):
        if m.group(1):
            pairs = [(int(m.group(3)), int(m.group(2)))]
        else:
            a, b = int(m.group(4)), int(m.group(5) or m.group(6))
            pairs = [(a, b), (b, a)]
        for day, month in pairs:
            if 1 <= day <= 31 and 1 <= month <= 12:
                out.add(f"{day} {MONTHS[month - 1]}")  # the full name
    return out


@lru_cache(maxsize=100_000)
def values_of(text: str) -> frozenset[str]:
    """Tokens with a digit (dates, amounts, times, counts; "14th" as "14"), dates spelled with a
    month in one form ("14 march", see ``themes.month_date``), and every time of day in one form
    ("6 pm", "six in the evening" and "18:00" all give "18:00"), and a number written in groups
    as its digits too ("0113 496 0000" and "0113-496-0000" both give "01134960000"), as is an
    amount with thousands separators ("1,250" and "€1.250" give "1250", as "1250" does), and a
    number written out from thirteen up as its digits ("sixty-eight euros" gives "68"), and a
    licence plate as its letters and digits ("KDJ 482X" and "KDJ-482X" give "kdj482x",
    :func:`lifelong.facts.plates`)."""
    vals = {_ORDINAL.sub(r"\1", w) for w in words(text) if any(ch.isdigit() for ch in w)}
    vals |= _digit_runs(text)
    vals |= {str(n) for n in spelled_numbers(text)}
    vals |= _numeric_dates(text)
    vals |= {t for t in concept_tags(text) if any(ch.isdigit() for ch in t)}
    vals |= {re.sub(r"\D", "", m.group(1)) for v in vals if (m := _THOUSANDS.match(v))}
    vals |= {plate for _, plate in plates(text)}
    return frozenset(vals | clock_times(text))


def fact_view(key: str, text: str, paths: Iterable[str], names: frozenset[str] | None = None) -> FactView:
    subjects = subjects_of(text, names)
    values = values_of(text)
    # a title before a name is no content word (search reads "Dr." as "doctor"; "my family doctor"
    # is content, the title is not)
    rest = _content_tokens(without_titles(text)) - subjects - values - _TITLES
    strong = _strong_values(values)
    return FactView(
        key,
        text,
        subjects,
        values,
        frozenset(rest),
        frozenset(paths),
        name_phrases(text, subjects),
        strong,
        _undated(values, strong),
        _kinds(text, strong),
    )


@dataclass(frozen=True)
class GroupingConfig:
    cosine: float = 0.88
    jaccard: float = 0.3
    jaccard_unnamed: float = 0.75
    cosine_unnamed: float = 0.92

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> GroupingConfig:
        return cls(
            float(cfg.get("fact_cosine", 0.88)),
            float(cfg.get("fact_jaccard", 0.3)),
            float(cfg.get("fact_jaccard_unnamed", 0.75)),
            float(cfg.get("fact_cosine_unnamed", 0.92)),
        )


_CALENDAR = frozenset(stem(w) for w in (*MONTH_WORDS, *WEEKDAYS))
_MONTH_SET = frozenset(MONTH_WORDS)
_NUMERIC_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}")


def _is_date(value: str) -> bool:
    return any(w in _MONTH_SET for w in value.split()) or bool(_NUMERIC_DATE.fullmatch(value))


def _undated(values: frozenset[str], strong: frozenset[str]) -> frozenset[str]:
    """The ``strong`` values that are not a date nor part of one ("June 12", "12 May",
    "2026-05-12" and their "12" are not; a code such as "cobalt-fox-21" or "LH1234" is)."""
    dated = {w for x in values if _is_date(x) for w in x.split()}
    return frozenset(x for x in strong if x not in dated and not _is_date(x))


def _strong_values(values: frozenset[str]) -> frozenset[str]:
    """Values that identify (two digits or more, or an amount): "6" of "6 pm" says too little."""
    return frozenset(
        v for v in values if sum(ch.isdigit() for ch in v) >= 2 or re.search(r"\d[kmb]$|[$€£]", v)
    )


_UNIT = re.compile(r"\d\s?([^\W\d_]+)$")


def _kind(value: str) -> str:
    """What a value measures: a time of day, a date, money, a count of some unit ("30 min",
    "21 km", "75mcg"), a long number (a phone, an account), or a plain number."""
    if re.fullmatch(r"\d{1,2}:\d{2}|\d{1,2}(?::\d{2})?\s?[ap]\.?m\.?", value):
        return "time"
    if _is_date(value) or re.fullmatch(r"\d{1,2}[./]\d{1,2}\.?", value):
        return "date"
    if re.search(r"[$€£]", value):
        return "money"
    if m := _UNIT.search(value):
        return "unit:" + m.group(1)[:3]
    if sum(ch.isdigit() for ch in value) >= 7:
        return "long"
    return "number"


# a time, a date, an amount of money or a phone number says which thing a statement is about:
# two statements with such values, all different, are two things ("Emma Yilmaz has her birthday
# on July 14" / "the plumber Yilmaz comes between 14:00 and 16:00"), as are such a value and a
# plain number ("EUR 70 per session" / "Tue and Thu, six in the evening"); a count of some unit
# contradicts only a value of its own kind, and a plain number a plain number ("6x800" is no
# other fact than "400m")
_IDENTIFYING = frozenset({"time", "date", "money", "long"})
_COMPARABLE = _IDENTIFYING | {"number"}


def _kinds(text: str, values: frozenset[str]) -> frozenset[str]:
    """The kinds of ``values`` that can contradict another statement's: a time that opens a
    log line ("09:30 Beat walked me through the analyser") is when it was written, not a value
    of the fact (it still counts when the other statement shares it)."""
    stamp = _STAMP.match(text)
    if stamp:
        values = values - {stamp.group(1).replace(".", ":"), stamp.group(1)}
    return frozenset(_kind(v) for v in values if not _part_of_another(v, values))


def _part_of_another(value: str, values: frozenset[str]) -> bool:
    """A plain number that is a piece of another value of the same statement: the day of a date
    ("25" of "25 october"), the count of an amount ("5000" of "5000 km"), a group of a number
    written in groups ("47" of "963 47 22 18", read as "963472218"). It measures nothing of its
    own, so it contradicts nothing."""
    if not value.isdigit():
        return False
    return any(
        w != value and (value in w.split(" ") or (w.isdigit() and len(w) >= 7 and value in w)) for w in values
    )


def conflicting(a: FactView, b: FactView) -> bool:
    """Two statements that cannot be one fact: their dates or amounts all differ ("May 12" /
    "May 19": a correction, REM's business), each names something the other does not in the
    same place (an office in Hamburg / in Dresden) or while they share no other content word,
    or one word swapped in otherwise the same words ("no kiwi for Emma" /
    "no shellfish for Emma")."""
    if (a.phrases - b.phrases) and (b.phrases - a.phrases):
        own_a = {w for p in a.phrases - b.phrases for w in p.split(" ")} - b.subjects
        own_b = {w for p in b.phrases - a.phrases for w in p.split(" ")} - a.subjects
        if own_a and own_b and (_same_slot(a, own_a, b, own_b) or not (a.rest & b.rest)):
            return True
    va, vb = a.strong, b.strong
    if va & vb:
        return False
    ka, kb = a.kinds, b.kinds
    if ka & kb or (ka & _IDENTIFYING and kb & _COMPARABLE) or (kb & _IDENTIFYING and ka & _COMPARABLE):
        return True
    if a.values and b.values and a.rest == b.rest:
        return True  # the same words with another number: level 2 and level 5 of the garage
    own_a, own_b = a.rest - b.rest, b.rest - a.rest
    shared = len(a.rest & b.rest)
    return shared >= 1 and 1 <= len(own_a) <= min(2, shared) and 1 <= len(own_b) <= min(2, shared)


def _name_slots(text: str, own: AbstractSet[str]) -> set[tuple[str, str]]:
    """The words just before and just after each run of the ``own`` name stems in ``text``."""
    seq = _stems(text)
    slots: set[tuple[str, str]] = set()
    for i, s in enumerate(seq):
        if s not in own:
            continue
        if i > 0 and seq[i - 1] not in own:
            slots.add(("<", seq[i - 1]))
        if i + 1 < len(seq) and seq[i + 1] not in own:
            slots.add((">", seq[i + 1]))
    return slots


def _same_slot(a: FactView, own_a: AbstractSet[str], b: FactView, own_b: AbstractSet[str]) -> bool:
    """Whether a name only ``a`` holds and one only ``b`` holds stand in the same place: the
    same word before or after them ("an office in Hamburg" / "in Dresden", "Dr. Patel" / "Dr.
    Okafor"). Names in different places of statements that share content are incidental
    details of one fact ("confirmed by the GP" / "invite from Amara", both about Tobi's sesame
    allergy)."""
    return bool(_name_slots(a.text, own_a) & _name_slots(b.text, own_b))


def pair_strength(a: FactView, b: FactView, cosine: float | None, cfg: GroupingConfig) -> float | None:
    """How strongly two candidates state the same fact (higher first), None when they do not."""
    lexical = jaccard(a.rest, b.rest)
    if conflicting(a, b):
        return None
    if a.subjects and b.subjects and not (a.subjects & b.subjects):
        return None  # about different people or things
    if not (a.subjects & b.subjects):
        if lexical >= cfg.jaccard_unnamed and len(a.rest & b.rest) >= 2:
            return 1.0 + lexical
        if cosine is None:
            return None
        # no name to share ("Standup moved to 9:15"): an identifying value (an amount, a time, a
        # code; a date is not: many things happen on June 12) stands in for it, with a shared
        # content word or a higher similarity bar. Shared words alone are not enough: "Tried
        # the new office chair, too loud" and "Tried the new espresso machine, too tight" sit
        # at cosine 0.93
        words_shared = (a.rest & b.rest) - _CALENDAR
        # a time is shared by many things; a dose, an amount, a phone number or a code is not
        # ("08:00 levothyroxine (75mcg)" / "my thyroid tablets, one 75mcg a day": no word shared)
        telling = any(_kind(x) != "time" for x in a.ident & b.ident)
        if (
            a.ident & b.ident
            and cosine >= cfg.cosine
            and (words_shared or telling or cosine >= cfg.cosine_unnamed)
        ):
            return 1.0 + cosine
        return None
    if a.values & b.values:
        return 2.0 + lexical + (cosine or 0.0)
    if len(a.phrases & b.phrases) >= 2:
        return 1.5 + lexical + (cosine or 0.0)
    if cosine is not None:
        # one states an identifying value (two digits or more, or money), the other none: a launch
        # date and who writes its notes ("flat 1" or "til 1" is no such value)
        # (a time opening a log line is when it was written, not such a value: ``kinds`` leaves it out)
        bar = cfg.cosine + (0.02 if bool(a.kinds) != bool(b.kinds) else 0.0)
        return 1.0 + cosine if cosine >= bar else None
    return 1.0 + lexical if lexical >= cfg.jaccard and len(a.rest & b.rest) >= 2 else None


def _hopeless(a: FactView, b: FactView) -> bool:
    """A pair :func:`pair_strength` rejects whatever its cosine: named after different things,
    or without a shared name, an identifying value or two shared words. Skipped before its
    cosine is looked up (a shared content word puts many such pairs in one block)."""
    if a.subjects and b.subjects:
        return not (a.subjects & b.subjects)
    return len(a.rest & b.rest) < 2 and not (a.ident & b.ident)


# Two groups join only when at least this share of their cross pairs state one fact on their own,
# and when exactly this share, only through a pair sharing an identifying value or clearly over
# the bar (strength >= ``BRIDGE_STRENGTH``: a cosine of 0.91 for a pair with a name and nothing
# else in common). A single borderline pair ("Dr. Okafor is my family doctor, at the
# Bergmannstraße practice" / "Dr. Okafor has the practice closed on Wednesday afternoons", cosine
# 0.888) does not chain the GP's three wordings and the opening hours' three into one fact, nor
# join the GP's first wording to the hours' two (one of two cross pairs, at 0.883: months 43 and
# 52, where it promoted one merged item and lost both facts), while a third wording close to one
# sibling (0.93) and not the other joins
LINKAGE = 0.5
BRIDGE_STRENGTH = 1.91

# A wording left alone under the cosine bar joins a group of two or more when it names their
# subject, shares with every member a word that no other candidate holds (and at most
# ``RARE_WORD_MAX`` do), contradicts none of them, and is within ``JOIN_RELIEF`` of the bar with
# each: the third wording of an allergy ("No kiwi for Greta, she reacts badly; check every menu",
# cosine 0.84 and 0.87 to the other two). On persona-months 1-24: items promoted twice 7 -> 1 at
# relief 0.05 (0.03: 5) and 0 at 0.08, no precision or recall change at any of them; 0.08 joins
# seed 19's "No sesame for Greta, she reacts badly; check every menu" (cosine 0.872 and 0.827 to
# the other two wordings)
JOIN_RELIEF = 0.08
RARE_WORD_MAX = 4

BLOCK_MAX = 400  # a word on more lines than this says nothing about which fact a line states


def view_fingerprint(v: FactView) -> str:
    """What a view's comparisons depend on (its text and the names seen in it): two nights that
    give a candidate the same fingerprint compare it with anything the same way."""
    return hashlib.sha256(repr((v.text, sorted(v.subjects))).encode("utf-8")).hexdigest()[:16]


def _blocks(views: list[FactView]) -> dict[str, list[str]]:
    """Candidates are only compared when they share a subject, an identifying value, or a
    content word (blocking keeps a year of notes fast; a block of more than ``BLOCK_MAX`` lines
    compares nothing)."""
    block: dict[str, list[str]] = defaultdict(list)
    for v in views:
        for s in v.subjects:
            block["s:" + s].append(v.key)
        for x in v.strong:
            block["v:" + x].append(v.key)
        for t in v.rest:
            block["w:" + t].append(v.key)
    return block


def _compared(a: FactView, b: FactView, sizes: dict[str, int]) -> bool:
    """Whether the blocking compares ``a`` and ``b`` (a shared block of 2..BLOCK_MAX lines)."""
    return any(
        2 <= sizes.get(name, 0) <= BLOCK_MAX
        for name in (
            *("s:" + s for s in a.subjects & b.subjects),
            *("v:" + x for x in a.strong & b.strong),
            *("w:" + t for t in a.rest & b.rest),
        )
    )


def _may_contradict(a: FactView, b: FactView, sizes: dict[str, int]) -> bool:
    """Whether a conflict between ``a`` and ``b`` keeps their groups apart: two named lines only
    when they share a name (lines about Lisbon and about a dentist may both say "June 12")."""
    if a.subjects and b.subjects:
        return any(2 <= sizes.get("s:" + s, 0) <= BLOCK_MAX for s in a.subjects & b.subjects)
    return _compared(a, b, sizes)


@dataclass(frozen=True)
class Grouping:
    ids: dict[str, str]  # candidate key -> its group's id (the smallest member key)
    pairs: dict[tuple[str, str], float]  # strength of every compared pair that states one fact
    compared: int  # pairs compared by this call (the others came from ``known``)


def group_facts(
    views: list[FactView],
    cosine: Callable[[str, str], float | None] | None = None,
    cfg: GroupingConfig = GroupingConfig(),
) -> dict[str, str]:
    """Map every candidate key to its group's id (the smallest member key)."""
    return group_facts_known(views, cosine, cfg).ids


def group_facts_known(
    views: list[FactView],
    cosine: Callable[[str, str], float | None] | None = None,
    cfg: GroupingConfig = GroupingConfig(),
    known: Mapping[tuple[str, str], float] | None = None,
    unchanged: AbstractSet[str] = frozenset(),
) -> Grouping:
    """:func:`group_facts`, reusing ``known`` pair strengths (an earlier call's ``pairs``, with the
    same config and cosine) for pairs of two ``unchanged`` keys (same fingerprint, compared then
    too): only pairs with a new or changed candidate are compared again. The result is the same as
    comparing every pair (a pair's strength depends only on the two views and their cosine)."""
    by_key = {v.key: v for v in views}
    block = _blocks(views)
    sizes = {name: len(keys) for name, keys in block.items()}
    unchanged = {k for k in unchanged if k in by_key}
    pairs: dict[tuple[str, str], float] = {}
    for (ka, kb), strength in (known or {}).items():
        if ka in unchanged and kb in unchanged and _compared(by_key[ka], by_key[kb], sizes):
            pairs[(ka, kb)] = strength
    seen: set[tuple[str, str]] = set()
    compared = 0
    for keys in block.values():
        if len(keys) < 2 or len(keys) > BLOCK_MAX:
            continue
        fresh = [k for k in keys if k not in unchanged]
        for ka in fresh:
            a = by_key[ka]
            for kb in keys:
                if kb == ka or (kb not in unchanged and kb < ka):
                    continue  # a pair of two fresh keys is met from its smaller key
                pair = (ka, kb) if ka < kb else (kb, ka)
                if pair in seen:
                    continue
                b = by_key[kb]
                if _hopeless(a, b):
                    continue
                seen.add(pair)
                compared += 1
                if conflicting(a, b):
                    continue
                cos = cosine(pair[0], pair[1]) if cosine is not None else None
                strength = pair_strength(by_key[pair[0]], by_key[pair[1]], cos, cfg)
                if strength is not None:
                    pairs[pair] = strength
    parent = {v.key: v.key for v in views}
    paths = {v.key: set(v.paths) for v in views}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    members = {v.key: [v.key] for v in views}

    def merge(ra: str, rb: str) -> None:
        root, other = (ra, rb) if ra < rb else (rb, ra)  # a group's id is its smallest key
        parent[other] = root
        paths[root] |= paths.pop(other)
        members[root] += members.pop(other)

    for neg, (ka, kb) in sorted((-strength, pair) for pair, strength in pairs.items()):
        strength = -neg
        ra, rb = find(ka), find(kb)
        if ra == rb or paths[ra] & paths[rb]:
            continue  # two lines of one daily are two facts
        if any(
            _may_contradict(by_key[x], by_key[y], sizes) and conflicting(by_key[x], by_key[y])
            for x in members[ra]
            for y in members[rb]
        ):
            continue  # no member may contradict a member of the other group
        linked = sum((x, y) in pairs or (y, x) in pairs for x in members[ra] for y in members[rb])
        cross = len(members[ra]) * len(members[rb])
        if linked < LINKAGE * cross or (
            linked == LINKAGE * cross
            and strength < BRIDGE_STRENGTH
            and not (by_key[ka].ident & by_key[kb].ident)
        ):
            continue  # two facts about one subject, bridged by one borderline pair
        merge(ra, rb)
    if cosine is not None and JOIN_RELIEF:
        # a lone wording just under the bar with every member of a group (see JOIN_RELIEF)
        for v in views:
            if len(members.get(v.key, ())) != 1 or not v.subjects:
                continue  # not alone
            for t in sorted(v.rest - _CALENDAR):
                keys = block.get("w:" + t, [])
                # the word's other holders are exactly one group of two or more
                roots = {find(k) for k in keys if k != v.key}
                if len(keys) > RARE_WORD_MAX or len(roots) != 1:
                    continue
                g = roots.pop()
                group = members[g]
                if len(group) < 2 or len(group) + 1 != len(keys) or paths[g] & paths[v.key]:
                    continue
                if not all(v.subjects & by_key[m].subjects and not conflicting(v, by_key[m]) for m in group):
                    continue
                if all(
                    (c := cosine(*sorted((v.key, m)))) is not None and c >= cfg.cosine - JOIN_RELIEF
                    for m in group
                ):
                    merge(g, v.key)
                    break
    return Grouping({k: find(k) for k in parent}, pairs, compared)


@lru_cache(maxsize=100_000)
def completeness(text: str) -> tuple[int, int, int]:
    """How much a statement says: names, dates and amounts first, then content words."""
    return (len(concept_tags(text)), len(content_tokens(text)), len(text))


# ---------------------------------------------------------------------------------------------
# the vector cache (one vector per candidate text, so a night embeds only new lines)


class FactVectors:
    """Unit vectors of candidate texts from the workspace's embedder, cached in
    ``dream_vectors``; None everywhere when no embedder is configured or it fails."""

    def __init__(self, store: Any, embedder: Any, log: Callable[[str], None] | None = None):
        self.store = store
        self.embedder = embedder
        self.log = log
        self.vectors: dict[str, np.ndarray] = {}
        self.model = (
            f"{getattr(embedder, 'provider', '?')}:{getattr(embedder, 'model', '?')}" if embedder else ""
        )
        self.failed = embedder is None

    def load(self, items: dict[str, str]) -> None:
        """Make sure every key of ``items`` (key -> text) has a vector."""
        if self.failed or not items:
            return
        rows = self.store.conn.execute(
            "SELECT key, vec FROM dream_vectors WHERE model = ? AND key IN (SELECT value FROM json_each(?))",
            (self.model, json.dumps(sorted(items))),
        ).fetchall()
        for key, blob in rows:
            self.vectors[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [k for k in items if k not in self.vectors]
        if not missing:
            return
        try:
            vecs = np.asarray(self.embedder.embed_passages([items[k] for k in missing]), dtype=np.float32)
        except Exception as exc:  # an embedder failing must not stop the night: lexical grouping
            self.failed = True
            if self.log:
                self.log(f"fact grouping without embeddings: {type(exc).__name__}: {exc}")
            return
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.where(norms == 0, 1, norms)
        fresh = []
        for k, v in zip(missing, vecs, strict=True):
            self.vectors[k] = v
            fresh.append((k, self.model, v.astype(np.float32).tobytes()))
        with self.store.lock:
            self.store.conn.executemany(
                "INSERT OR REPLACE INTO dream_vectors(key, model, vec) VALUES (?, ?, ?)", fresh
            )
            self.store.conn.commit()

    def cosine(self, a: str, b: str) -> float | None:
        va, vb = self.vectors.get(a), self.vectors.get(b)
        if va is None or vb is None:
            return None
        return float(va @ vb)


def fact_cosine(
    ctx: PluginContext, config: Mapping[str, Any], items: dict[str, str]
) -> tuple[Callable[[str, str], float | None] | None, str]:
    """The embedding cosine between the texts of ``items`` (key -> text; ``cosine(a, b)`` by key,
    vectors cached in ``dream_vectors``) and its model's name; ``(None, "lexical")`` when
    ``fact_embeddings`` is off or the embedder is missing or fails (the pair test is then lexical)."""
    if not config.get("fact_embeddings", True):
        return None, "lexical"
    vectors = FactVectors(ctx.store, ctx.embedder, lambda m: ctx.log("dreaming", m))
    vectors.load(items)
    if vectors.failed:
        return None, "lexical"
    return vectors.cosine, vectors.model


# bump when pair_strength or the views change meaning: a cache saved under other rules is dropped
RULES_VERSION = 13  # 8 was a rule reverted (see git log); a cache saved under it is dropped


class FactPairCache:
    """The last grouping's fingerprints and pair strengths (``dream_fact_views``/``dream_fact_pairs``),
    valid only under the same ``setting`` (grouping config and embedder): a night reuses the pairs of
    candidates whose fingerprint has not changed and compares only the rest."""

    META = "fact_pairs_setting"

    def __init__(self, store: Any, setting: str):
        self.store = store
        self.setting = setting

    def load(self) -> tuple[dict[str, str], dict[tuple[str, str], float]]:
        """(key -> fingerprint, pair -> strength); empty when the setting differs."""
        conn = self.store.conn
        row = conn.execute("SELECT value FROM dream_meta WHERE key = ?", (self.META,)).fetchone()
        if row is None or row[0] != self.setting:
            return {}, {}
        fps = dict(conn.execute("SELECT key, fp FROM dream_fact_views").fetchall())
        pairs = {(a, b): s for a, b, s in conn.execute("SELECT a, b, strength FROM dream_fact_pairs")}
        return fps, pairs

    def save(self, fps: dict[str, str], pairs: dict[tuple[str, str], float]) -> None:
        with self.store.lock:
            conn = self.store.conn
            conn.execute("DELETE FROM dream_fact_views")
            conn.execute("DELETE FROM dream_fact_pairs")
            conn.executemany("INSERT INTO dream_fact_views(key, fp) VALUES (?, ?)", sorted(fps.items()))
            conn.executemany(
                "INSERT INTO dream_fact_pairs(a, b, strength) VALUES (?, ?, ?)",
                [(a, b, s) for (a, b), s in sorted(pairs.items())],
            )
            conn.execute(
                "INSERT OR REPLACE INTO dream_meta(key, value) VALUES (?, ?)", (self.META, self.setting)
            )
            conn.commit()
