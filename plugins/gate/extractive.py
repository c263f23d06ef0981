"""The offline gate (pure): pick the most query-relevant lines of the top hits and compress them
into one note of at most ``max_chars`` characters, each piece with its citation path.

How a note is made:

1. Every hit's text is cut into *units*: one list item or line, or one sentence of a long line,
   each with its exact line number. Headings are not units; they give the lines under them
   context (a line under "## Investor pitch" is about the pitch).
2. A unit is relevant when it shares a content word with the query (light stemming: "pitched"
   matches "pitch"), or when its heading does and the unit answers the kind of question asked
   (intent cues: "when" wants a date, "how much" a number, "who" a name, "what did we decide"
   a decision), and when it covers at least ``MIN_COVERAGE`` of the query. Words are weighted by
   rarity among the units (a word on every line says little), words of the latest message count
   twice those of earlier turns, names and identifiers twice again, and a question word the unit
   answers without repeating it ("decide" by "Decision: ...") counts as covered. When the latest
   message names something, a unit must mention it.
   Lines of the wiki's index page (links and claim counts) are navigation, never units.
3. Units are scored by query coverage, the intent cue, the identifiers they carry (proper nouns,
   dates, numbers: what a reply most needs to get right) and the search score and rank of their
   hit (``HIT_WEIGHT``, ``RANK_PENALTY``).
4. Once any unit is relevant, the search's first hit leads (its best unit, else its first): the
   hybrid search ranks by meaning as well as words (:func:`lead_with_first_hit`). Then the newest
   leads instead when a newer unit states the same thing with another value (the newest
   statement of a slot is its current value). A second (not a near-duplicate) is added when it
   scores at least half as well and fits. Each piece ends with its citation, e.g. ``(memory/2026-03-04.md#L4)``;
   the whole note is cut at a word boundary so it never exceeds ``max_chars``.

Staleness: a hit that carries ``superseded_by`` or a ``validity_end`` in the past, or a line
flagged stale in the text (``[stale]``, ``(outdated)``, ``superseded:``, ``~~struck~~``…), is
scored lower and, when used, is prefixed ``(superseded)`` instead of being asserted. A MEMORY.md
item REM marked ``(contested by "…", date)`` (a later note may have changed it; not surely) is
ranked the same way, newest first, and prefixed ``(contested)``: it is still shown, never
asserted as current over a later statement. A wiki claim is read by its status: ``superseded`` or
``retired`` as stale, ``contested`` as contested.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lifelong import readers
from lifelong.facts import MONTH_WORDS, WEEKDAYS, announces_change, restates_with_new_value
from lifelong.markdown import contested_mark, stated_date, strip_bookkeeping
from lifelong.safety import find_instructions
from lifelong.text import CHATTER, QUESTION_WORDS, STOPWORDS, stem, tokens, words

from .query import clip

# Query filler beyond the shared stop words and chatter: words that point at time or attention
# but name nothing to look for ("what did we decide last week", "now").
QUERY_FILLER = frozenset("last next now".split())
IGNORED = STOPWORDS | CHATTER | QUESTION_WORDS | QUERY_FILLER

_LIST_MARK = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?\b|\b\d{1,2}:\d{2}\b"
    r"|\b(?:" + "|".join((*MONTH_WORDS, *WEEKDAYS)) + r")\b"
    r"|\b(?:today|tomorrow|yesterday|tonight)\b",
    re.I,
)
_NUMBER = re.compile(r"\d|[€$£%]|\b(?:eur|usd|gbp|chf)\b", re.I)
# Lines that record a decision: strong markers name it, weak ones restate or imply it.
_DECISION = re.compile(r"\b(?:decision|decided|decide|agreed|agree|settled|chose|chosen|concluded)\b", re.I)
_DECISION_WEAK = re.compile(
    r"\b(?:confirmed|reconfirmed|final|finalised|finalized|approved|locked|fixed|going with|will)\b", re.I
)
_STALE_TEXT = re.compile(
    r"\[(?:stale|outdated|superseded|obsolete)\]|\((?:stale|outdated|superseded|obsolete)\)"
    r"|^\s*(?:stale|outdated|superseded|obsolete)\s*:|~~[^~]+~~",
    re.I,
)

INTENT_WORDS: dict[str, frozenset[str]] = {
    "decision": frozenset(
        "decide decided decides deciding decision decisions agree agreed agreement settle settled chose "
        "choose chosen conclude concluded conclusion outcome verdict resolve resolved consensus final "
        "finalise finalize plan plans planned".split()
    ),
    "time": frozenset(
        "when date dates day days time deadline due schedule scheduled until since week month year "
        "timeline calendar".split()
    ),
    "quantity": frozenset(
        "much many cost costs price prices budget amount number numbers percent percentage rate size "
        "valuation raise raising raised salary revenue retention score total count".split()
    ),
    "person": frozenset("who whom whose person people partner owner owns contact name".split()),
    "place": frozenset("where venue location place address city country located".split()),
}
# Question words a satisfying line answers without repeating them ("what did we decide" is
# answered by "Decision: ...", "which date" by a line holding a date): credited to such a line.
CREDITED_CUES: dict[str, frozenset[str]] = {
    "decision": frozenset(
        "decide decided decides deciding decision decisions agree agreed settle settled chose choose "
        "conclude concluded outcome verdict consensus".split()
    ),
    "time": frozenset("date dates day days time deadline schedule scheduled".split()),
}
MIN_COVERAGE = 0.3  # share of the (weighted) query a unit must cover to count
# The search ranks by meaning and words at once: its score and rank weigh in every unit's score.
HIT_WEIGHT = 1.5
RANK_PENALTY = 0.2


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in IGNORED and len(w) > 1}


@dataclass(frozen=True)
class Unit:
    """One candidate piece of a note: a line, list item or sentence of a hit."""

    text: str
    path: str
    line: int
    heading: str
    hit_score: float
    stale: bool
    hit_rank: int
    date: str | None = None  # the hit's source date (YYYY-MM-DD), None for undated files
    # a MEMORY.md item REM marked "(contested by …)": a later note may have changed it
    contested: bool = False

    @property
    def demoted(self) -> bool:
        """Superseded, or contested: newest first, so a later statement leads."""
        return self.stale or self.contested

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.line}"


@dataclass
class ScoredUnit:
    unit: Unit
    score: float
    coverage: float
    intent: bool
    identifiers: int


@dataclass(frozen=True)
class Note:
    text: str
    citations: tuple[str, ...]
    stale: bool
    pieces: tuple[ScoredUnit, ...] = field(default=(), compare=False)


def is_stale_hit(hit: dict[str, Any], now: dt.datetime | None) -> bool:
    """A hit whose validity ended (or that a later fact superseded)."""
    if hit.get("superseded_by"):
        return True
    end = hit.get("validity_end")
    if end in (None, ""):
        return False
    if now is None:
        return True
    try:
        when = end if isinstance(end, dt.datetime) else dt.datetime.fromisoformat(str(end))
    except ValueError:
        return True
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when <= now


def split_units(hit: dict[str, Any], rank: int, now: dt.datetime | None) -> list[Unit]:
    """Units of one hit. Uses ``hit["text"]`` (exact lines from memory_get) when present, else
    the snippet; line numbers count from ``start_line``."""
    text = hit.get("text") or hit.get("snippet") or ""
    path = str(hit.get("path") or "")
    first = int(hit.get("start_line") or 1)
    status = (hit.get("extra") or {}).get("status") if hit.get("corpus") == "wiki" else None
    stale_hit = is_stale_hit(hit, now) or status in ("superseded", "retired")
    heading = str(hit.get("heading") or "").split(" > ")[-1]
    units: list[Unit] = []
    in_fence = False
    for offset, raw in enumerate(text.split("\n")):
        line = raw.rstrip()
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip() or line.strip() in ("---", "***", "…"):
            continue
        m = _HEADING.match(line)
        if m:
            heading = m.group(2)
            continue
        stated = stated_date(line)  # before the markers that carry it are stripped
        # a wiki claim or a struck item: the line, not its bookkeeping
        body = strip_bookkeeping(_LIST_MARK.sub("", line)).strip().rstrip("…").strip()
        if len(words(body)) < 2:
            continue
        stale = stale_hit or bool(_STALE_TEXT.search(body))
        contested = not stale and (status == "contested" or contested_mark(line) is not None)
        pieces = [body] if len(body) <= 200 else [p for p in _SENTENCE_END.split(body) if p.strip()]
        for piece in pieces:
            if find_instructions(piece):
                continue  # a line that reads as instructions to an agent is never injected
            units.append(
                Unit(
                    piece.strip(),
                    path,
                    first + offset,
                    heading,
                    float(hit.get("score") or 0.0),
                    stale,
                    rank,
                    str(hit.get("source_date") or "") or stated,
                    contested,
                )
            )
    return units


def identifiers_in(text: str) -> int:
    """Proper nouns (capitalised words past the first), dates and numbers in ``text``."""
    toks = tokens(text)
    proper = sum(
        1
        for i, t in enumerate(toks)
        if i > 0 and t[:1].isupper() and t.casefold() not in IGNORED and not _DATE.fullmatch(t)
    )
    return (
        proper
        + len(_DATE.findall(text))
        + sum(1 for t in toks if _NUMBER.search(t) and not _DATE.fullmatch(t))
    )


# "a day at the daycare", "per month", "each week": a rate, the unit of an amount asked about, not a
# question about when
_RATE = re.compile(r"\b(?:a|an|per|each|every)\s+(?:day|week|month|year)\b", re.I)


def intents_of(focus: str) -> set[str]:
    ws = set(words(_RATE.sub(" ", focus)))
    found = {name for name, cues in INTENT_WORDS.items() if ws & cues}
    if "how" in ws and ws & {"much", "many", "long", "big", "old"}:
        found.add("quantity")
    return found


def intent_strength(intent: str, text: str) -> float:
    """How well ``text`` answers the kind of question asked: 1 fully, 0.6 weakly, 0 not."""
    if intent == "decision":
        return 1.0 if _DECISION.search(text) else (0.6 if _DECISION_WEAK.search(text) else 0.0)
    if intent == "time":
        return 1.0 if _DATE.search(text) else 0.0
    if intent == "quantity":
        return 1.0 if _NUMBER.search(text) or _spelled_amount(text) else 0.0
    # person / place: a name (a Title-case word past the first, not a month or weekday)
    toks = tokens(text)
    return 1.0 if any(i > 0 and _is_name(t) for i, t in enumerate(toks)) else 0.0


@lru_cache(maxsize=4096)
def _spelled_amount(text: str) -> bool:
    """A number written in words ("thirty-one pounds fifty", "vingt euros"), read by
    :func:`lifelong.readers.digits_for_words` (text2num)."""
    return bool(_NUMBER.search(readers.digits_for_words(text)))


def _is_name(token: str) -> bool:
    return (
        token[:1].isupper()
        and token[1:2].islower()
        and token.casefold() not in IGNORED
        and not _DATE.fullmatch(token)
    )


def query_weights(focus: str, context: str) -> tuple[dict[str, float], set[str]]:
    """Content stems of the query, weighted 1.0 for the latest message and 0.5 for earlier turns,
    and the latest message's *entities* (capitalised past the first word, or with digits), which
    weigh 2.0: names and identifiers are what must match."""
    weights: dict[str, float] = {}
    for tok in tokens(context):
        w = tok.casefold()
        if w not in IGNORED and len(w) > 1:
            weights.setdefault(stem(w), 0.5)
    entities: set[str] = set()
    for i, tok in enumerate(tokens(focus)):
        w = tok.casefold()
        if w in IGNORED or len(w) <= 1:
            continue
        special = (i > 0 and tok[:1].isupper()) or any(ch.isdigit() for ch in tok)
        weights[stem(w)] = 2.0 if special else 1.0
        if special:
            entities.add(stem(w))
    return weights, entities


def score_units(
    units: list[Unit], focus: str, context: str = "", *, intents: set[str] | None = None
) -> list[ScoredUnit]:
    """Relevant units, best first (see the module docstring for the scoring). When the latest
    message names something (a name, an identifier), a unit must mention one of those names
    (in its text or heading) to count: "weather in Paris" is not answered by "weather was grim"."""
    weights, entities = query_weights(focus, context)
    if not weights or not units:
        return []
    intents = intents_of(focus) if intents is None else intents
    stems_of = [content_stems(u.text) for u in units]
    heads_of = [content_stems(u.heading) for u in units]
    n = len(units)
    idf = {q: math.log(1.0 + n / (1 + sum(1 for s in stems_of if q in s))) for q in weights}
    # Coverage counts only the query words some retrieved line holds: a word no line contains
    # ("sore throat" beside an allergy note that answers "can I take penicillin?") cannot be covered
    # by any line and must not sink the one that holds the decisive word.
    held = {q for q in weights if any(q in s or q in h for s, h in zip(stems_of, heads_of, strict=True))}
    total = sum(weights[q] * idf[q] for q in held) or 1.0
    best_hit = max((u.hit_score for u in units), default=0.0) or 1.0
    focus_words = set(words(focus))
    focus_stems = content_stems(focus)
    cues = {
        intent: {stem(w) for w in focus_words & CREDITED_CUES[intent]} & set(weights)
        for intent in intents
        if intent in CREDITED_CUES
    }
    scored: list[ScoredUnit] = []
    for unit, stems, heads in zip(units, stems_of, heads_of, strict=True):
        in_text = sum(weights[q] * idf[q] for q in weights if q in stems)
        in_head = sum(weights[q] * idf[q] for q in weights if q in heads and q not in stems)
        strengths = {i: intent_strength(i, unit.text) for i in intents}
        strength = max(strengths.values(), default=0.0)
        if in_text <= 0 and not (in_head > 0 and strength > 0):
            continue
        if entities and not entities & (stems | heads):
            continue
        if focus_stems and not focus_stems & (stems | heads):
            continue  # earlier turns add context; the line must still be about the latest message
        credit = sum(
            weights[q] * idf[q] * strengths[intent]
            for intent, qs in cues.items()
            for q in qs
            if q not in stems and q not in heads
        )
        coverage = (in_text + credit + 0.4 * in_head) / total
        if coverage < MIN_COVERAGE:
            continue
        ids = identifiers_in(unit.text)
        score = 2.0 * coverage + 0.8 * strength + min(0.45, 0.15 * ids)
        score += HIT_WEIGHT * (unit.hit_score / best_hit) - RANK_PENALTY * unit.hit_rank
        if unit.demoted:
            score *= 0.6
        scored.append(ScoredUnit(unit, score, coverage, strength > 0, ids))
    scored.sort(key=lambda s: (-s.score, s.unit.hit_rank, s.unit.line))
    return scored


def _similar(a: str, b: str) -> bool:
    sa, sb = content_stems(a), content_stems(b)
    if not sa or not sb:
        return False
    return len(sa & sb) / len(sa | sb) >= 0.5


# where one line tells of a change in steps: "Gemma's last day 🍼 → Owen Pryce is my PM now";
# any sentence's end, unlike _SENTENCE_END, whatever case follows: notes go on in lower case
# ("Marcus took the Moncton job. editing goes to Jen Oickle from now": with _SENTENCE_END's
# capital, months 10-22's gate 85 -> 84)
_STEP = re.compile(r"\s*(?:→|->|=>)\s*|(?<=[.!?])\s+(?=\S)")


def current_first(text: str, focus: str) -> str:
    """``text`` led by its part that announces a change (:func:`lifelong.facts.announces_change`)
    when the first part does not and the later one holds at least as many of ``focus``'s words:
    "Owen Pryce is my PM at Hartwell now (before: Gemma's last day before mat leave)"; else as
    it is."""
    cuts = list(_STEP.finditer(text))
    if not cuts or announces_change(text[: cuts[0].start()]):
        return text
    want = content_stems(focus)
    for m in cuts:
        later, earlier = text[m.end() :], text[: m.start()]
        if len(later.split()) < 3 or not announces_change(later.split(". ")[0]):
            continue
        if len(want & content_stems(later)) < max(1, len(want & content_stems(earlier))):
            return text
        return f"{later.rstrip(' .;:,')} (before: {earlier.strip(' .;:,→->=–*•')})"
    return text


def render_piece(unit: Unit, limit: int, focus: str = "") -> str | None:
    """``text (path#Ln)`` within ``limit`` characters, the text cut at a word boundary, led by
    the part that tells of a change (:func:`current_first`) when ``focus`` is given; None when
    less than a few words would survive."""
    cite = f" ({unit.citation})"
    text = (current_first(unit.text, focus) if focus else unit.text).rstrip(" .;:,")
    prefix = "(superseded) " if unit.stale else "(contested) " if unit.contested else ""
    room = limit - len(cite) - len(prefix)
    if room < 16:
        return None
    body = clip(text, room)
    return f"{prefix}{body}{cite}"


def newer_value(top: ScoredUnit, others: list[ScoredUnit]) -> ScoredUnit | None:
    """The newest strong unit stating a different value of what ``top`` states, from a later date
    (:func:`lifelong.facts.restates_with_new_value`): when notes disagree ("budget EUR 2,000" then
    "budget now EUR 2,400"; "swim tues 5.15" then "switching to weds 4.30"), the newest leads. A
    line from MEMORY.md or the wiki is dated by the dailies it cites; a struck or superseded unit
    never leads this way."""
    best: ScoredUnit | None = None
    for cand in others:
        if cand.score < 0.35 * top.score or not cand.unit.date or not top.unit.date or cand.unit.stale:
            continue
        if cand.unit.date <= top.unit.date or (best is not None and cand.unit.date <= (best.unit.date or "")):
            continue
        if restates_with_new_value(top.unit.text, cand.unit.text):
            best = cand
    return best


def compose(scored: list[ScoredUnit], max_chars: int, focus: str = "") -> Note | None:
    """The note from the best units: the best first (or a newer unit stating a different value of
    the same thing; led by its step that announces a change, :func:`current_first`, when
    ``focus``, the question, is given), then one more if it is good, different and fits."""
    if not scored:
        return None
    newer = newer_value(scored[0], scored[1:8])
    replaced = scored[0] if newer is not None else None
    if newer is not None:
        scored = [newer, *[s for s in scored if s is not newer]]
    top = scored[0]
    first = render_piece(top.unit, max_chars, focus)
    if first is None:
        text = clip(f"{top.unit.text} ({top.unit.citation})", max_chars)
        return Note(text, (top.unit.citation,), top.unit.stale, (top,))
    pieces, chosen = [first], [top]
    sep = "; "
    if replaced is not None:  # say what the newest statement replaced: "…; until 2026-06-24: …"
        label = f"until {top.unit.date}: "
        piece = render_piece(replaced.unit, max_chars - len(first) - len(sep) - len(label))
        if piece is not None:
            pieces.append(label + piece)
            chosen.append(replaced)
        scored = [s for s in scored if s is not replaced]
    for cand in scored[1:4] if len(chosen) == 1 else []:
        if cand.score < 0.5 * top.score or any(_similar(cand.unit.text, c.unit.text) for c in chosen):
            continue
        room = max_chars - len(sep.join(pieces)) - len(sep)
        piece = render_piece(cand.unit, room)
        if piece is None:
            continue
        kept = len(piece) - len(cand.unit.citation) - 3
        if piece.count("…") and kept < 0.6 * len(cand.unit.text):
            continue  # too little of it would survive the cut
        pieces.append(piece)
        chosen.append(cand)
        break
    text = sep.join(pieces)
    if len(text) > max_chars:  # defensive: never exceed the cap
        text = clip(text, max_chars)
    return Note(
        text,
        tuple(dict.fromkeys(c.unit.citation for c in chosen)),
        any(c.unit.stale for c in chosen),
        tuple(chosen),
    )


def extractive_note(
    hits: Iterable[dict[str, Any]],
    focus: str,
    context: str = "",
    *,
    max_chars: int = 220,
    now: dt.datetime | None = None,
) -> Note | None:
    """The offline gate's note for ``hits`` (memory_search results, optionally with exact
    ``text`` from memory_get), or None when no line of them is relevant to the query."""
    kept = [hit for hit in hits if not _navigation(hit)]
    units = [u for rank, hit in enumerate(kept) for u in split_units(hit, rank, now)]
    intents = intents_of(focus)
    scored = lead_with_first_hit(score_units(units, focus, context, intents=intents), units, intents, focus)
    return compose(scored, max_chars, focus)


def lead_with_first_hit(
    scored: list[ScoredUnit], units: list[Unit], intents: set[str], focus: str = ""
) -> list[ScoredUnit]:
    """``scored`` with the search's first hit leading, once any unit is relevant at all: its best
    scored unit, else the unit of it sharing the most content words with ``focus`` (the first
    such unit; its first unit when none shares one: a hit of several lines, "semana: Verdi…" /
    "call mamá…" / "Puig saved → 655 21 70 48", answers "Sr. Puig's number" with its third).
    The hybrid search ranks by meaning as well as words, so its first hit is the best single
    guess; word overlap decides whether memory has anything to say, which unit of a hit to show,
    and what follows. A superseded line does not lead, nor one
    that answers the kind of question asked less than the best unit ("what did we decide": the
    line recording the decision). Measured on LoCoMo's 500 gate questions (answer or evidence id
    / evidence session): 0.504 / 0.768 when the scores alone ordered the note, 0.528 / 0.788 with
    this (0.542 / 0.800 without the two exceptions); the first hit alone, clipped, 0.486 /
    0.768. Text without spaces (Japanese, Chinese) shares no word with any question: such a
    first hit leads only when another unit is relevant."""
    if not scored or scored[0].unit.hit_rank == 0:
        return scored
    top = scored[0]
    own = [s for s in scored if s.unit.hit_rank == 0]
    first = own[0].unit if own else _closest_unit([u for u in units if u.hit_rank == 0], focus)
    if first is None:
        return scored

    def strength(unit: Unit) -> float:
        return max((intent_strength(i, unit.text) for i in intents), default=0.0)

    answers = strength(first)
    if (first.demoted and not top.unit.demoted) or answers < strength(top.unit):
        return scored  # a superseded line, or one that answers the kind of question less, does not lead
    lead = own[0] if own else ScoredUnit(first, top.score, 0.0, answers > 0, identifiers_in(first.text))
    return [lead, *[s for s in scored if s is not lead]]


def _closest_unit(units: list[Unit], focus: str) -> Unit | None:
    """The unit sharing the most content words with ``focus``, the first on a tie (None: no units)."""
    want = content_stems(focus)
    return max(units, key=lambda u: len(want & content_stems(u.text)), default=None)


def _navigation(hit: dict[str, Any]) -> bool:
    """The wiki's index page: links to pages and claim counts, no facts."""
    return hit.get("corpus") == "wiki" and str(hit.get("path") or "").rsplit("/", 1)[-1] == "index.md"
