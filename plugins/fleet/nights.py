"""Which night each workspace is due for (pure).

A workspace's night is the date of its nightly fire time (``at``, 03:00 by default) in the
workspace's own time zone. At any instant the *due* night is the latest fire time at or before
now; it is enqueued once, and only while it is within ``grace`` of its fire time (a scheduler that
was down catches up the last missed night, not a backlog of them: the nightly run looks back over
every day since the previous run anyway).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class DueNight:
    workspace: str
    night: dt.date
    fire_time: dt.datetime  # timezone-aware, in the workspace's zone


def parse_at(text: str) -> dt.time:
    """``HH:MM`` (24 h)."""
    try:
        value = dt.time.fromisoformat(text.strip())
    except ValueError as exc:
        raise ValueError(f"--at must be HH:MM, got {text!r}") from exc
    return value.replace(second=0, microsecond=0, tzinfo=None)


def last_fire_time(now: dt.datetime, tz: dt.tzinfo, at: dt.time) -> dt.datetime:
    """The latest ``at`` in ``tz`` at or before ``now`` (DST-safe: a wall time that does not exist
    on a spring-forward day resolves the way zoneinfo does, once)."""
    local = now.astimezone(tz)
    fire = dt.datetime.combine(local.date(), at, tzinfo=tz)
    if fire > local:
        fire = dt.datetime.combine(local.date() - dt.timedelta(days=1), at, tzinfo=tz)
    return fire


def due_nights(
    workspaces: Iterable[tuple[str, dt.tzinfo]], now: dt.datetime, *, at: dt.time, grace: dt.timedelta
) -> list[DueNight]:
    """The night each workspace is due for at ``now``, when its fire time is within ``grace``."""
    out = []
    for root, tz in workspaces:
        fire = last_fire_time(now, tz, at)
        if now - fire <= grace:
            out.append(DueNight(root, fire.date(), fire))
    return out
