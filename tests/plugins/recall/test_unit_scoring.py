"""Unit scoring without a database: chunks, units and cosines as typed records, scored by
``recall.unit_scoring`` exactly as the searcher scores what it reads from the index."""

from __future__ import annotations

import math

import pytest
from lifelong_plugins.recall.unit_scoring import (
    QueryTerms,
    UnitRow,
    UnitScoring,
    score_units,
    under,
    unit_candidates,
)
from lifelong_plugins.recall.when import QueryTime

from lifelong.contracts import Candidate

DAY = 86400.0
NOW = 1_780_000_000.0
FTS_ONLY = UnitScoring(vector_weight=0.0, text_weight=1.0, context_weight=0.0, decay_floor=0.0)


def chunk(
    cid: int, text: str, *, path: str = "memory/a.md", start: int = 1, age_days: float | None = 0.0
) -> Candidate:
    n = text.count("\n") + 1
    return Candidate(
        chunk_id=cid,
        path=path,
        start_line=start,
        end_line=start + n - 1,
        text=text,
        source_date=None if age_days is None else NOW - age_days * DAY,
        evergreen=age_days is None,
    )


def query(text: str, weights: dict[str, float], when: QueryTime | None = None) -> QueryTerms:
    return QueryTerms(text, list(weights), weights, when or QueryTime())


def by_text(scored):  # noqa: ANN001, ANN202
    return {u.text: u for u in scored}


def test_the_unit_holding_the_query_word_wins_and_its_chunk_context_is_blended() -> None:
    c = chunk(1, "- the boiler broke\n- lunch with Ana")
    units = {1: [UnitRow(10, 1, 1, "", "- the boiler broke"), UnitRow(11, 2, 2, "", "- lunch with Ana")]}
    q = query("boiler", {"boiler": 2.0})
    scored, decays = score_units({1: c}, units, {}, {}, q, 0.0, FTS_ONLY, NOW)
    found = by_text(scored)
    assert found["- the boiler broke"].lexical > 0 and found["- lunch with Ana"].lexical == 0
    assert decays == {1: 1.0}
    # with half the weight on the chunk, the other line of the same chunk shares its match
    blended = UnitScoring(vector_weight=0.0, text_weight=1.0, context_weight=0.5, decay_floor=0.0)
    scored2, _ = score_units({1: c}, units, {}, {}, q, 0.0, blended, NOW)
    boiler, other = by_text(scored2)["- the boiler broke"], by_text(scored2)["- lunch with Ana"]
    # each is half its own lexical score and half its chunk's
    assert other.lexical == pytest.approx(boiler.lexical - 0.5 * found["- the boiler broke"].lexical)
    assert 0 < other.lexical < boiler.lexical


def test_decay_by_age_and_none_for_evergreen_or_a_dated_question() -> None:
    old, new, ever = (
        chunk(1, "boiler", age_days=30),
        chunk(2, "boiler", path="b.md"),
        chunk(3, "boiler", path="c.md", age_days=None),
    )
    params = UnitScoring(vector_weight=0.0, text_weight=1.0, half_life_days=30.0, decay_floor=0.5)
    q = query("boiler", {"boiler": 1.0})
    scored, decays = score_units({1: old, 2: new, 3: ever}, {}, {}, {}, q, 0.0, params, NOW)
    assert decays == {1: pytest.approx(0.75), 2: 1.0, 3: 1.0}
    s = {u.chunk_id: u for u in scored}
    assert s[1].score == pytest.approx(0.75 * s[2].score) and s[3].score == s[2].score
    assert all(u.unit_id == -1 for u in scored)  # chunks without units are scored whole
    # a question about a time (no_decay) is not decayed
    flat = UnitScoring(vector_weight=0.0, text_weight=1.0, half_life_days=0.0, decay_floor=0.5)
    _, decays = score_units({1: old}, {}, {}, {}, q, 0.0, flat, NOW)
    assert decays == {1: 1.0}
    assert UnitScoring.from_config(_config(), 0.7, 0.3, no_decay=True).half_life_days == 0.0


def test_a_period_the_query_names_demotes_chunks_outside_it() -> None:
    inside, outside = chunk(1, "boiler", age_days=2), chunk(2, "boiler", path="b.md", age_days=40)
    period = (NOW - 5 * DAY, NOW)
    params = UnitScoring(
        vector_weight=0.0, text_weight=1.0, half_life_days=0.0, period_miss_factor=0.5, period_slack_days=0
    )
    _, decays = score_units(
        {1: inside, 2: outside},
        {},
        {},
        {},
        query("boiler", {"boiler": 1.0}, QueryTime(period, True)),
        0.0,
        params,
        NOW,
    )
    assert decays == {1: 1.0, 2: 0.5}


def test_vectors_centred_and_a_unit_without_its_own_takes_its_chunks() -> None:
    c = chunk(1, "- alpha\n- beta")
    units = {1: [UnitRow(10, 1, 1, "", "- alpha"), UnitRow(11, 2, 2, "", "- beta")]}
    params = UnitScoring(vector_weight=1.0, text_weight=0.0, context_weight=0.0, decay_floor=0.0)
    scored, _ = score_units({1: c}, units, {10: 0.9}, {1: 0.6}, query("x", {}), 0.5, params, NOW)
    s = by_text(scored)
    assert s["- alpha"].cosine == 0.9 and s["- beta"].cosine == 0.6
    assert s["- alpha"].similarity == pytest.approx(min(1.0, 2 * (0.9 - 0.5) / 0.5))
    assert s["- beta"].similarity == pytest.approx(2 * (0.6 - 0.5) / 0.5)


def test_the_speaker_asked_about_is_boosted() -> None:
    c = chunk(1, "Caroline: I paint on Sundays\nMelanie: I paint on Sundays too")
    units = {
        1: [
            UnitRow(10, 1, 1, "", "Caroline: I paint on Sundays"),
            UnitRow(11, 2, 2, "", "Melanie: I paint on Sundays too"),
        ]
    }
    params = UnitScoring(
        vector_weight=0.0, text_weight=1.0, context_weight=0.0, speaker_boost=0.25, answer_boost=0.0
    )
    q = query("when does caroline paint", {"paint": 1.0})
    s = by_text(score_units({1: c}, units, {}, {}, q, 0.0, params, NOW)[0])
    caroline, melanie = s["Caroline: I paint on Sundays"], s["Melanie: I paint on Sundays too"]
    assert caroline.hybrid == pytest.approx(1.25 * caroline.lexical)
    assert melanie.hybrid == pytest.approx(melanie.lexical)


def test_a_unit_in_two_overlapping_chunks_counts_once_and_candidates_carry_the_unit() -> None:
    a = chunk(1, "- boiler\n- gas", start=1)
    b = chunk(2, "- gas\n- boiler", path="memory/a.md", start=2, age_days=0)
    units = {
        1: [UnitRow(10, 1, 1, "", "- boiler"), UnitRow(11, 2, 2, "", "- gas")],
        2: [UnitRow(20, 2, 2, "", "- gas"), UnitRow(21, 3, 3, "", "- boiler")],
    }
    scored, decays = score_units(
        {1: a, 2: b}, units, {}, {}, query("boiler", {"boiler": 1.0}), 0.0, FTS_ONLY, NOW
    )
    assert sorted((u.start_line, u.end_line) for u in scored) == [(1, 1), (2, 2), (3, 3)]
    out = unit_candidates({1: a, 2: b}, scored, decays, {1: -3.0}, keep=2, kind=None)
    assert len(out) == 2 and all("boiler" in c.text for c in out)
    first = next(c for c in out if c.start_line == 1)
    assert (first.chunk_id, first.extra["unit_id"], first.fts_rank, first.path) == (
        1,
        10,
        -3.0,
        "memory/a.md",
    )
    assert first.score == first.hybrid * first.decay and math.isclose(first.bm25, scored[0].lexical)


def test_a_heading_naming_the_query_word_puts_a_unit_under_it() -> None:
    assert (
        under("Birthdays", ["birthday"]) and not under("", ["birthday"]) and not under("Work", ["birthday"])
    )


def _config() -> dict[str, float]:
    return {
        "context_weight": 0.3,
        "half_life_days": 30,
        "decay_floor": 0.9,
        "period_miss_factor": 0.5,
        "period_slack_days": 7,
        "speaker_boost": 0.25,
        "answer_boost": 0.1,
        "preference_boost": 0.2,
    }
