"""Claim confidence and page/claim freshness (pure; see docs/wiki.md for the formulas).

Confidence of a claim at a reference day ``ref``::

    c_e = weight_e × 0.5 ^ (age_e / half_life)          age_e = ref − date_e in days (≥ 0; undated: 0)
    c_s = min(max_source_contribution, max_{e in s} c_e)  one source (a file) counts once, capped
    confidence = 1 − Π_s (1 − c_s)                         independent sources corroborate

With the default cap 0.5 and threshold 0.6 one source never makes a claim active alone; two
fresh sources give 0.75. Pages store the confidence as of the claim's newest evidence (so a page
changes only when its sources do); lint and the tools compute it as of now.

Freshness of a page or claim by the age of its newest evidence (``updated_at``): ``fresh`` below
``aging_days`` (30), ``aging`` below ``stale_days`` (90), else ``stale``; ``unknown`` with a
reason when the date is missing or not a date.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from lifelong.decay import decay_factor

from .vault import Evidence


@dataclass(frozen=True)
class ConfidenceRule:
    max_source_contribution: float = 0.5
    active_threshold: float = 0.6
    half_life_days: float = 180.0

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> ConfidenceRule:
        return cls(
            float(cfg["max_source_contribution"]),
            float(cfg["active_threshold"]),
            float(cfg["evidence_half_life_days"]),
        )


def parse_day(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    return None


def evidence_contribution(e: Evidence, ref: dt.date, rule: ConfidenceRule) -> float:
    day = parse_day(e.date)
    age = max(0, (ref - day).days) if day is not None else 0
    return max(0.0, e.weight) * decay_factor(age, rule.half_life_days)


def confidence(evidence: Iterable[Evidence], ref: dt.date, rule: ConfidenceRule) -> float:
    """1 − Π(1 − capped per-source contribution), rounded to 3 places."""
    per_source: dict[str, float] = {}
    for e in evidence:
        c = evidence_contribution(e, ref, rule)
        per_source[e.path] = max(per_source.get(e.path, 0.0), c)
    remaining = 1.0
    for c in per_source.values():
        remaining *= 1.0 - min(rule.max_source_contribution, c)
    return round(1.0 - remaining, 3)


def newest_date(evidence: Iterable[Evidence]) -> dt.date | None:
    days = [d for d in (parse_day(e.date) for e in evidence) if d is not None]
    return max(days) if days else None


@dataclass(frozen=True)
class Freshness:
    level: str  # fresh | aging | stale | unknown
    age_days: int | None = None
    reason: str = ""


def freshness(updated_at: Any, today: dt.date, *, aging_days: int = 30, stale_days: int = 90) -> Freshness:
    if updated_at is None or updated_at == "":
        return Freshness("unknown", None, "no updated_at")
    day = parse_day(updated_at)
    if day is None:
        return Freshness("unknown", None, f"updated_at {str(updated_at)[:40]!r} is not a date")
    age = (today - day).days
    if age < aging_days:
        return Freshness("fresh", age)
    if age < stale_days:
        return Freshness("aging", age)
    return Freshness("stale", age)
