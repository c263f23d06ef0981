"""The gate's pure decision: time first, then source strength, per mode."""

from __future__ import annotations

import datetime as dt

import pytest
from lifelong_plugins.supersede.decide import Fact, Match, plan, strength_of

from lifelong.facts import compare, extract

NOW = dt.datetime(2026, 5, 5, 10, tzinfo=dt.UTC)
DAY = 86400.0


def match(old: str, new: str, time: float, strength: int = 2) -> Match:
    cmp = compare(extract(old, NOW), extract(new, NOW))
    return Match(
        Fact("old", old, "memory/2026-05-01.md", 3, 3, time=time, strength=strength), cmp, "conflict"
    )


@pytest.mark.parametrize(
    ("new", "cand_strength", "old_strength", "cand_time", "expect"),
    [
        ("The offsite is in Porto", 3, 2, 5 * DAY, ("supersede", ("old",), (), None)),  # newer, stronger
        ("The offsite is in Porto", 2, 2, 5 * DAY, ("warn", (), ("old",), None)),  # same strength: contested
        ("The offsite moved to Porto", 2, 2, 5 * DAY, ("supersede", ("old",), (), None)),  # states the change
        ("The offsite moved to Porto", 1, 2, 5 * DAY, ("warn", (), ("old",), None)),  # newer but weaker
        ("The offsite moved to Porto", 2, 2, 0.5 * DAY, ("warn", (), (), "old")),  # older: stale on arrival
        ("The offsite is in Porto", 3, 1, 0.5 * DAY, ("warn", (), ("old",), None)),  # older but stronger
    ],
)
def test_time_first_then_strength(new, cand_strength, old_strength, cand_time, expect) -> None:  # noqa: ANN001
    m = match("The offsite is in Lisbon", new, 1 * DAY, old_strength)
    result = plan(extract(new, NOW), cand_time, cand_strength, [m], "supersede")
    assert (result.action, result.supersede, result.contested, result.superseded_by) == expect, result.reason


def test_modes_and_allow() -> None:
    m = match("The offsite is in Lisbon", "The offsite moved to Porto", 1 * DAY)
    new = extract("The offsite moved to Porto", NOW)
    assert plan(new, 5 * DAY, 3, [m], "warn").action == "warn"
    assert "would supersede" in plan(new, 5 * DAY, 3, [m], "warn").reason
    assert plan(new, 5 * DAY, 3, [m], "block").action == "block"
    assert plan(new, 5 * DAY, 3, [], "block").action == "allow"


def test_hedged_text_is_never_strong() -> None:
    table = {"remember": 3}
    assert strength_of("remember", extract("The offsite is in Porto"), table, 2) == 3
    assert strength_of("remember", extract("Apparently the offsite is in Porto"), table, 2) == 1
    assert strength_of("unknown", extract("The offsite is in Porto"), table, 2) == 2
