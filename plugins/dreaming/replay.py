"""`lifelong dream replay-demo`: replay the template workspace's three weeks (2026-03-02 to
2026-03-23). Each day, with the clock pinned to that day, the agent runs a few realistic searches
through the real ``memory_search`` tool (``source="tool"``, answering as of that day so later notes
stay unseen); each night at 03:00 the real consolidation runs. The durable facts that keep being
looked up (the pitch decision, the offsite venue, the Android release date) end up in MEMORY.md
with their citations; one-offs (the espresso machine) do not."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from lifelong import clock
from lifelong.cli import emit_json
from lifelong.errors import InputError

from .run import run_dream

FIRST_DAY = dt.date(2026, 3, 2)
LAST_DAY = dt.date(2026, 3, 23)

# What the founder asks her agent on each day (a few realistic look-ups, several phrasings of the
# same needs across days, and one one-off question about the espresso machine).
DEMO_SEARCHES: dict[str, list[str]] = {
    "2026-03-02": ["when is the Northwind Ventures meeting", "who owns the Android client"],
    "2026-03-03": ["what should the pitch lead with", "date of the Northwind meeting"],
    "2026-03-04": ["how does the pitch open", "what is our seed ask and valuation"],
    "2026-03-05": ["pitch opening slide order", "how much are we raising in the seed"],
    "2026-03-06": ["where is the team offsite", "offsite budget"],
    "2026-03-07": ["which venue did we book for the offsite", "what did we decide about the pitch opening"],
    "2026-03-08": ["offsite location and dates"],
    "2026-03-09": ["who is the partner at Northwind", "what opens the pitch deck"],
    "2026-03-10": ["team offsite venue on the Baltic coast", "seed valuation pre-money"],
    "2026-03-11": ["pitch structure: where does market size go"],
    "2026-03-12": ["week-4 retention of the beta cohort", "what did we decide for the pitch opening"],
    "2026-03-13": ["how many people go to the offsite and where"],
    "2026-03-14": ["what will Elena Brandt ask about"],
    "2026-03-15": ["offsite booking at Gut Boltenhagen"],
    "2026-03-16": [
        "is the offsite booking confirmed",
        "when is the Android release",
        "how was the new espresso machine",
    ],
    "2026-03-17": ["Android release date", "offsite invoice due date"],
    "2026-03-18": ["who owns the Android release and when is it"],
    "2026-03-19": ["when do we ship the Android app", "what is our week-4 retention"],
    "2026-03-20": ["how does the Northwind pitch open", "which venue is the offsite at"],
    "2026-03-21": ["when is the follow-up call with Northwind"],
    "2026-03-22": ["Android release plan"],
    "2026-03-23": ["is the Android release date fixed", "what should I prepare for the Northwind follow-up"],
}
SEARCH_HOURS = (9, 13, 17, 20)


def replay(
    host: Any,
    searches: dict[str, list[str]],
    first: dt.date,
    last: dt.date,
    *,
    on_night: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Search each day, dream each night at 03:00 (workspace time zone). Returns the nights."""
    tz = host.workspace.timezone
    nights = []
    day = first
    while day <= last:
        queries = searches.get(day.isoformat(), [])
        hits = 0
        for n, query in enumerate(queries):
            at = dt.datetime(day.year, day.month, day.day, SEARCH_HOURS[n % len(SEARCH_HOURS)], tzinfo=tz)
            with clock.pinned(at):
                result = host.ctx.call_tool(
                    "memory_search", query=query, source="tool", mode="valid-at", as_of=at.isoformat()
                )
            if "error" in result:
                raise InputError(f"replay search {query!r} failed: {result['error']}")
            hits += len(result["results"])
        night = day + dt.timedelta(days=1)
        with clock.pinned(dt.datetime(night.year, night.month, night.day, 3, tzinfo=tz)):
            run = run_dream(host)
        entry = {
            "day": day.isoformat(),
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


def replay_template(host: Any, *, echo: Callable[[str], None] | None, as_json: bool = False) -> list[dict]:
    ws = host.workspace
    missing = [d for d in ("2026-03-02", "2026-03-23") if not (ws.memory_dir / f"{d}.md").exists()]
    if missing:
        raise InputError(
            "replay-demo needs the template workspace (memory/2026-03-02.md … 2026-03-23.md); "
            "create one with `lifelong init DIR`"
        )
    if host.store.conn.execute("SELECT count(*) FROM dream_runs").fetchone()[0]:
        raise InputError(
            "this workspace already has dream runs; replay-demo needs a fresh `lifelong init` workspace"
        )
    memory = ws.memory_file
    before = memory.stat().st_size if memory.exists() else 0

    def show(entry: dict[str, Any]) -> None:
        if echo is None:
            return
        n = len(entry["searches"])
        line = f"{entry['day']}: {n} search{'es' if n != 1 else ''}; night: "
        if entry["promoted"]:
            line += f"{len(entry['promoted'])} promoted into MEMORY.md"
        else:
            line += f"nothing promoted ({entry['candidates']} candidates)"
        echo(line)
        for p in entry["promoted"]:
            echo(f"    + {p['text']}  [Source: {p['source']}]")

    nights = replay(host, DEMO_SEARCHES, FIRST_DAY, LAST_DAY, on_night=show)
    after = memory.stat().st_size if memory.exists() else 0
    total = sum(len(n["promoted"]) for n in nights)
    if as_json:
        emit_json(
            {
                "version": 1,
                "nights": nights,
                "promoted": total,
                "memory_bytes_before": before,
                "memory_bytes_after": after,
            }
        )
    elif echo is not None:
        echo(f"\nMEMORY.md grew from {before} to {after} bytes with {total} cited item(s):\n")
        echo(memory.read_text("utf-8").rstrip())
    return nights
