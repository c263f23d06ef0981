"""`lifelong why` on an incomplete chain says what is missing, not "see above"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.plugins.wiki.test_wiki import cli_run, compile_json, make_ws

BUDGET = {
    "2026-03-06": "## Offsite\n- Budget for the offsite is EUR 6,400 including travel.\n",
    "2026-03-16": "## Offsite\n- Offsite budget stays at EUR 6,400 including travel.\n",
}


def test_a_claim_compiled_from_the_notes_says_no_dream_promoted_it(tmp_path: Path) -> None:
    root = make_ws(tmp_path, BUDGET)
    compile_json(root)
    hits = json.loads(cli_run(root, "wiki", "search", "offsite budget", "--json"))["results"]
    claim_id = hits[0]["claim_id"]
    data = json.loads(cli_run(root, "why", claim_id, "--json"))
    assert data["complete"] is False
    assert any("MEMORY.md item" in m for m in data["missing"])
    last = cli_run(root, "why", claim_id).rstrip().splitlines()[-1]
    assert last.startswith("chain incomplete: ") and "see above" not in last
    assert "MEMORY.md item" in last


def test_a_hand_written_memory_line_says_it_has_no_key_and_no_cited_daily(tmp_path: Path) -> None:
    root = make_ws(tmp_path, BUDGET, memory="# MEMORY\n\n- I prefer metric units.\n")
    data = json.loads(cli_run(root, "why", "MEMORY.md#L3", "--json"))
    assert data["complete"] is False
    missing = " ".join(data["missing"])
    assert "daily note" in missing and "key" in missing
    last = cli_run(root, "why", "MEMORY.md#L3").rstrip().splitlines()[-1]
    assert last.startswith("chain incomplete: ") and "key" in last
