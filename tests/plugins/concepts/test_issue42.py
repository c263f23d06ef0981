"""Issue 42: a query that is exactly a known identifier or name (however its case and separators
are typed) is answered by the concept index, and its repeated line is one result."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner
from lifelong_plugins.concepts import extract
from lifelong_plugins.concepts.index import ConceptIndex

from lifelong import clock
from lifelong.cli import cli
from lifelong.contracts import SearchRequest
from lifelong.host import Host

TZ = clock.zone("Europe/Berlin")
NOW = dt.datetime(2026, 7, 10, 9, 0, tzinfo=TZ)
LINE = "- Worked on safe-cron-merge.sh: the QMD router retries on ERR_LOCK_77."
DAYS = ("2026-07-01", "2026-07-02", "2026-07-03", "2026-07-06")
FILES = {
    **{f"memory/{d}.md": f"# {d}\n\n{LINE}\n- Groceries and laundry, day {n}.\n" for n, d in enumerate(DAYS)},
    "memory/2026-07-04.md": "# 2026-07-04\n\n- Fixed the garden gate.\n",
    "memory/2026-07-05.md": "# 2026-07-05\n\n- Long walk by the lake with Anika.\n",
    "memory/2026-07-07.md": "# 2026-07-07\n\n- Dentist at nine; the lock on the shed is broken again.\n",
    "memory/2026-07-08.md": "# 2026-07-08\n\n- Gut Boltenhagen sent the offsite contract.\n",
    "memory/2026-07-09.md": "# 2026-07-09\n\n- Signed the contract with Gut Boltenhagen.\n",
}
SPELLINGS = ("ERR_LOCK_77", "err_lock_77", "ERR LOCK 77", "ERR-LOCK-77", "Err.Lock.77")


@pytest.fixture
def host(make_host):
    h = make_host(
        FILES,
        {"embedding": {"provider": "none"}},
        builtins=("embeddings", "concepts", "recall"),
        entry_points=False,
    )
    with clock.pinned(NOW):
        h.call_tool("memory_index", {})
    return h


def lookup(host, query: str):  # noqa: ANN001
    with clock.pinned(NOW):
        return ConceptIndex(host.ctx, host.plugin_config("concepts")).lookup(SearchRequest(query))


def test_separators_and_case_do_not_change_the_compact_key() -> None:
    assert {extract.compact_key(q) for q in SPELLINGS} == {"errlock77"}
    assert (
        extract.compact_key("Gut Boltenhagen") == extract.compact_key("gut-boltenhagen") == "gutboltenhagen"
    )


@pytest.mark.parametrize("query", SPELLINGS)
def test_a_bare_known_identifier_is_answered_with_high_confidence(host, query: str) -> None:
    found = lookup(host, query)
    assert found.answered, found.reason
    assert found.concepts == ["ERR_LOCK_77"] and found.confidence >= 0.9
    assert found.detail["exact"] == "ERR_LOCK_77"
    assert all("ERR_LOCK_77" in c.text for c in found.candidates)


def test_a_bare_known_name_is_answered_too(host) -> None:
    found = lookup(host, "gut boltenhagen")
    assert found.answered and found.confidence >= 0.9 and found.detail["exact"] == "Gut Boltenhagen"


def test_a_query_that_is_not_exactly_a_known_identifier_keeps_the_usual_rule(host) -> None:
    for query in ("ERR LOCK", "lock", "ERR_LOCK_77 and the shed lock", "garden"):
        assert "exact" not in lookup(host, query).detail, query


def test_the_answer_is_one_result_listing_the_other_days(host) -> None:
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "ERR LOCK 77"})
    results = out["results"]
    assert results and results[0]["extra"]["answered_by"] == "concepts"
    holding = [r for r in results if "ERR_LOCK_77" in r["snippet"]]
    assert len(holding) == 1, results
    assert sorted([holding[0]["source_date"], *holding[0]["also_dates"]]) == list(DAYS)


def test_explain_says_the_index_answers_a_bare_identifier(host) -> None:
    runner = CliRunner()
    args = ["--workspace", str(host.workspace.root), "--now", NOW.isoformat(), "concepts", "explain"]
    out = runner.invoke(cli, [*args, "ERR-LOCK-77"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "confidence 1.00" in out.output and "the concept index answers" in out.output
    assert "ERR_LOCK_77" in out.output
    data = json.loads(runner.invoke(cli, [*args, "err lock 77", "--json"], catch_exceptions=False).output)
    assert data["answered"] and data["confidence"] == 1.0 and data["exact"] == "ERR_LOCK_77"


def test_an_index_built_before_compact_keys_gets_them_on_open(host) -> None:  # noqa: ANN001
    conn = host.store.conn
    conn.execute("DROP INDEX concepts_compact")
    conn.execute("ALTER TABLE concepts DROP COLUMN compact")
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm003_compact_keys'")
    conn.commit()
    host.close()
    reopened = Host(host.workspace, builtins=("embeddings", "concepts", "recall"), entry_points=False)
    try:
        found = lookup(reopened, "err lock 77")
        assert found.answered and found.detail["exact"] == "ERR_LOCK_77"
    finally:
        reopened.close()
