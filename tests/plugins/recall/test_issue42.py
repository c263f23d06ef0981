"""Issue 42: a note dated after today (a plan) is found and marked upcoming on the real clock and
hidden only under a pinned clock (``--now``); the same line on several days is one result that
lists the other days."""

from __future__ import annotations

import datetime as dt
import json

from click.testing import CliRunner
from freezegun import freeze_time
from lifelong_plugins.recall.scoring import decay_factor, mmr

from lifelong import clock
from lifelong.cli import cli
from lifelong.contracts import Candidate

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


# item 2: the same line on several days --------------------------------------------------------
def test_the_same_line_on_four_days_is_one_result_listing_the_other_dates(make_host) -> None:
    host = make_host(REPEATED, FTS_ONLY, **RECALL)
    with freeze_time("2026-07-10 09:00:00"):
        results = search(host, "QMD router retries", min_score=0)
    holding = [r for r in results if "ERR_LOCK_77" in r["snippet"]]
    assert len(holding) == 1, results
    top = holding[0]
    assert len(top["also_dates"]) == 3
    assert sorted([top["source_date"], *top["also_dates"]]) == list(DAYS)
    assert top["also_dates"] == sorted(top["also_dates"])
    assert all("also_dates" not in r for r in results if r is not top)


def test_the_cli_lists_the_other_dates_of_a_repeated_line(make_workspace) -> None:
    ws = make_workspace(REPEATED, FTS_ONLY)
    with freeze_time("2026-07-10 09:00:00"):
        text = run_cli(ws.root, "search", "QMD router retries")
    assert text.count("ERR_LOCK_77") == 1, text
    also = [line.strip() for line in text.splitlines() if line.strip().startswith("also:")]
    assert len(also) == 1, text
    shown = set(also[0].removeprefix("also:").replace(" ", "").split(","))
    assert len(shown) == 3 and shown <= {d for d in DAYS} | {d[5:] for d in DAYS}


def cand(i: int, text: str, day: str | None, score: float) -> Candidate:
    stamp = None if day is None else dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()
    path = f"memory/{day}.md" if day else "MEMORY.md"
    return Candidate(i, path, 3, 3, text, source_date=stamp, evergreen=day is None, score=score)


def test_mmr_keeps_the_dates_of_the_duplicates_it_drops() -> None:
    line = "Worked on safe-cron-merge.sh: the QMD router retries on ERR_LOCK_77."
    pool = [
        cand(1, line, "2026-07-03", 0.9),
        cand(2, "Fixed the garden gate and oiled its hinges.", "2026-07-04", 0.8),
        cand(3, line, "2026-07-01", 0.7),
        cand(4, line, None, 0.65),  # MEMORY.md: undated, nothing to list
        cand(5, line, "2026-07-03", 0.6),  # an overlapping chunk of the same day: listed once, not at all
        cand(6, line + " Again.", "2026-07-06", 0.5),
    ]
    picked = mmr(pool, lam=0.7, limit=6, drop_above=0.85)
    assert [c.chunk_id for c in picked] == [1, 2]
    day = dt.datetime(2026, 7, 1, tzinfo=dt.UTC).timestamp()
    assert picked[0].also_dates == (day, day + 5 * 86400.0)
    assert picked[1].also_dates == ()
