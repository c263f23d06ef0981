"""Scoring the retrieval units of the candidate chunks (pure: no database). The searcher reads
the chunks, their units, the cosines and the query terms' weights from the index and hands them
over as typed records; :func:`score_units` blends each unit's own cosine and lexical score with
its chunk's (``context_weight``), applies the speaker, preference and answer boosts, and the
bounded decay (and the query's period); :func:`unit_candidates` turns the best into candidates."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from lifelong.contracts import Candidate
from lifelong.decay import decay_factor
from lifelong.text import words

from .answer import asked_kind, asked_stems, asks_advice, holds_kind, states_preference
from .scoring import bm25_coverage, centred_cosine, decode_terms, hybrid_score, period_factor, term_counts
from .speakers import (
    USER_ROLES,
    marks_a_speaker_asked,
    speaker_asked,
    speaker_names_asked,
    speaker_of,
    turn_roles,
)
from .when import QueryTime


class UnitRow(NamedTuple):
    """One retrieval unit of a chunk as the index stores it. ``id`` -1: a chunk without units (an
    index built before units existed) scored as one unit; ``terms``: its encoded term counts
    (``scoring.encode_terms``), None to count them from ``text``."""

    id: int
    start_line: int
    end_line: int
    heading: str
    text: str
    terms: str | None = None


@dataclass(frozen=True)
class UnitScoring:
    """The settings the unit scoring reads (recall's config, the legs' weights of this search)."""

    vector_weight: float
    text_weight: float
    context_weight: float = 0.3
    half_life_days: float = 30.0
    decay_floor: float = 0.9
    period_miss_factor: float = 0.5
    period_slack_days: float = 7.0
    speaker_boost: float = 0.25
    answer_boost: float = 0.1
    preference_boost: float = 0.2

    @classmethod
    def from_config(cls, cfg: dict[str, Any], vw: float, tw: float, *, no_decay: bool = False) -> UnitScoring:
        return cls(
            vector_weight=vw,
            text_weight=tw,
            context_weight=cfg["context_weight"],
            half_life_days=0.0 if no_decay else cfg["half_life_days"],
            decay_floor=cfg["decay_floor"],
            period_miss_factor=cfg["period_miss_factor"],
            period_slack_days=cfg["period_slack_days"],
            speaker_boost=cfg["speaker_boost"],
            answer_boost=cfg["answer_boost"],
            preference_boost=cfg["preference_boost"],
        )


@dataclass(frozen=True)
class QueryTerms:
    """What a query is scored on: its text, its terms (``scoring.query_terms``), each term's
    weight (its idf in the index; 0 for a term no chunk holds) and the time it names."""

    text: str
    terms: list[str]
    weights: dict[str, float]
    when: QueryTime


class ScoredUnit(NamedTuple):
    """A unit's scores: ``score`` = ``hybrid`` (boosted) x its chunk's decay; ``similarity`` and
    ``lexical`` are the blends of the unit's and its chunk's; ``answers`` (the kind of answer the
    question asks for) and ``prefers`` (a standing rule of the user's) say which boosts applied."""

    score: float
    chunk_id: int
    unit_id: int
    start_line: int
    end_line: int
    heading: str
    text: str
    cosine: float | None
    similarity: float
    lexical: float
    hybrid: float
    answers: bool
    prefers: bool


class _Unit(NamedTuple):
    chunk_id: int
    unit_id: int
    start_line: int
    end_line: int
    heading: str
    text: str
    counts: dict[str, int]
    length: int
    cosine: float | None


def under(heading: str | None, terms: Sequence[str]) -> bool:
    """Whether a unit's heading path holds a query term ("## Food bank" over "- we're in St
    Bride's church hall"): the unit is about what the query names."""
    return bool(heading) and any(t in term_counts(heading)[0] for t in terms)


def chunk_decays(
    chunks: dict[int, Candidate], now: float, params: UnitScoring, period: tuple[float, float] | None
) -> dict[int, float]:
    """chunk id -> its decay at ``now`` (epoch seconds), times its fit to the query's period."""
    slack = params.period_slack_days * 86400.0
    out: dict[int, float] = {}
    for cid, chunk in chunks.items():
        age = None if chunk.evergreen or chunk.source_date is None else (now - chunk.source_date) / 86400.0
        d = decay_factor(age, params.half_life_days, params.decay_floor)
        if period is not None and chunk.source_date is not None and not chunk.evergreen:
            d *= period_factor(chunk.source_date, period, params.period_miss_factor, slack)
        out[cid] = d
    return out


def score_units(
    chunks: dict[int, Candidate],
    units: dict[int, list[UnitRow]],
    unit_cosines: dict[int, float],
    chunk_cosines: dict[int, float],
    query: QueryTerms,
    background: float,
    params: UnitScoring,
    now: float,
) -> tuple[list[ScoredUnit], dict[int, float]]:
    """Every unit of ``chunks`` scored (the best once per path and line range: a unit in two
    overlapping chunks), and the chunks' decays. ``unit_cosines``/``chunk_cosines``: raw cosines
    with the query (a unit without its own takes its chunk's); ``background`` the corpus cosine
    the centring removes; ``now`` epoch seconds."""
    terms, weights = query.terms, query.weights
    alpha = params.context_weight
    speaker_boost = params.speaker_boost
    answer_boost = params.answer_boost
    kind = asked_kind(query.text) if answer_boost else None
    asked = asked_stems(query.text) if kind is not None else frozenset()
    asked_words = set(words(query.text))
    roles: dict[int, dict[int, tuple[str, ...]]] = {}  # chunk id -> its lines' continued speakers
    names_asked = speaker_names_asked(asked_words)
    preference_boost = params.preference_boost
    advice = bool(preference_boost) and asks_advice(query.text)  # "how should I ...": the user's own rules
    if advice:
        names_asked |= USER_ROLES
    rows_u: list[_Unit] = []
    chunk_counts: dict[int, tuple[dict[str, int], int]] = {}
    for cid, chunk in chunks.items():
        own = units.get(cid) or [UnitRow(-1, chunk.start_line, chunk.end_line, chunk.heading, chunk.text)]
        merged: dict[str, int] = {}
        length = 0
        for unit in own:
            counts, n = decode_terms(unit.terms) if unit.terms else term_counts(unit.text)
            length += n
            for t in terms:
                if t in counts:
                    merged[t] = merged.get(t, 0) + counts[t]
            rows_u.append(
                _Unit(
                    cid,
                    unit.id,
                    unit.start_line,
                    unit.end_line,
                    unit.heading,
                    unit.text,
                    counts,
                    n,
                    unit_cosines.get(unit.id),
                )
            )
        chunk_counts[cid] = (merged, length)
    if not rows_u:
        return [], {}
    avg_unit = sum(r.length for r in rows_u) / len(rows_u)
    avg_chunk = sum(n for _, n in chunk_counts.values()) / len(chunk_counts)
    chunk_lex = {
        cid: bm25_coverage(terms, weights, counts, n, avg_chunk) for cid, (counts, n) in chunk_counts.items()
    }
    chunk_sim = {cid: centred_cosine(chunk_cosines.get(cid), background) or 0.0 for cid in chunks}
    decays = chunk_decays(chunks, now, params, query.when.period)
    best: dict[tuple[str, int, int], ScoredUnit] = {}
    for cid, uid, a, b, heading, text, counts, n, cos in rows_u:
        cos = cos if cos is not None else chunk_cosines.get(cid)
        unit_lex = bm25_coverage(terms, weights, counts, n, avg_unit) if counts else 0.0
        sim = (1 - alpha) * (centred_cosine(cos, background) or 0.0) + alpha * chunk_sim[cid]
        lex = (1 - alpha) * unit_lex + alpha * chunk_lex[cid]
        hybrid = hybrid_score(sim, lex, params.vector_weight, params.text_weight)
        prefers = False
        if (speaker_boost and asked_words) or advice:
            who = speaker_of(text)
            turn: tuple[str, ...] = ()
            if not who or advice:
                if cid not in roles:
                    chunk = chunks[cid]
                    roles[cid] = (
                        turn_roles(chunk.text, chunk.start_line)
                        if marks_a_speaker_asked(chunk.text, names_asked)
                        else {}
                    )
                turn = roles[cid].get(a, ())
            who = who or turn
            if speaker_boost and speaker_asked(who, asked_words):
                hybrid *= 1.0 + speaker_boost
            if advice and any(w and set(w) <= USER_ROLES for w in (who, turn)):
                prefers = states_preference(text)
                if prefers:
                    hybrid *= 1.0 + preference_boost
        answers = kind is not None and (lex > 0 or under(heading, terms)) and holds_kind(text, kind, asked)
        if answers:
            hybrid *= 1.0 + answer_boost
        score = hybrid * decays[cid]
        key = (chunks[cid].path, a, b)
        if key not in best or score > best[key].score:
            best[key] = ScoredUnit(
                score, cid, uid, a, b, heading, text, cos, sim, lex, hybrid, answers, prefers
            )
    return list(best.values()), decays


def unit_candidates(
    chunks: dict[int, Candidate],
    scored: list[ScoredUnit],
    decays: dict[int, float],
    fts: dict[int, float],
    keep: int,
    kind: str | None,
) -> list[Candidate]:
    """The ``keep`` best units as candidates: each its chunk's fields with the unit's lines, text
    and scores (``fts``: the chunks' FTS5 ranks; ``kind``: the kind of answer the query asks for,
    recorded on a unit holding one)."""
    out: list[Candidate] = []
    for u in heapq.nlargest(keep, scored, key=lambda r: r.score):
        # the chunk's fields with the unit's (a fifth of dataclasses.replace's cost, which
        # reads the fields' definitions each time: up to 600 units a search)
        c = Candidate(
            **{
                **vars(chunks[u.chunk_id]),
                "start_line": u.start_line,
                "end_line": u.end_line,
                "text": u.text,
                "heading": u.heading,
                "cosine": u.cosine,
                "similarity": u.similarity,
                "bm25": u.lexical,
                "fts_rank": fts.get(u.chunk_id),
                "hybrid": u.hybrid,
                "decay": decays[u.chunk_id],
                "score": u.score,
            }
        )
        if u.unit_id >= 0:
            c.extra = {**c.extra, "unit_id": u.unit_id}
        if u.answers:  # holds the kind of answer the question asks for (``answer_boost``)
            c.extra = {**c.extra, "answers": kind}
        if u.prefers:  # the user's own standing rule, on a "how should I" (``preference_boost``)
            c.extra = {**c.extra, "preference": True}
        out.append(c)
    return out
