"""The signals of a fact (promotion.build_signals, pure): what counts as a recall day."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from lifelong_plugins.dreaming.candidates import Candidate, Occurrence
from lifelong_plugins.dreaming.promotion import build_signals
from lifelong_plugins.dreaming.scoring import ScoreConfig, score

TZ = ZoneInfo("Europe/Berlin")


def at(day: str, hour: int) -> float:
    d = dt.date.fromisoformat(day)
    return dt.datetime(d.year, d.month, d.day, hour, tzinfo=TZ).timestamp()


def line(text: str, day: str) -> tuple[Candidate, Occurrence]:
    path = f"memory/{day}.md"
    c = Candidate("k1", text, "Home", path, 4, 4, day, at(day, 9))
    return c, Occurrence("k1", path, "k1", 4, 4, day, text)


def test_lookups_on_the_day_a_thing_was_written_are_not_recall_days() -> None:
    """A one-off looked up three ways the day it was written (a burst) and once, by chance, on a
    later day is looked up on one day after it was written, not two: the recall-days gate fails."""
    c, occ = line("Left my umbrella at the corner café, must pick it up.", "2026-04-11")
    recalls = [
        (at("2026-04-11", 13), "2026-04-11", "q-where", 0.67),
        (at("2026-04-11", 14), "2026-04-11", "q-leave", 0.64),
        (at("2026-04-11", 17), "2026-04-11", "q-cafe", 0.75),
        (at("2026-04-22", 21), "2026-04-22", "q-cafe", 0.76),
    ]
    now = dt.datetime(2026, 4, 23, 3, tzinfo=TZ)
    sig = build_signals(c, recalls, [occ], now.timestamp(), TZ, now.date())
    assert sig.recall_days == 1
    assert sig.recalls == 4 and sig.unique_queries == 3
    result = score(sig, ScoreConfig.from_config({}))
    assert not result.passed
    assert "recall days 1 < 2" in result.failed_gates


def test_lookups_on_later_days_count_even_on_days_it_was_restated() -> None:
    c, occ = line("Greta is allergic to sesame.", "2026-04-07")
    later = Occurrence("k1", "memory/2026-04-13.md", "k1", 2, 2, "2026-04-13", c.text)
    recalls = [
        (at("2026-04-07", 20), "2026-04-07", "q1", 0.8),
        (at("2026-04-08", 10), "2026-04-08", "q2", 0.8),
        (at("2026-04-13", 10), "2026-04-13", "q3", 0.7),
    ]
    now = dt.datetime(2026, 4, 14, 3, tzinfo=TZ)
    sig = build_signals(c, recalls, [occ, later], now.timestamp(), TZ, now.date())
    assert sig.recall_days == 2  # 04-08 and 04-13 (restated that day, but first written on 04-07)
    assert sig.distinct_days == 3 and sig.written_days == 2
