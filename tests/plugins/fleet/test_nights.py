"""Which night is due, per workspace time zone (pure)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from lifelong_plugins.fleet.nights import due_nights, last_fire_time, parse_at

BERLIN, NEW_YORK, TOKYO = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York"), ZoneInfo("Asia/Tokyo")
AT = dt.time(3, 0)


def utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def test_each_workspace_is_due_at_its_own_three_am() -> None:
    workspaces = [("berlin", BERLIN), ("ny", NEW_YORK), ("tokyo", TOKYO)]
    grace = dt.timedelta(hours=1)
    # 2026-03-10 02:30 UTC: 03:30 in Berlin (due), 22:30 the day before in New York, 11:30 in Tokyo
    due = {
        d.workspace: d.night.isoformat()
        for d in due_nights(workspaces, utc("2026-03-10T02:30"), at=AT, grace=grace)
    }
    assert due == {"berlin": "2026-03-10"}
    # 07:30 UTC is 03:30 EDT (New York switched to summer time on March 8)
    due = {
        d.workspace: d.night.isoformat()
        for d in due_nights(workspaces, utc("2026-03-10T07:30"), at=AT, grace=grace)
    }
    assert due == {"ny": "2026-03-10"}
    # 18:30 UTC is 03:30 the next day in Tokyo
    due = {
        d.workspace: d.night.isoformat()
        for d in due_nights(workspaces, utc("2026-03-10T18:30"), at=AT, grace=grace)
    }
    assert due == {"tokyo": "2026-03-11"}


def test_catch_up_within_grace_only() -> None:
    now = utc("2026-03-10T12:00")  # 13:00 in Berlin: the 03:00 run was missed 10 hours ago
    assert [
        d.night.isoformat() for d in due_nights([("b", BERLIN)], now, at=AT, grace=dt.timedelta(hours=20))
    ] == ["2026-03-10"]
    assert due_nights([("b", BERLIN)], now, at=AT, grace=dt.timedelta(hours=6)) == []


def test_fire_time_on_dst_days_is_once_a_night() -> None:
    # Berlin springs forward on 2026-03-29 (02:00 -> 03:00); 03:00 exists and is 01:00 UTC
    fire = last_fire_time(utc("2026-03-29T01:30"), BERLIN, AT)
    assert fire.date().isoformat() == "2026-03-29" and fire.astimezone(dt.UTC).hour == 1
    # the day before, 03:00 CET is 02:00 UTC
    assert last_fire_time(utc("2026-03-28T01:30"), BERLIN, AT).date().isoformat() == "2026-03-27"


def test_an_ambiguous_wall_time_is_one_night() -> None:
    # Berlin falls back on 2026-10-25: 02:30 happens twice (00:30 and 01:30 UTC); one night
    at = dt.time(2, 30)
    first = last_fire_time(utc("2026-10-25T01:00"), BERLIN, at)
    second = last_fire_time(utc("2026-10-25T03:00"), BERLIN, at)
    assert first.date() == second.date() == dt.date(2026, 10, 25)
    assert first.astimezone(dt.UTC).hour == 0 and second.astimezone(dt.UTC).hour == 1
    assert last_fire_time(utc("2026-10-26T03:00"), BERLIN, at).date() == dt.date(2026, 10, 26)


def test_parse_at() -> None:
    assert parse_at("03:00") == dt.time(3, 0) and parse_at("23:45") == dt.time(23, 45)
    with pytest.raises(ValueError, match="HH:MM"):
        parse_at("3am")
