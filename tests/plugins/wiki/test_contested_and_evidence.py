"""Issue 41 in the wiki: a claim in dispute is ``contested`` (not stated as current) and still
linted; a cited line counts as evidence only once it is read and found to state the claim, also in
notes written a thought per line without list markers."""

from __future__ import annotations

import json
from pathlib import Path

from lifelong_plugins.gate.extractive import extractive_note

from lifelong import facts
from tests.plugins.wiki.test_wiki import cli_run, compile_json, make_ws

CONTESTED = """# MEMORY

<!-- lifelong:topic-people:start -->
## People
- Dana Reyes runs the Lisbon office (contested by "Dana Reyes is in Porto most weeks now", 2026-03-22) <!-- key:aaaaaaaaaaaa src:memory/2026-03-20.md#L3 on:2026-03-21 -->
- Dana Reyes likes the Alfama tram. <!-- key:cccccccccccc src:memory/2026-03-20.md#L4 on:2026-03-21 -->
<!-- lifelong:topic-people:end -->
"""


def _claims(root: Path) -> dict[str, dict]:
    out = {}
    for page in (root / "wiki").rglob("*.md"):
        text = page.read_text("utf-8")
        if text.startswith("---"):
            import yaml

            front = yaml.safe_load(text.split("---", 2)[1]) or {}
            for c in front.get("claims") or []:
                out[c["text"]] = c
    return out


def test_an_item_the_nightly_job_marked_contested_is_a_contested_claim(tmp_path: Path) -> None:
    days = {
        "2026-03-20": "- Dana Reyes runs the Lisbon office\n- Dana Reyes likes the Alfama tram.\n",
        "2026-03-22": "- Dana Reyes is in Porto most weeks now\n",
    }
    root = make_ws(tmp_path, days, memory=CONTESTED)
    compile_json(root)
    claims = _claims(root)
    assert claims["Dana Reyes runs the Lisbon office"]["status"] == "contested"
    assert claims["Dana Reyes likes the Alfama tram."]["status"] == "active"
    found = json.loads(cli_run(root, "wiki", "search", "Dana Reyes Lisbon office", "--json"))["results"]
    (hit,) = [h for h in found if "Lisbon" in h["text"]]
    assert (hit["status"], hit["active"]) == ("contested", False)
    page = (root / "wiki/entities/dana-reyes.md").read_text("utf-8")
    assert "Dana Reyes runs the Lisbon office — contested, confidence" in page


def test_two_one_source_claims_that_disagree_are_both_contested_and_linted(tmp_path: Path) -> None:
    days = {
        "2026-03-10": "- The Acme Robotics seed round is $2M.\n",
        "2026-03-16": "- The Acme Robotics seed round is $1.5M.\n",
    }
    root = make_ws(tmp_path, days)
    out = compile_json(root)
    claims = _claims(root)
    rounds = {t: c["status"] for t, c in claims.items() if "seed round" in t}
    assert set(rounds.values()) == {"contested"} and len(rounds) == 2
    assert out["lint"]["counts"]["claim-conflict"] >= 1
    report = (root / "wiki/reports/contradictions.md").read_text("utf-8")
    assert "contested" in report and "$2M" in report and "$1.5M" in report


PHONE_MEMORY = """# MEMORY

<!-- lifelong:topic-home:start -->
## Home and money
- swim moved to thurs 4.30 w coach Ines <!-- key:dddddddddddd src:memory/2026-03-20.md#L3,memory/2026-03-20.md#L4 on:2026-03-21 -->
<!-- lifelong:topic-home:end -->
"""


def test_a_cited_note_line_without_a_list_marker_is_checked_before_it_counts(tmp_path: Path) -> None:
    """Phone notes carry no list markers. Read as bullets only, the cited lines were 'not found'
    and counted at full weight unchecked (and lint called them drift); now the line that states
    the item counts and the one that does not never does."""
    days = {"2026-03-20": "swim moved to thurs 4.30 w coach Ines\nbought milk and bread at Lidl\n"}
    root = make_ws(tmp_path, days, memory=PHONE_MEMORY)
    out = compile_json(root)
    (claim,) = [c for t, c in _claims(root).items() if t.startswith("swim moved")]
    daily = {e["lines"]: e for e in claim["evidence"] if e["path"] == "memory/2026-03-20.md"}
    assert daily["L3-L3"]["weight"] > 0 and daily["L3-L3"]["sha256"]
    assert daily.get("L4-L4", {"weight": 0})["weight"] == 0  # the milk line never counts
    assert out["lint"]["counts"]["drift"] == 0


def test_a_line_states_itself_even_when_it_announces_a_change() -> None:
    line = "Dmitri says he's getting a new phone, so for today it's still the old number 0784 321 6509"
    assert facts.states(line, line)
    assert facts.states("swim moved to thurs 4.30", "Sat 14/03: swim moved to thurs 4.30")
    assert not facts.states("the gym costs 4", "the gym costs 45")


def test_the_gate_reads_a_wiki_claim_by_its_status() -> None:
    def hit(text: str, status: str, day: str) -> dict:
        return {
            "path": "wiki/entities/dana-reyes.md",
            "start_line": 5,
            "text": text,
            "corpus": "wiki",
            "score": 0.5,
            "extra": {"status": status},
            "source_date": day,
        }

    note = extractive_note(
        [hit("Dana Reyes runs the Lisbon office", "contested", "2026-03-20")], "Dana Reyes office"
    )
    assert note is not None and note.text.startswith("(contested) Dana Reyes runs the Lisbon office")
    note = extractive_note(
        [hit("Dana Reyes runs the Lisbon office", "superseded", "2026-03-20")], "Dana Reyes office"
    )
    assert note is not None and note.text.startswith("(superseded) ")
