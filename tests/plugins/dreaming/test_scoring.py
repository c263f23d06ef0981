"""The six-signal score, the boost and the three gates (pure)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from lifelong_plugins.dreaming.scoring import ScoreConfig, Signals, consolidation, score

DEFAULTS = ScoreConfig.from_config({})


def strong(**kw) -> Signals:
    base = dict(
        recalls=6,
        recall_days=3,
        unique_queries=4,
        contexts=6,
        mean_score=0.7,
        written_days=1,
        distinct_days=4,
        span_days=8,
        days_since_last=0.5,
        richness=1.0,
    )
    base.update(kw)
    return Signals(**base)


def test_formula_weights_and_components() -> None:
    sig = strong()
    s = score(sig, DEFAULTS)
    c = s.components
    assert c["relevance"] == pytest.approx(0.7)
    assert c["frequency"] == pytest.approx(math.log1p(7) / math.log1p(10))
    assert c["diversity"] == 1.0
    assert c["recency"] == pytest.approx(2 ** (-0.5 / 7))
    assert c["consolidation"] == 1.0
    assert c["richness"] == 1.0
    expected = 0.30 * 0.7 + 0.24 * c["frequency"] + 0.15 + 0.15 * c["recency"] + 0.10 + 0.06
    assert s.total == pytest.approx(expected)
    assert s.passed and s.failed_gates == ()


def test_each_gate_blocks_on_its_own() -> None:
    assert score(strong(recalls=2), DEFAULTS).failed_gates == ("recalls 2 < 3",)
    assert score(strong(unique_queries=2), DEFAULTS).failed_gates == ("unique queries 2 < 3",)
    # a burst of look-ups on one day is not a fact looked up across days
    assert score(strong(recall_days=1), DEFAULTS).failed_gates == ("recall days 1 < 2",)
    weak = score(strong(mean_score=0.1, days_since_last=30, distinct_days=1, span_days=0), DEFAULTS)
    assert not weak.passed and weak.failed_gates[0].startswith("score ")


def test_backfill_lowers_the_score_gate_and_drops_count_gates() -> None:
    backfill = ScoreConfig.from_config({}, backfill=True)
    assert (backfill.min_score, backfill.min_recalls, backfill.min_unique_queries) == (0.5, 0, 0)
    written = Signals(
        contexts=4, written_days=4, distinct_days=4, span_days=10, days_since_last=1, richness=0.8
    )
    assert not score(written, DEFAULTS).passed
    s = score(written, backfill)
    assert s.passed and 0.5 <= s.total < 0.8
    assert score(replace(written, written_days=3), ScoreConfig.from_config({}, backfill=True)).passed
    custom = ScoreConfig.from_config(
        {"backfill_min_score": 0.9, "backfill_min_recalls": 1, "backfill_min_days": 5}, backfill=True
    )
    assert score(replace(written, written_days=5), custom).passed  # recurrence alone passes a backfill
    assert score(written, custom).failed_gates == (f"score {s.total:.3f} < 0.9", "recalls 0 < 1")


def test_configurable_weights_and_thresholds() -> None:
    cfg = ScoreConfig.from_config({"weights": {"relevance": 1.0}, "min_score": 0.95, "min_recalls": 1})
    s = score(strong(), cfg)
    assert s.total > score(strong(), DEFAULTS).total
    assert cfg.min_recalls == 1 and cfg.min_unique_queries == 3


def test_boost_is_recency_decayed_and_capped() -> None:
    fresh = score(strong(light_hits=1, light_age_days=0.0, rem_hits=1, rem_age_days=0.0), DEFAULTS)
    assert fresh.boost == pytest.approx(0.03)
    old = score(strong(light_hits=1, light_age_days=7.0, rem_hits=1, rem_age_days=7.0), DEFAULTS)
    assert old.boost == pytest.approx(0.015)
    capped = score(strong(light_hits=50, light_age_days=0.0), DEFAULTS)
    assert capped.boost == 0.05


def test_consolidation_needs_more_than_one_day() -> None:
    assert consolidation(1, 0) == 0.0
    assert consolidation(2, 1) == pytest.approx(0.5 / 3 + 0.5 / 7)
    assert consolidation(4, 7) == 1.0
    assert consolidation(10, 100) == 1.0


def test_no_recall_means_no_relevance() -> None:
    assert score(Signals(mean_score=0.9), DEFAULTS).components["relevance"] == 0.0
