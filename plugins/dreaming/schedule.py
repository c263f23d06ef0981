"""`lifelong dream schedule`: a blocking APScheduler process that runs the consolidation at 03:00
in the workspace time zone (``plugins.dreaming.schedule``, a crontab expression).

One job per workspace (id ``dream:<root>``), ``coalesce`` so a backlog of missed fire times runs
once, ``misfire_grace_time`` so a run missed while the machine slept still happens when it wakes
(within the grace), ``max_instances=1`` and the run's own ``dream`` lock so two runs never overlap.
A night missed while the scheduler was not running at all is caught up once at start-up (when the
last recorded run is older than the last fire time and that fire time is within the grace).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from lifelong import clock
from lifelong.errors import ConfigError, LifelongError, LockedError
from lifelong.host import Host
from lifelong.workspace import Workspace

from .record import PLUGIN
from .run import run_dream
from .state import last_good_run_start


def make_trigger(expr: str, tz: dt.tzinfo) -> CronTrigger:
    try:
        return CronTrigger.from_crontab(expr, timezone=tz)
    except ValueError as exc:
        raise ConfigError(f"plugins.dreaming.schedule: invalid cron expression {expr!r} ({exc})") from exc


def next_fire_time(expr: str, tz: dt.tzinfo, after: dt.datetime) -> dt.datetime | None:
    """The first fire time strictly after ``after`` (timezone-aware, in ``tz``)."""
    return make_trigger(expr, tz).get_next_fire_time(None, after + dt.timedelta(microseconds=1))


def last_fire_time(trigger: CronTrigger, now: dt.datetime, horizon_days: int = 8) -> dt.datetime | None:
    """The latest fire time at or before ``now`` (looking back ``horizon_days``)."""
    fire = trigger.get_next_fire_time(None, now - dt.timedelta(days=horizon_days))
    last = None
    while fire is not None and fire <= now:
        last = fire
        fire = trigger.get_next_fire_time(fire, fire + dt.timedelta(seconds=1))
    return last


def missed_fire_time(
    trigger: CronTrigger, last_run: dt.datetime | None, now: dt.datetime, grace_s: float
) -> dt.datetime | None:
    """The fire time to catch up once at start-up, or None."""
    fire = last_fire_time(trigger, now)
    if fire is None or (last_run is not None and last_run >= fire):
        return None
    if (now - fire).total_seconds() > grace_s:
        return None
    return fire


def last_run_time(host: Host) -> dt.datetime | None:
    started = last_good_run_start(host.store)
    return dt.datetime.fromisoformat(started) if started else None


def scheduled_run(root: str, echo: Callable[[str], None]) -> None:
    """The job: a fresh host per night (config re-read), one line of outcome."""
    host = Host(Workspace(root))
    try:
        run = run_dream(host)
        echo(
            f"{run.now.isoformat(timespec='minutes')} dream {run.run_id}: {run.status}, "
            f"{len(run.promoted)} promoted ({run.elapsed_ms:.0f} ms)"
        )
    except LockedError as exc:
        echo(f"skipped: {exc}")
    except LifelongError as exc:
        echo(f"error: {exc}")
    finally:
        host.close()


def build_scheduler(
    host: Host, *, echo: Callable[[str], None] = print, scheduler_cls: type = BlockingScheduler
) -> tuple[Any, dict[str, Any]]:
    """The configured scheduler (not started) and what it will do."""
    ws = host.workspace
    assert ws is not None
    cfg = host.plugin_config(PLUGIN)
    tz = ws.timezone
    trigger = make_trigger(cfg["schedule"], tz)
    scheduler = scheduler_cls(timezone=tz)
    job_id = f"dream:{ws.root}"
    common = {"coalesce": True, "max_instances": 1, "misfire_grace_time": int(cfg["misfire_grace_s"])}
    scheduler.add_job(
        scheduled_run, trigger, args=[str(ws.root), echo], id=job_id, replace_existing=True, **common
    )
    now = clock.now(tz)
    missed = (
        missed_fire_time(trigger, last_run_time(host), now, cfg["misfire_grace_s"])
        if cfg["catch_up"]
        else None
    )
    if missed is not None:
        scheduler.add_job(
            scheduled_run, "date", run_date=now, args=[str(ws.root), echo], id=f"{job_id}:catch-up", **common
        )
    info = {
        "workspace": str(ws.root),
        "schedule": cfg["schedule"],
        "timezone": str(tz),
        "next_run": trigger.get_next_fire_time(None, now),
        "catch_up": missed,
        "job_id": job_id,
    }
    return scheduler, info


def serve(host: Host, echo: Callable[[str], None] = print) -> None:
    """Block, running the consolidation on schedule, until interrupted."""
    scheduler, info = build_scheduler(host, echo=echo)
    root = Path(info["workspace"])
    host.close()
    echo(
        f"dream schedule for {root}: '{info['schedule']}' in {info['timezone']}; "
        f"next run {info['next_run'].isoformat(timespec='minutes')}"
        + (
            f"; catching up the missed {info['catch_up'].isoformat(timespec='minutes')} run now"
            if info["catch_up"]
            else ""
        )
        + " (Ctrl-C to stop)"
    )
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        echo("dream schedule stopped")
