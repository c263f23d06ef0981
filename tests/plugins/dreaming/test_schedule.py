"""The 03:00 schedule: local time across DST changes, catch-up of a missed night, the job's
settings, and the cron/systemd files."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from apscheduler.schedulers.background import BackgroundScheduler
from lifelong_plugins.dreaming.schedule import (
    build_scheduler,
    last_fire_time,
    make_trigger,
    missed_fire_time,
    next_fire_time,
)

from lifelong import clock
from lifelong.errors import ConfigError

from .conftest import at, dream

BERLIN = ZoneInfo("Europe/Berlin")
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("after", "expected_local", "expected_utc"),
    [
        # spring forward, last Sunday of March 2026: 02:00 CET -> 03:00 CEST
        (
            dt.datetime(2026, 3, 28, 3, 0, tzinfo=BERLIN),
            "2026-03-29T03:00:00+02:00",
            "2026-03-29T01:00:00+00:00",
        ),
        (
            dt.datetime(2026, 3, 29, 1, 59, tzinfo=BERLIN),
            "2026-03-29T03:00:00+02:00",
            "2026-03-29T01:00:00+00:00",
        ),
        (
            dt.datetime(2026, 3, 29, 3, 0, tzinfo=BERLIN),
            "2026-03-30T03:00:00+02:00",
            "2026-03-30T01:00:00+00:00",
        ),
        # fall back, last Sunday of October 2026: 03:00 CEST -> 02:00 CET; 03:00 happens once
        (
            dt.datetime(2026, 10, 24, 3, 0, tzinfo=BERLIN),
            "2026-10-25T03:00:00+01:00",
            "2026-10-25T02:00:00+00:00",
        ),
        (
            dt.datetime(2026, 10, 25, 3, 0, tzinfo=BERLIN),
            "2026-10-26T03:00:00+01:00",
            "2026-10-26T02:00:00+00:00",
        ),
    ],
)
def test_next_0300_local_across_dst(after: dt.datetime, expected_local: str, expected_utc: str) -> None:
    fire = next_fire_time("0 3 * * *", BERLIN, after)
    assert fire.isoformat() == expected_local
    assert fire.astimezone(dt.UTC).isoformat() == expected_utc


def test_the_night_before_a_dst_change_is_23_or_25_hours_long() -> None:
    trigger = make_trigger("0 3 * * *", BERLIN)
    sat = trigger.get_next_fire_time(None, dt.datetime(2026, 3, 28, 0, 0, tzinfo=BERLIN))
    sun = trigger.get_next_fire_time(sat, sat + dt.timedelta(seconds=1))
    assert sun.astimezone(dt.UTC) - sat.astimezone(dt.UTC) == dt.timedelta(hours=23)
    sat = trigger.get_next_fire_time(None, dt.datetime(2026, 10, 24, 0, 0, tzinfo=BERLIN))
    sun = trigger.get_next_fire_time(sat, sat + dt.timedelta(seconds=1))
    assert sun.astimezone(dt.UTC) - sat.astimezone(dt.UTC) == dt.timedelta(hours=25)


def test_invalid_cron_expression_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="plugins.dreaming.schedule: invalid cron expression"):
        make_trigger("0 27 * * *", BERLIN)


def test_a_missed_night_is_caught_up_once_within_the_grace() -> None:
    trigger = make_trigger("0 3 * * *", BERLIN)
    now = dt.datetime(2026, 3, 24, 8, 0, tzinfo=BERLIN)
    assert last_fire_time(trigger, now) == dt.datetime(2026, 3, 24, 3, 0, tzinfo=BERLIN)
    yesterday = dt.datetime(2026, 3, 23, 3, 0, 5, tzinfo=BERLIN)
    assert missed_fire_time(trigger, yesterday, now, 12 * 3600) == dt.datetime(
        2026, 3, 24, 3, 0, tzinfo=BERLIN
    )
    assert missed_fire_time(trigger, None, now, 12 * 3600) is not None
    ran = dt.datetime(2026, 3, 24, 3, 0, 1, tzinfo=BERLIN)
    assert missed_fire_time(trigger, ran, now, 12 * 3600) is None  # already ran tonight
    assert missed_fire_time(trigger, yesterday, now, 3 * 3600) is None  # too late: wait for tonight


def test_the_scheduler_has_one_coalescing_job_per_workspace(dream_host) -> None:
    host = dream_host(
        {"memory/2026-03-23.md": "# d\n\n- Android release date fixed: April 28, owned by Priya.\n"},
        {"plugins": {"dreaming": {"misfire_grace_s": 3600}}},
    )
    dream(host, at("2026-03-24", 3))
    with clock.pinned(at("2026-03-24", 9)):
        scheduler, info = build_scheduler(host, echo=lambda line: None, scheduler_cls=BackgroundScheduler)
    jobs = scheduler.get_jobs()
    assert [j.id for j in jobs] == [f"dream:{host.workspace.root}"]  # ran at 03:00: no catch-up
    job = jobs[0]
    assert job.coalesce is True and job.max_instances == 1 and job.misfire_grace_time == 3600
    assert info["next_run"].isoformat() == "2026-03-25T03:00:00+01:00"
    assert str(job.trigger.timezone) == "Europe/Berlin"

    later = dream_host({}, {"plugins": {"dreaming": {"misfire_grace_s": 43200}}})
    with clock.pinned(at("2026-03-24", 9)):
        scheduler, info = build_scheduler(later, echo=lambda line: None, scheduler_cls=BackgroundScheduler)
    assert info["catch_up"] == at("2026-03-24", 3)
    assert len(scheduler.get_jobs()) == 2


def test_cron_and_systemd_files_run_at_0300_and_catch_up() -> None:
    crontab = (ROOT / "cron" / "crontab").read_text()
    line = next(
        ln for ln in crontab.splitlines() if ln and not ln.startswith("#") and "=" not in ln.split()[0]
    )
    expr = " ".join(line.split()[:5])
    assert " lifelong " in f" {line} " and " dream " in f" {line} "
    fire = make_trigger(expr, BERLIN).get_next_fire_time(None, dt.datetime(2026, 3, 1, 12, tzinfo=BERLIN))
    assert (fire.hour, fire.minute) == (3, 0)
    timer = (ROOT / "cron" / "lifelong-dream.timer").read_text()
    assert re.search(r"^OnCalendar=\*-\*-\* 03:00:00$", timer, re.M)
    assert re.search(r"^Persistent=true$", timer, re.M)
    service = (ROOT / "cron" / "lifelong-dream.service").read_text()
    assert re.search(r"^ExecStart=.*lifelong .*dream$", service, re.M) and "Type=oneshot" in service
