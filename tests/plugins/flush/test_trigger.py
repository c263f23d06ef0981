"""When a flush runs (pure): the threshold, once per compaction cycle, every path."""

from __future__ import annotations

import pytest
from lifelong_plugins.flush.trigger import FlushRecord, plan_flush, should_flush

CFG = {"reserve_tokens_floor": 20000, "soft_threshold_tokens": 4000}


def test_the_threshold_is_inclusive() -> None:
    assert should_flush(76000, 100000) and should_flush(76001, 100000)
    assert not should_flush(75999, 100000)


@pytest.mark.parametrize("total", [0, None, -5, "90000", True, float("nan")])
def test_a_missing_zero_or_negative_total_never_triggers(total) -> None:  # noqa: ANN001
    assert not should_flush(total, 100000)
    decision = plan_flush({"total_tokens": total, "context_window": 100000}, None, **CFG)
    assert not decision.run


def test_once_per_cycle_and_the_record_keeps_the_pre_increment_count() -> None:
    record = None
    flushed = 0
    for cycle in range(3):  # three compactions: the runtime increments the count after each
        session = {"total_tokens": 90000 + cycle, "context_window": 100000, "compaction_count": cycle}
        first = plan_flush(session, record, **CFG)
        assert first.run and first.compaction_count == cycle
        flushed += 1
        record = FlushRecord(first.compaction_count, session["total_tokens"])
        again = plan_flush(session, record, **CFG)  # the same cycle asks again
        assert not again.run and "already flushed for compaction" in again.reason
    assert flushed == 3


def test_a_stale_cached_total_does_not_trigger() -> None:
    record = FlushRecord(compaction_count=0, total_tokens=90000)
    stale = plan_flush(
        {"total_tokens": 90000, "context_window": 100000, "compaction_count": 1}, record, **CFG
    )
    assert not stale.run and "stale" in stale.reason
    fresh = plan_flush(
        {"total_tokens": 91000, "context_window": 100000, "compaction_count": 1}, record, **CFG
    )
    assert fresh.run


@pytest.mark.parametrize("path", ["forced", "overflow"])
def test_forced_and_overflow_paths_always_flush_once(path: str) -> None:
    session = {"compaction_path": path, "compaction_count": 4}  # no token figures at all
    decision = plan_flush(session, None, **CFG)
    assert decision.run and decision.path == path
    assert not plan_flush(session, FlushRecord(4, None), **CFG).run


@pytest.mark.parametrize(
    "text,trivial",
    [
        ("ok thanks!", True),
        ("👍", True),
        ("sounds good, will do", True),
        ("got it, thanks a lot", True),
        ("locker code is now 4417", False),
        ("Mara's flight lands at 18:40", False),
        ("remind me to call Jonas", False),
        (
            "By the way, the SSL certificate for api.tidewater.io expires on June 12, renew it before then.",
            False,
        ),
    ],
)
def test_triviality(text: str, trivial: bool) -> None:
    from lifelong_plugins.flush.capture import is_trivial

    assert is_trivial(text, 20) is trivial
