"""Issue 42: a note dated after today (a plan) is found and marked upcoming on the real clock and
hidden only under a pinned clock (``--now``)."""

from __future__ import annotations

import datetime as dt
import json

from click.testing import CliRunner
from freezegun import freeze_time
from lifelong_plugins.recall.scoring import decay_factor

from lifelong import clock
from lifelong.cli import cli

TZ = clock.zone("Europe/Berlin")
TODAY = "2026-11-27 09:00:00"  # UTC, for freezegun: the real clock, frozen
PINNED = dt.datetime(2026, 11, 27, 10, 0, tzinfo=TZ)  # the same instant, pinned as --now would
PLANS = {
    "memory/2026-11-20.md": "# 2026-11-20\n\n- Bought winter tyres for the car.\n"
    "- Called the plumber about the kitchen sink.\n",
    "memory/2026-11-25.md": "# 2026-11-25\n\n- Team lunch at the Thai place near the office.\n",
    "memory/2026-12-24.md": "# 2026-12-24\n\n- Christmas plan: dinner at Anika's.\n",
}
LINE = "- Worked on safe-cron-merge.sh: the QMD router retries on ERR_LOCK_77."
DAYS = ("2026-07-01", "2026-07-02", "2026-07-03", "2026-07-06")
REPEATED = {
    **{f"memory/{d}.md": f"# {d}\n\n{LINE}\n- Groceries and laundry, day {n}.\n" for n, d in enumerate(DAYS)},
    "memory/2026-07-04.md": "# 2026-07-04\n\n- Fixed the garden gate.\n",
}
FTS_ONLY = {"embedding": {"provider": "none"}}
RECALL = {"builtins": ("embeddings", "recall"), "entry_points": False}


def search(host, query: str, **kw) -> list[dict]:  # noqa: ANN001
    out = host.call_tool("memory_search", {"query": query, **kw})
    assert "error" not in out, out
    return out["results"]


def run_cli(root, *args: str) -> str:  # noqa: ANN001
    out = CliRunner().invoke(cli, ["--workspace", str(root), *args], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out.output


# item 1: dated plans ------------------------------------------------------------------------
def test_a_plan_dated_after_today_is_found_on_the_real_clock_and_marked_upcoming(make_host) -> None:
    host = make_host(PLANS, FTS_ONLY, **RECALL)
    with freeze_time(TODAY):
        assert not clock.is_pinned()
        results = search(host, "Christmas plan")
    assert results[0]["path"] == "memory/2026-12-24.md"
    assert results[0]["upcoming"] is True and results[0]["source_date"] == "2026-12-24"
    assert all("upcoming" not in r for r in results[1:])  # the past notes are not marked


def test_a_plan_dated_after_a_pinned_now_stays_hidden(make_host) -> None:
    host = make_host(PLANS, FTS_ONLY, **RECALL)
    with clock.pinned(PINNED):
        assert clock.is_pinned()
        results = search(host, "Christmas plan", min_score=0)
    assert "memory/2026-12-24.md" not in {r["path"] for r in results}
    with clock.pinned(dt.datetime(2026, 12, 24, 18, 0, tzinfo=TZ)):  # on the day: written, not upcoming
        results = search(host, "Christmas plan")
    assert results[0]["path"] == "memory/2026-12-24.md" and "upcoming" not in results[0]
    assert not clock.is_pinned()


def test_the_cli_shows_an_upcoming_plan_and_hides_it_under_now(make_workspace) -> None:
    ws = make_workspace(PLANS, FTS_ONLY)
    with freeze_time(TODAY):
        text = run_cli(ws.root, "search", "Christmas plan")
        data = json.loads(run_cli(ws.root, "search", "Christmas plan", "--json", "--explain"))
        pinned = json.loads(
            run_cli(ws.root, "search", "Christmas plan", "--json", "--now", "2026-11-27T10:00")
        )
    first = text.splitlines()[0]
    assert "memory/2026-12-24.md" in first and "upcoming" in first, text
    top = data["results"][0]
    assert top["upcoming"] is True
    assert top["explain"]["decay"] == 1.0  # as fresh as today's note: no bonus beyond it
    assert "memory/2026-12-24.md" not in {r["path"] for r in pinned["results"]}


def test_a_future_date_gets_no_decay_bonus_and_no_error() -> None:
    assert decay_factor(-30.0, 30.0) == 1.0 == decay_factor(0.0, 30.0)
    assert decay_factor(-3650.0, 30.0, 0.5) == 1.0
