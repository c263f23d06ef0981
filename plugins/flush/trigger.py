"""When to flush before a compaction (pure).

:func:`should_flush` is the threshold a runtime checks as its context fills: flush once the tokens
in use reach ``context_window - reserve_tokens_floor - soft_threshold_tokens`` (inclusive). A total
that is missing, zero, negative or not a number never triggers.

:func:`plan_flush` decides for one ``before_compaction`` call, given the session's record (what
was flushed before): exactly once per compaction cycle, on every path. The record stores the
compaction count as it was when the flush ran (before the runtime increments it after compacting),
so the next cycle, with the count moved on, flushes again: three cycles flush three times. A second
call within the same cycle is skipped. A token total equal to the one seen at the last flush, while
the count has not moved, is a stale cached figure and does not trigger. The forced and
overflow-recovery paths always flush (once per cycle): the context is being compacted whatever the
total says — OpenClaw's own flush is skipped by both (openclaw#12590, #114081).
"""

from __future__ import annotations

from dataclasses import dataclass

PATHS = ("normal", "forced", "overflow")


def _count(value: object) -> int | None:
    """A non-negative whole number from the session, else None (bools are not counts)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value < 0:  # NaN or negative
        return None
    return int(value)


def should_flush(
    total_tokens: object,
    context_window: object,
    reserve_tokens_floor: int = 20000,
    soft_threshold_tokens: int = 4000,
) -> bool:
    """True when ``total_tokens`` reaches the flush threshold of ``context_window`` (inclusive)."""
    total, window = _count(total_tokens), _count(context_window)
    if not total or not window:
        return False
    return total >= window - reserve_tokens_floor - soft_threshold_tokens


@dataclass(frozen=True)
class FlushRecord:
    """What was flushed for one session: the compaction count at that flush and the token total."""

    compaction_count: int
    total_tokens: int | None


@dataclass(frozen=True)
class FlushDecision:
    run: bool
    reason: str
    compaction_count: int
    path: str


def plan_flush(
    session: dict[str, object],
    record: FlushRecord | None,
    *,
    reserve_tokens_floor: int,
    soft_threshold_tokens: int,
) -> FlushDecision:
    """Whether this ``before_compaction`` call flushes (see the module docstring)."""
    path = str(session.get("compaction_path") or "normal")
    if path not in PATHS:
        path = "normal"
    count = _count(session.get("compaction_count")) or 0
    total = _count(session.get("total_tokens"))
    if record is not None and record.compaction_count == count:
        return FlushDecision(False, f"already flushed for compaction {count}", count, path)
    if path in ("forced", "overflow"):
        return FlushDecision(True, f"{path} compaction", count, path)
    if record is not None and total is not None and total == record.total_tokens:
        return FlushDecision(False, "token total unchanged since the last flush (stale)", count, path)
    if not should_flush(total, session.get("context_window"), reserve_tokens_floor, soft_threshold_tokens):
        if not total:
            return FlushDecision(False, "no token total (pass total_tokens and context_window)", count, path)
        return FlushDecision(False, "below the flush threshold", count, path)
    return FlushDecision(True, "threshold reached", count, path)
