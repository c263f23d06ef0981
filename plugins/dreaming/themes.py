"""REM (pure parts): concept tags, recurring themes, possible lasting truths and corrections.

*Concept tags* of a text are the things a fact is about: capitalised names not at the start of a
sentence (Northwind Ventures, Elena Brandt), identifiers (TW-418), hashtags, and numbers with what
they count (dates, amounts, percentages). *Topic terms* add the content words (stemmed, four letters
or more) so that themes like "pitch" or "offsite" surface too.

A *theme* is a topic term that keeps surfacing: on at least ``min_days`` distinct days and in at
least ``min_entries`` snippets of the REM window. A *possible lasting truth* is a candidate that
carries a theme and recurs on more than one day. A *correction* is a later snippet with correction
wording ("correction:", "actually", "changed to", "is now", "moved to", "no longer"…) about the
same thing as an earlier candidate (two shared topic terms and some textual overlap); the earlier
candidate is marked superseded and deep never promotes it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from lifelong.facts import MONTH_WORDS, MONTHS, WEEKDAYS, relate, surely_updates
from lifelong.update_model import SURE

from .snippets import STOPWORDS, content_tokens, stem, words

_NOT_NAMES = frozenset(
    {
        "i",
        "decision",
        "reconfirmed",
        "random",
        "note",
        "todo",
        "update",
        "correction",
        "fyi",
        "dr",
        "mr",
        "mrs",
        "ms",
    }
    | set(WEEKDAYS)
)
_ABBREV = re.compile(r"\b(Dr|Mr|Mrs|Ms|Prof|St|Mt|Jr|Sr|Dept|No|vs)\.$")
_CURRENCIES = frozenset({"EUR", "USD", "GBP", "CHF"})
_CAP_SEQ = re.compile(r"\b([A-ZÄÖÜ][\w'’-]*(?:\s+(?:[A-ZÄÖÜ][\w'’-]*|von|van|de|der|da))*)")
_IDENT = re.compile(r"\b[A-Z]{2,}[-_]?\d+[\w-]*\b")
_HASHTAG = re.compile(r"(?<!\w)#([\w-]{2,})")
_ORDINAL = r"(?:st|nd|rd|th)?"
_MONTH_DATE = re.compile(
    r"\b(?P<m1>"
    + "|".join(MONTH_WORDS)
    + rf")\.?\s+(?P<d1>\d{{1,2}}){_ORDINAL}(?:\s*[-–]\s*(?P<e1>\d{{1,2}}){_ORDINAL})?\b"
    + rf"|\b(?P<d2>\d{{1,2}}){_ORDINAL}(?:\s*[-–]\s*(?P<e2>\d{{1,2}}){_ORDINAL})?\.?\s+(?:of\s+)?(?P<m2>"
    + "|".join(MONTH_WORDS)
    + r")\b",
    re.I,
)
_FULL_MONTH = {m[:3]: m for m in MONTHS}


def month_date(m: re.Match[str]) -> str:
    """A ``_MONTH_DATE`` match in one form however written: "14 march" for "March 14", "14
    March", "14th of March" and "Mar. 14th"; "14-16 march" for a range."""
    month = (m.group("m1") or m.group("m2")).lower()
    day, end = (m.group("d1"), m.group("e1")) if m.group("m1") else (m.group("d2"), m.group("e2"))
    days = f"{int(day)}-{int(end)}" if end else str(int(day))
    return f"{days} {_FULL_MONTH[month[:3]]}"


_DATE_TAG = re.compile(r"\d{1,2}(?:-\d{1,2})? [a-z]+|\d{4}-\d{2}-\d{2}")


def is_date_tag(tag: str) -> bool:
    """A concept tag that is a date (:func:`month_date`'s "14 march", "14-16 march", or ISO)."""
    return bool(_DATE_TAG.fullmatch(tag))


_AMOUNT = re.compile(
    r"(?:[$€£]\s?\d(?:[\d,.]*\d)?\s?[kKmMbB]?|\b(?:EUR|USD|GBP|CHF)\s?\d(?:[\d,.]*\d)?\s?[kKmMbB]?\b"
    r"|\b\d(?:[\d,.]*\d)?\s?%"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b)"
)
_COUNTED = re.compile(
    r"\b\d+(?:[.,]\d+)?\s?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|people|persons?|km|kg|"
    r"miles?|users?|customers?|engineers?)\b"
    r"|\b(?:slide|page|chapter|room|floor|version|step|level|week|sprint|gate|platform|seat|row|q)\s?\d+\b",
    re.I,
)
_CORRECTION = re.compile(
    r"^\s*(correction|corrected|update|updated|actually|change|changed|fix|new)\b\s*[:\-–]"
    r"|\b(correction|actually|no longer|changed to|changed from|moved to|is now|are now|now is|"
    r"instead of|switched to|rescheduled|postponed to|replaced by|not anymore|turns out)\b",
    re.I,
)


def concept_tags(text: str) -> frozenset[str]:
    """Names, identifiers, hashtags, dates and amounts in ``text`` (normalised, lower case)."""
    tags: set[str] = set()
    for m in _IDENT.finditer(text):
        tags.add(m.group(0).lower())
    for m in _HASHTAG.finditer(text):
        tags.add("#" + m.group(1).lower())
    for m in _MONTH_DATE.finditer(text):
        tags.add(month_date(m))
    for m in _AMOUNT.finditer(text):
        tags.add(re.sub(r"\s+", "", m.group(0).lower()))
    for m in _COUNTED.finditer(text):
        tags.add(re.sub(r"\s+", " ", m.group(0).lower()))
    for m in _CAP_SEQ.finditer(text):
        start = m.start()
        before = text[:start].rstrip()
        sentence_start = (not before or before[-1] in ".!?:\"'") and not _ABBREV.search(before)
        phrase = m.group(1)
        parts = phrase.split()
        if sentence_start:
            parts = parts[1:]  # the first word of a sentence is capitalised anyway
        parts = [p for p in parts if p.lower() not in _NOT_NAMES and p not in _CURRENCIES]
        while parts and (parts[0].lower() in STOPWORDS or parts[0].lower() in MONTH_WORDS):
            parts = parts[1:]
        while parts and (parts[-1].lower() in STOPWORDS or parts[-1].lower() in MONTH_WORDS):
            parts = parts[:-1]
        if parts:
            tags.add(re.sub(r"['’]s$", "", " ".join(parts).lower()))
    return frozenset(t for t in tags if t)


@lru_cache(maxsize=100_000)
def richness(text: str) -> float:
    """Concept-tag density: tags per content word, saturating at one tag per four words."""
    tokens = content_tokens(text)
    if not tokens:
        return 0.0
    return min(1.0, len(concept_tags(text)) / max(1.0, 0.25 * len(tokens)))


def topic_terms(text: str) -> frozenset[str]:
    """Concept tags plus content words of four letters or more (stemmed)."""
    terms = {stem(w) for w in words(text) if len(w) >= 4 and w not in STOPWORDS and not w[0].isdigit()}
    return frozenset(terms | concept_tags(text))


def is_correction(text: str) -> bool:
    return bool(_CORRECTION.search(text))


@dataclass(frozen=True)
class Entry:
    """One snippet as REM sees it."""

    key: str
    day: dt.date
    text: str
    terms: frozenset[str]


@dataclass
class Theme:
    tag: str
    days: int
    entries: int
    keys: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"tag": self.tag, "days": self.days, "entries": self.entries, "keys": self.keys[:20]}


def find_themes(entries: Iterable[Entry], *, min_days: int, min_entries: int, limit: int) -> list[Theme]:
    """Topic terms that keep surfacing across entries and days, strongest first."""
    days: dict[str, set[dt.date]] = defaultdict(set)
    keys: dict[str, list[str]] = defaultdict(list)
    for e in entries:
        for t in e.terms:
            days[t].add(e.day)
            if e.key not in keys[t]:
                keys[t].append(e.key)
    themes = [
        Theme(t, len(days[t]), len(keys[t]), keys[t])
        for t in days
        if len(days[t]) >= min_days and len(keys[t]) >= min_entries
    ]
    themes.sort(key=lambda th: (-th.days * th.entries, -th.entries, th.tag))
    # a tag contained in a stronger tag ("brandt" in "elena brandt") adds nothing
    kept: list[Theme] = []
    for th in themes:
        if any(th.tag != k.tag and th.tag in k.tag.split() and set(th.keys) <= set(k.keys) for k in kept):
            continue
        kept.append(th)
    return kept[:limit]


@dataclass(frozen=True)
class Correction:
    earlier: str
    later: str
    shared: tuple[str, ...]
    confidence: float = 1.0  # lifelong.facts.relate's confidence that the later line updates the earlier
    # lifelong.facts.surely_updates: only then may the earlier item be struck through; else contested
    sure: bool = False


# "not 9:30 any more", "no longer on May 12", "instead of Tuesday": the value a note says is no
# longer true, up to the clause's end
_NEGATED = re.compile(r"\b(?:not|no longer|instead of|rather than)\b[^,;:.!?]*", re.I)


def asserted_tags(text: str) -> frozenset[str]:
    """The concept tags a note asserts: its tags less those only in a negated clause."""
    return concept_tags(_NEGATED.sub(" ", text))


CORRECTION_CONFIDENCE = 0.7  # lifelong.facts.relate's confidence a correction needs
# the learned update reader's probability a correction needs (update_model.SURE, not search's
# LIKELY: a night compares each line with up to CORRECTION_PEERS others)
LEARNED_CORRECTION = SURE
CORRECTION_PEERS = 24  # the earlier candidates sharing most topic terms that one entry is compared with


def find_corrections(
    entries: list[Entry],
    candidates: dict[str, Entry],
    learned: Callable[[list[tuple[str, str]]], dict[tuple[str, str], float] | None] | None = None,
) -> list[Correction]:
    """Later entries that revise an earlier candidate (pure, but for ``learned``): the one fact
    model's comparison (:func:`lifelong.facts.relate`) reads the later line as an update of the
    earlier one — a new value for what the earlier states ("my number is now 0152…",
    "Schwimmkurs moved!! from now on thursdays"), or its end ("the trip is called off") — with
    confidence :data:`CORRECTION_CONFIDENCE`, or the later line has correction wording and the
    earlier shares two topic terms, or the learned update reader (``learned``: pairs of texts
    to probabilities, :func:`lifelong.update_model.update_probabilities`) gives it
    :data:`LEARNED_CORRECTION` or more (restating a correction is not a new correction: the later
    one must assert something the earlier lacks). Each entry is compared with the
    :data:`CORRECTION_PEERS` earlier candidates that share most of its topic terms."""
    by_term: dict[str, set[str]] = defaultdict(set)
    for key, c in candidates.items():
        for t in c.terms:
            by_term[t].add(key)
    compared: list[tuple[Entry, Entry, int]] = []
    for e in entries:
        seen: dict[str, int] = defaultdict(int)
        for t in e.terms:
            for key in by_term.get(t, ()):
                seen[key] += 1
        peers = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))[:CORRECTION_PEERS]
        for key, shared in sorted(peers):
            c = candidates[key]
            if key != e.key and c.day < e.day:
                compared.append((c, e, shared))
    odds = learned([(c.text, e.text) for c, e, _ in compared]) if learned and compared else None
    out: list[Correction] = []
    for c, e, shared in compared:
        relation = relate(c.text, e.text)
        confidence = relation.confidence
        if relation.kind != "update" or relation.confidence < CORRECTION_CONFIDENCE:
            p = odds.get((c.text, e.text), 0.0) if odds else 0.0
            if p >= LEARNED_CORRECTION:
                # never sure enough to set a staged fact aside unpromoted (rem's 0.9): it marks
                confidence = min(p, LEARNED_CORRECTION)
            elif not (is_correction(e.text) and shared >= 2 and relation.kind == "update"):
                continue
        if not (asserted_tags(e.text) - concept_tags(c.text)) and not relation.fresh:
            continue  # nothing new asserted: a restatement of the correction
        shared_terms = tuple(sorted(c.terms & e.terms))
        out.append(Correction(c.key, e.key, shared_terms, confidence, surely_updates(c.text, e.text)))
    return out
