"""What a new user sees in the wiki: no pages for month or weekday names, no stale-page finding on
a compiled page whose evidence carries no date, and a claim's state said one way everywhere."""

from __future__ import annotations

import json
from pathlib import Path

from lifelong_plugins.wiki.extract import find_entities

from lifelong import clock
from lifelong.host import Host
from lifelong.workspace import Workspace
from tests.plugins.wiki.test_wiki import NOW, cli_run, compile_json, make_ws


def test_month_and_weekday_names_in_any_form_are_not_entities() -> None:
    lines = [
        "Standup moved to Fridays with Dana Reyes.",
        "On Fridays Dana Reyes demos the build.",
        "Deadline is Oct 3; Dana Reyes agreed.",
        "The Oct release and the Sept one slip, says Dana Reyes.",
        "Mon and Tues are for reviews with Dana Reyes.",
        "Tues standup: Dana Reyes again.",
    ]
    names = {s.title for s in find_entities(lines, 2)}
    assert "Dana Reyes" in names
    assert not names & {"Fridays", "Oct", "Sept", "Mon", "Tues"}


MEMORY = """# MEMORY

## About me
- I'm Maya Okafor, founder of Tidewater Labs.
- Maya Okafor prefers metric units and short answers.
"""


def test_a_compiled_page_whose_evidence_carries_no_date_is_not_a_stale_page(tmp_path: Path) -> None:
    root = make_ws(tmp_path, {"2026-03-20": "- Lunch was fine.\n"}, memory=MEMORY)
    out = compile_json(root)
    page = root / "wiki/entities/maya-okafor.md"
    assert page.exists() and "updated_at: null" in page.read_text()
    assert out["lint"]["counts"]["stale-page"] == 0
    assert "maya-okafor" not in (root / "wiki/reports/stale-pages.md").read_text()


DANA = {"2026-03-20": "- Dana Reyes runs the Lisbon office.\n", "2026-03-21": "- Lunch with Dana Reyes.\n"}


def test_a_claim_below_the_threshold_is_unconfirmed_and_not_active_in_every_result(tmp_path: Path) -> None:
    root = make_ws(tmp_path, DANA)
    compile_json(root)
    (hit,) = [
        h
        for h in json.loads(cli_run(root, "wiki", "search", "Lisbon office", "--json"))["results"]
        if "Lisbon" in h["text"]
    ]
    assert (hit["status"], hit["active"]) == ("unconfirmed", False)
    claim = json.loads(cli_run(root, "wiki", "get", hit["claim_id"], "--json"))["claim"]
    assert (claim["status"], claim["active"]) == ("unconfirmed", False)
    from lifelong_plugins.wiki.tools import supplement

    from lifelong.contracts import SearchRequest

    host = Host(Workspace(root))
    try:
        with clock.pinned(clock.parse_instant(NOW, host.workspace.timezone)):
            (cand,) = [c for c in supplement(host.ctx, SearchRequest("Lisbon office")) if "Lisbon" in c.text]
    finally:
        host.close()
    assert (cand.extra["status"], cand.extra["active"]) == ("unconfirmed", False)


STRUCK = """# MEMORY

<!-- lifelong:topic-people:start -->
## People
- ~~Dana Reyes runs the Lisbon office~~ (superseded by "Dana Reyes now runs the Porto office", 2026-03-22) <!-- key:aaaaaaaaaaaa src:memory/2026-03-20.md#L1 on:2026-03-21 -->
- Dana Reyes now runs the Porto office <!-- key:bbbbbbbbbbbb src:memory/2026-03-22.md#L1 on:2026-03-23 -->
<!-- lifelong:topic-people:end -->
"""


def test_a_struck_memory_item_is_a_superseded_claim_not_an_active_one(tmp_path: Path) -> None:
    """The nightly job struck the item (a later note replaced it): its wiki claim is superseded,
    so the wiki does not state it as current nor lint it against the new value."""
    days = {
        "2026-03-20": "- Dana Reyes runs the Lisbon office\n",
        "2026-03-22": "- Dana Reyes now runs the Porto office\n",
    }
    root = make_ws(tmp_path, days, memory=STRUCK)
    compile_json(root)
    found = json.loads(cli_run(root, "wiki", "search", "Dana Reyes office", "--json"))["results"]
    states = {("Lisbon" in h["text"], h["status"]) for h in found if "office" in h["text"]}
    assert (True, "superseded") in states and (True, "active") not in states
    assert any(not lisbon and status != "superseded" for lisbon, status in states)
