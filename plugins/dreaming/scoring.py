"""Deep-phase scoring (pure): six signals, a small reinforcement boost, three gates.

    S = 0.30·relevance + 0.24·frequency + 0.15·diversity + 0.15·recency
        + 0.10·consolidation + 0.06·richness + boost

- relevance: mean retrieval score of the recall events attributed to the candidate (0 if none)
- frequency: log1p(signals) / log1p(frequency_saturation), capped at 1; signals = attributed
  recalls + distinct days the text was written down
- diversity: distinct contexts / diversity_saturation, capped at 1; a context is one (query, day)
  pair of a recall, or one day the text was written down
- recency: 2^(-days_since_last_signal / recency_half_life_days)
- consolidation: multi-day recurrence, half from distinct days (saturating at 4) and half from the
  span between first and last day (saturating at a week)
- richness: concept-tag density (names, identifiers, dates, amounts per content word), saturating
  at one tag per four content words
- boost: light and REM reinforcement, each hit worth ``light_boost``/``rem_boost``, decayed by the
  recency half-life since that phase last saw it, capped at ``max_boost``

Promote iff S >= min_score and recalls >= min_recalls and unique queries >= min_unique_queries and
the recalls fall on >= min_recall_days (2) distinct days after the day it was first written down (a
fact is looked up on more than one day; a look-up the day a thing is written is the burst around
writing it, not evidence that it lasts);
``--backfill`` uses backfill_min_score with its own (default 0) count gates for one run, and also
passes a fact written down on ``backfill_min_days`` (3) distinct days or more: a workspace with
months of notes and no search history has recurrence as its only evidence.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from lifelong.decay import decay_factor

COMPONENTS = ("relevance", "frequency", "diversity", "recency", "consolidation", "richness")
DEFAULT_WEIGHTS = {
    "relevance": 0.30,
    "frequency": 0.24,
    "diversity": 0.15,
    "recency": 0.15,
    "consolidation": 0.10,
    "richness": 0.06,
}


@dataclass(frozen=True)
class Signals:
    """What is known about one candidate at scoring time."""

    recalls: int = 0
    unique_queries: int = 0
    contexts: int = 0
    mean_score: float = 0.0
    written_days: int = 0
    distinct_days: int = 0
    span_days: float = 0.0
    days_since_last: float = 0.0
    richness: float = 0.0
    light_hits: int = 0
    light_age_days: float | None = None
    rem_hits: int = 0
    rem_age_days: float | None = None
    recall_days: int = 0  # distinct days with a recall, after the day the fact was first written

    @property
    def signal_count(self) -> int:
        return self.recalls + self.written_days


@dataclass(frozen=True)
class ScoreConfig:
    weights: tuple[tuple[str, float], ...]
    frequency_saturation: int = 10
    diversity_saturation: int = 5
    recency_half_life_days: float = 7.0
    light_boost: float = 0.01
    rem_boost: float = 0.02
    max_boost: float = 0.05
    min_score: float = 0.8
    min_recalls: int = 3
    min_unique_queries: int = 3
    min_recall_days: int = 2
    recurrence_days: int = 0  # backfill: a fact written on this many days passes on recurrence alone

    @classmethod
    def from_config(cls, cfg: dict[str, Any], *, backfill: bool = False) -> ScoreConfig:
        weights = {**DEFAULT_WEIGHTS, **(cfg.get("weights") or {})}
        prefix = "backfill_" if backfill else ""
        return cls(
            weights=tuple((k, float(weights[k])) for k in COMPONENTS),
            frequency_saturation=int(cfg.get("frequency_saturation", 10)),
            diversity_saturation=int(cfg.get("diversity_saturation", 5)),
            recency_half_life_days=float(cfg.get("recency_half_life_days", 7.0)),
            light_boost=float(cfg.get("light_boost", 0.01)),
            rem_boost=float(cfg.get("rem_boost", 0.02)),
            max_boost=float(cfg.get("max_boost", 0.05)),
            min_score=float(cfg.get(f"{prefix}min_score", 0.5 if backfill else 0.8)),
            min_recalls=int(cfg.get(f"{prefix}min_recalls", 0 if backfill else 3)),
            min_unique_queries=int(cfg.get(f"{prefix}min_unique_queries", 0 if backfill else 3)),
            min_recall_days=int(cfg.get(f"{prefix}min_recall_days", 0 if backfill else 2)),
            recurrence_days=int(cfg.get("backfill_min_days", 3)) if backfill else 0,
        )


@dataclass(frozen=True)
class Score:
    total: float
    components: dict[str, float]
    boost: float
    passed: bool
    failed_gates: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["total"] = round(self.total, 4)
        out["boost"] = round(self.boost, 4)
        out["components"] = {k: round(v, 4) for k, v in self.components.items()}
        out["failed_gates"] = list(self.failed_gates)
        return out


def half_life_decay(age_days: float | None, half_life_days: float) -> float:
    """The suite's decay (:func:`lifelong.decay.decay_factor`, floor 0); 0 for an unknown age
    (no recency signal)."""
    if age_days is None:
        return 0.0
    return decay_factor(age_days, half_life_days)


def consolidation(distinct_days: int, span_days: float) -> float:
    """Multi-day recurrence: one day is nothing; four days over a week or more is everything."""
    if distinct_days <= 1:
        return 0.0
    return 0.5 * min(1.0, (distinct_days - 1) / 3.0) + 0.5 * min(1.0, span_days / 7.0)


def components(sig: Signals, cfg: ScoreConfig) -> dict[str, float]:
    return {
        "relevance": max(0.0, min(1.0, sig.mean_score)) if sig.recalls else 0.0,
        "frequency": min(1.0, math.log1p(sig.signal_count) / math.log1p(cfg.frequency_saturation)),
        "diversity": min(1.0, sig.contexts / cfg.diversity_saturation),
        "recency": half_life_decay(sig.days_since_last, cfg.recency_half_life_days),
        "consolidation": consolidation(sig.distinct_days, sig.span_days),
        "richness": max(0.0, min(1.0, sig.richness)),
    }


def boost(sig: Signals, cfg: ScoreConfig) -> float:
    light = cfg.light_boost * sig.light_hits * half_life_decay(sig.light_age_days, cfg.recency_half_life_days)
    rem = cfg.rem_boost * sig.rem_hits * half_life_decay(sig.rem_age_days, cfg.recency_half_life_days)
    return min(cfg.max_boost, light + rem)


def score(sig: Signals, cfg: ScoreConfig) -> Score:
    comps = components(sig, cfg)
    weights = dict(cfg.weights)
    b = boost(sig, cfg)
    total = sum(weights[k] * comps[k] for k in COMPONENTS) + b
    failed = []
    if total < cfg.min_score:
        failed.append(f"score {total:.3f} < {cfg.min_score:g}")
    if sig.recalls < cfg.min_recalls:
        failed.append(f"recalls {sig.recalls} < {cfg.min_recalls}")
    if sig.unique_queries < cfg.min_unique_queries:
        failed.append(f"unique queries {sig.unique_queries} < {cfg.min_unique_queries}")
    if sig.recall_days < cfg.min_recall_days:
        failed.append(f"recall days {sig.recall_days} < {cfg.min_recall_days}")
    if failed and cfg.recurrence_days and sig.written_days >= cfg.recurrence_days:
        failed = []  # backfill with no recall history: written on enough days is enough
    return Score(total, comps, b, not failed, tuple(failed))
