"""The hand-written months of evals/written_month.py: the judge, and that each month is what its
header says (every fact stated on three days, searched on later days; chit-chat words only in
lines that state no fact)."""

from __future__ import annotations

import re

import pytest
import yaml

from evals.written_month import MONTHS, judge, stale_kept

MONTH = {
    "facts": {"rent": {"match": "1,?250"}, "wifi": {"match": "pelican"}},
    "chitchat": ["ramen"],
}


def test_the_judge_counts_facts_duplicates_merges_and_leaks() -> None:
    items = [
        {"text": "Rent for the flat: 1,250 € a month."},
        {"text": "Housing costs: €1250 monthly."},  # the same fact again
        {"text": "Rent 1,250; wifi HX7-pelican-22"},  # two facts in one item
        {"text": "Tried the new ramen place."},  # chit-chat
    ]
    f = judge(MONTH, items)
    assert (f["facts_promoted"], f["recall"], f["promoted"]) == (1, 0.5, 4)
    assert (f["duplicates"], f["merged"], f["leaked"]) == (1, 1, 1)
    assert f["precision"] == 0.5 and f["missed"] == ["wifi"]
    assert judge(MONTH, [])["precision"] is None


def test_an_earlier_value_counts_for_precision_and_is_reported_while_it_stands() -> None:
    month = {"facts": {"accountant": {"match": r"\breis\b", "stale": "mendes"}}, "chitchat": []}
    f = judge(month, [{"text": "Sofia Mendes does our books."}, {"text": "Paulo Reis does the books now."}])
    assert (f["precision"], f["recall"], f["earlier_values"]) == (1.0, 1.0, 1)
    memory = (
        "# MEMORY\n- Sofia Mendes is my accountant (written by hand)\n"
        "<!-- lifelong:topic-people:start -->\n"
        "- Sofia Mendes does our books. <!-- key:abc123 -->\n"
        "- ~~Sofia Mendes files the VAT~~ (superseded by memory/x.md#L3)\n"
        "- Paulo Reis takes over from Sofia Mendes. <!-- key:def456 -->\n"
        "<!-- lifelong:topic-people:end -->\n"
    )
    assert stale_kept(month, memory) == ["- Sofia Mendes does our books."]  # the human's line is theirs


@pytest.mark.parametrize("path", sorted(MONTHS.glob("*.yaml")), ids=lambda p: p.name)
def test_each_fact_is_stated_on_three_days_and_searched_later(path) -> None:
    month = yaml.safe_load(path.read_text("utf-8"))
    days = month["days"]
    for fid, fact in month["facts"].items():
        rx = re.compile(fact["match"], re.IGNORECASE)
        stated = sorted(
            d for d, spec in days.items() if any(rx.search(ln) for ln in spec["text"].splitlines())
        )
        assert len(stated) >= 3, (fid, stated)
        searched_after = [d for d in days if d > stated[0] and days[d].get("searches")]
        assert len(searched_after) >= 4, fid
    for spec in days.values():
        for line in spec["text"].splitlines():
            chit = [w for w in month["chitchat"] if w in line.lower()]
            facts = [f for f, v in month["facts"].items() if re.search(v["match"], line, re.IGNORECASE)]
            assert not (chit and facts), line


def test_gate_leads_scores_the_search_first_result_beside_the_gate(tmp_path) -> None:
    """The baseline a user would try first, in the same run: the search's first result as the
    note. Both are judged by the same test (the current value stated before the earlier one)."""
    from click.testing import CliRunner

    from evals.written_month import _lifelong, gate_leads

    root = tmp_path / "ws"
    runner = CliRunner()
    _lifelong(runner, root, "init", str(root))
    (root / "memory" / "2026-03-02.md").write_text("# 2026-03-02\n\n- Swim class is on Tuesdays at 16:30.\n")
    (root / "memory" / "2026-03-20.md").write_text(
        "# 2026-03-20\n\n- Swim class moved to Thursdays at 15:45.\n"
    )
    month = {
        "facts": {
            "swim": {"match": "thursday", "stale": "tuesday", "ask": "which day is the swim class now"},
            "quiet": {"match": "nothing"},
        }
    }
    out = gate_leads(runner, root, month, "2026-03-25T12:00")
    assert set(out) == {"swim"}
    assert out["swim"]["first_result_leads"] is True and out["swim"]["leads"] is True
    assert "Thursdays" in out["swim"]["note"]


def test_why_missed_tells_a_fact_looked_up_too_rarely_from_one_no_line_states(tmp_path) -> None:
    """``--why``: a fact not promoted is either stated by candidates whose credited searches,
    pooled, pass the deep phase's count gates (its wordings were not read as one fact), or is not
    looked up often enough, or no line states it. A month through the real CLI."""
    import datetime as dt

    from evals.written_month import report, run_month

    month = {
        "start": dt.date(2026, 3, 2),
        "memory": "# MEMORY\n",
        "facts": {
            "locker": {"match": "locker 41"},
            "ghost": {"match": "never written"},
        },
        "days": {
            0: {"text": "# 2026-03-02\n\n- Gym locker 41, code 7731.\n- Rain all day.\n"},
            1: {
                "text": "# 2026-03-03\n\n- Long meeting about the roadmap.\n",
                "searches": [["20:00", "which locker is mine at the gym"]],
            },
        },
    }
    path = tmp_path / "month.yaml"
    path.write_text(yaml.safe_dump(month), "utf-8")
    f = run_month(path, tmp_path / "ws", why=True)
    why = f["why_missed"]
    assert set(why["facts"]) == set(f["missed"]) == {"locker", "ghost"}
    assert why["facts"]["ghost"]["verdict"] == "no candidate" and not why["facts"]["ghost"]["candidates"]
    locker = why["facts"]["locker"]
    assert locker["verdict"] == "too few" and locker["pooled"]["recalls"] <= 1
    assert any("locker 41" in c["text"] for c in locker["candidates"])
    assert (why["no_candidate"], why["too_few"], why["pooled"], why["joined"]) == (1, 1, 0, 0)
    # each search is timed, and the report prints their p50 and p95
    assert f["searches"] == len(f["search_ms"]) == 1 and f["search_ms"][0] > 0
    assert "1 searches (p50 " in report(f)
