"""`lifelong dream replay SCRIPT`: replay days of an agent's searches with a dream each night.

A replay script (YAML) names the days and what the agent searched on each::

    first_day: 2026-03-02
    last_day: 2026-03-23
    hours: [9, 13, 17, 20]        # the n-th search of a day runs at hours[n % len(hours)]
    searches:
      "2026-03-02": ["when is the Northwind Ventures meeting", "who owns the Android client"]

Each day, with the clock pinned to that day, each search goes through the real
``memory_search`` tool (``source="tool"``, valid as of that moment, so later notes stay unseen);
each night at 03:00 (workspace time zone) the real consolidation runs. ``lifelong demo`` replays
its own script this way.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lifelong import clock
from lifelong.cli import emit_json
from lifelong.contracts import MEMORY_SEARCH
from lifelong.errors import InputError

from .run import run_dream
from .screening import neutralise_json
from .state import any_runs

DEFAULT_HOURS = (9, 13, 17, 20)


@dataclass(frozen=True)
class ReplayScript:
    first_day: dt.date
    last_day: dt.date
    searches: dict[str, list[str]]
    hours: tuple[int, ...] = DEFAULT_HOURS


def _day(value: Any, key: str, where: str) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise InputError(f"{where}: {key} must be a date (YYYY-MM-DD), got {value!r}") from exc


def load_script(path: Path) -> ReplayScript:
    """Read and check a replay script; InputError names the file and the problem."""
    where = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: cannot read ({exc})") from exc
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("searches"), dict):
        raise InputError(f"{where}: needs first_day, last_day and a 'searches' mapping of date -> queries")
    first = _day(data.get("first_day"), "first_day", where)
    last = _day(data.get("last_day"), "last_day", where)
    if last < first:
        raise InputError(f"{where}: last_day {last} is before first_day {first}")
    searches: dict[str, list[str]] = {}
    for day, queries in data["searches"].items():
        key = _day(day, "a searches key", where).isoformat()
        if not isinstance(queries, list) or not all(isinstance(q, str) and q.strip() for q in queries):
            raise InputError(f"{where}: searches[{key}] must be a list of non-empty strings")
        searches[key] = list(queries)
    hours = tuple(data.get("hours") or DEFAULT_HOURS)
    if not all(isinstance(h, int) and 0 <= h <= 23 for h in hours):
        raise InputError(f"{where}: hours must be whole hours from 0 to 23")
    return ReplayScript(first, last, searches, hours)


def replay(
    host: Any,
    script: ReplayScript,
    *,
    on_night: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Search each day, dream each night at 03:00 (workspace time zone). Returns the nights."""
    tz = host.workspace.timezone
    nights = []
    day = script.first_day
    hours = script.hours
    while day <= script.last_day:
        queries = script.searches.get(day.isoformat(), [])
        hits = 0
        for n, query in enumerate(queries):
            at = dt.datetime(day.year, day.month, day.day, hours[n % len(hours)], tzinfo=tz)
            with clock.pinned(at):
                result = host.ctx.call_tool(
                    MEMORY_SEARCH, query=query, source="tool", mode="valid-at", as_of=at.isoformat()
                )
            if "error" in result:
                raise InputError(f"replay search {query!r} failed: {result['error']}")
            hits += len(result["results"])
        night = day + dt.timedelta(days=1)
        with clock.pinned(dt.datetime(night.year, night.month, night.day, 3, tzinfo=tz)):
            run = run_dream(host)
        entry = {
            "day": day.isoformat(),
            "night": night.isoformat(),  # the dream's date: it runs at 03:00 after the day
            "searches": queries,
            "hits": hits,
            "run_id": run.run_id,
            "status": run.status,
            "promoted": [{"key": p["key"], "text": p["text"], "source": p["source"]} for p in run.promoted],
            "candidates": run.reports.get("deep", {}).get("scored", 0),
        }
        nights.append(entry)
        if on_night:
            on_night(entry)
        day = night
    return nights


def replay_script(
    host: Any,
    script: ReplayScript,
    *,
    echo: Callable[[str], None] | None,
    as_json: bool = False,
    show_file: Callable[[str], None] | None = None,
) -> list[dict]:
    """Replay ``script`` on a workspace that has never dreamed, printing each night through
    ``echo`` and then MEMORY.md through ``show_file`` (default ``echo``): the user's own file,
    which the command prints as it is on disk."""
    ws = host.workspace
    if any_runs(host.store):
        raise InputError(
            "this workspace already has dream runs; a replay starts from a workspace that never dreamed"
        )
    memory = ws.memory_file
    before = memory.stat().st_size if memory.exists() else 0

    def show(entry: dict[str, Any]) -> None:
        if echo is None:
            return
        n = len(entry["searches"])
        line = f"{entry['day']}: {n} search{'es' if n != 1 else ''}; dream at {entry['night']} 03:00: "
        if entry["promoted"]:
            line += f"{len(entry['promoted'])} promoted into MEMORY.md"
        else:
            line += f"nothing promoted ({entry['candidates']} candidates)"
        echo(line)
        for p in entry["promoted"]:
            echo(f"    + {p['text']}  [Source: {p['source']}]")

    nights = replay(host, script, on_night=show)
    after = memory.stat().st_size if memory.exists() else 0
    total = sum(len(n["promoted"]) for n in nights)
    if as_json:
        emit_json(
            neutralise_json(
                {
                    "version": 1,
                    "nights": nights,
                    "promoted": total,
                    "memory_bytes_before": before,
                    "memory_bytes_after": after,
                }
            )
        )
    elif echo is not None:
        echo(f"\nMEMORY.md grew from {before} to {after} bytes with {total} cited item(s):\n")
        (show_file or echo)(memory.read_text("utf-8").rstrip())
    return nights
