"""Which night each workspace is due for (pure).

A workspace's night is the date of its nightly fire time (``at``, 03:00 by default) in the
workspace's own time zone. At any instant the *due* night is the latest fire time at or before
now; it is enqueued once, and only while it is within ``grace`` of its fire time (a scheduler that
was down catches up the last missed night, not a backlog of them: the nightly run looks back over
every day since the previous run anyway).

The fire times come from APScheduler's ``CronTrigger`` in the workspace's zone (DST included), as
for ``lifelong dream schedule``. What is not APScheduler's: the pass that asks, for every
workspace, which night is due now, and the once-per-night claim in Redis. APScheduler's catch-up
(``misfire_grace_time``) needs its job state to outlive the process (a job store), knows one zone
per job while the fleet's zones change with each workspace's lifelong.yaml, and does not stop a
second scheduler from firing the same night; the Redis ledger does all three.
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
    """The latest ``at`` in ``tz`` at or before ``now``, by APScheduler's ``CronTrigger`` (a wall
    time that does not exist on a spring-forward day is handled the way APScheduler does)."""
    from apscheduler.triggers.cron import CronTrigger

    trigger = CronTrigger(hour=at.hour, minute=at.minute, timezone=tz)
    utc_now = now.astimezone(dt.UTC)  # instants in UTC: aware arithmetic in tz is wall-clock
    fire = trigger.get_next_fire_time(None, utc_now - dt.timedelta(days=3))
    last = fire
    while fire is not None and fire.astimezone(dt.UTC) <= utc_now:
        last = fire
        probe = fire.astimezone(dt.UTC)
        fire = None
        for _ in range(4):  # an ambiguous wall time (autumn fall-back) may repeat: step past it
            probe += dt.timedelta(seconds=1) if fire is None else dt.timedelta(hours=1)
            fire = trigger.get_next_fire_time(last, probe)
            if fire is None or fire.astimezone(dt.UTC) > last.astimezone(dt.UTC):
                break
    assert last is not None and last.astimezone(dt.UTC) <= utc_now, "a daily trigger fires within three days"
    return last


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
