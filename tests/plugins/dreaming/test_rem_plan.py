"""REM's planner (issue 11 item 3): plan_rem is pure (entries and candidates in, a RemPlan out) and
apply_rem is the executor that changes the pool."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from lifelong_plugins.dreaming.candidates import Candidate, CandidatePool
from lifelong_plugins.dreaming.rem import RemConfig, apply_rem, plan_rem
from lifelong_plugins.dreaming.themes import Entry, topic_terms

TZ = ZoneInfo("Europe/Berlin")
TODAY = dt.date(2026, 3, 10)
ROWS = [
    ("a", "2026-03-02", "Pitch deck started for Northwind"),
    ("b", "2026-03-04", "Pitch opens with the sync demo"),
    ("c", "2026-03-09", "Rehearsed the pitch with Jonas"),
    ("old", "2026-03-04", "Ask is EUR 1.2M seed at a EUR 8M pre-money valuation."),
    ("new", "2026-03-10", "Correction: the seed ask is now EUR 1.5M at EUR 8M pre-money."),
    ("mem", "2026-03-03", "Budget for the offsite is EUR 6,400 for the team."),
    ("mem2", "2026-03-10", "Correction: the offsite budget is now EUR 7,000 for the team."),
]


def candidates(**status: str) -> dict[str, Candidate]:
    return {
        k: Candidate(k, t, "", f"memory/{d}.md", 4, 4, d, 0.0, status=status.get(k, "staged"))
        for k, d, t in ROWS
    }


def entries() -> list[Entry]:
    return [Entry(k, dt.date.fromisoformat(d), t, topic_terms(t)) for k, d, t in ROWS]


def test_plan_rem_is_pure_and_apply_rem_changes_the_pool() -> None:
    cands = candidates(mem="promoted")
    before = {k: (c.status, c.rem_hits, c.superseded_by) for k, c in cands.items()}
    plan = plan_rem(entries(), cands, {"a": {"2026-03-05"}}, TODAY, TZ, RemConfig(2, 3, 10))
    assert {k: (c.status, c.rem_hits, c.superseded_by) for k, c in cands.items()} == before  # nothing changed
    assert [t.tag for t in plan.themes][:1] == ["pitch"]
    assert {"a", "b", "c"} <= set(plan.reinforce)
    assert [r.earlier for r in plan.supersede] == ["old"] and plan.supersede[0].later == "new"
    assert [r.earlier for r in plan.outdated] == ["mem"]  # promoted: marked, not superseded
    assert "a" in {t["key"] for t in plan.truths}  # written on one day, recalled on another

    pool = CandidatePool(0.9)
    pool.candidates.update(cands)
    apply_rem(pool, plan, "run-1", 1000.0)
    assert pool.candidates["old"].status == "superseded" and pool.candidates["old"].superseded_by == "new"
    assert pool.candidates["mem"].status == "promoted" and pool.candidates["mem"].superseded_by == "mem2"
    assert all(pool.candidates[k].rem_hits == 1 for k in plan.reinforce)
    # one REM boost per night: planned again the same night, nothing is reinforced twice
    again = plan_rem(
        entries(), pool.candidates, {}, dt.datetime.fromtimestamp(1000.0, TZ).date(), TZ, RemConfig(2, 3, 10)
    )
    assert again.reinforce == ()
