"""The concept index through the real host and recall index: short-circuit and fall-through,
aliases, incremental update after a new daily, the nightly rebuild, --explain."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner
from lifelong_plugins.concepts.index import ConceptIndex

from lifelong import clock
from lifelong.cli import cli
from lifelong.contracts import SearchRequest

TZ = clock.zone("Europe/Berlin")
NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=TZ)
FILES = {
    "memory/2026-03-02.md": "# 2026-03-02\n\n- Moved the backups to S3 Glacier; the QMD router syncs nightly.\n- Lunch was fine.\n",
    "memory/2026-03-09.md": "# 2026-03-09\n\n- Glacier restore test took 4 hours; QMD router logs look clean.\n- Weather grim.\n",
    "memory/2026-03-12.md": "# 2026-03-12\n\n- Offsite planning: Gut Boltenhagen has rooms for 12.\n",
    "memory/2026-03-16.md": "# 2026-03-16\n\n- Gut Boltenhagen confirmed the booking for April 14-16.\n",
    "memory/2026-03-20.md": "# 2026-03-20\n\n- Pitched Northwind Ventures; the demo went well.\n",
}


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


def search(host, query: str, **kw) -> dict:  # noqa: ANN001
    with clock.pinned(NOW):
        return host.call_tool("memory_search", {"query": query, **kw})


def test_a_query_naming_a_known_concept_is_answered_from_the_index(host) -> None:
    out = search(host, "glacier")
    paths = [r["path"] for r in out["results"]]
    assert paths[:2] == ["memory/2026-03-09.md", "memory/2026-03-02.md"]  # newer first after decay
    with clock.pinned(NOW):
        lookup = ConceptIndex(host.ctx, host.plugin_config("concepts")).lookup(SearchRequest("glacier"))
    assert lookup.answered and lookup.concepts == ["Glacier"] and lookup.confidence >= 0.4


def test_a_query_the_concepts_do_not_carry_falls_through(host) -> None:
    with clock.pinned(NOW):
        index = ConceptIndex(host.ctx, host.plugin_config("concepts"))
        weak = index.lookup(SearchRequest("what did the glacier restore test show about archive speed"))
        unknown = index.lookup(SearchRequest("espresso machine"))
    assert not weak.answered and "of the query's words" in weak.reason
    assert not unknown.answered and unknown.reason == "no known concept in the query"
    assert search(host, "glacier restore test archive speed")["results"]  # the hybrid search ran


def test_validity_and_corpus_filters_apply(host) -> None:
    with host.store.lock:
        host.store.execute(
            "UPDATE chunks SET validity_end = ? WHERE path = 'memory/2026-03-02.md'",
            (NOW.timestamp() - 3600,),
        )
        host.store.conn.commit()
    assert "memory/2026-03-02.md" not in [r["path"] for r in search(host, "glacier")["results"]]
    assert "memory/2026-03-02.md" in [r["path"] for r in search(host, "glacier", mode="all")["results"]]


def test_a_new_daily_updates_the_index_incrementally(host) -> None:
    (host.workspace.root / "memory" / "2026-03-22.md").write_text(
        "# 2026-03-22\n\n- Renewed the Glacier vault policy.\n"
    )
    (host.workspace.root / "memory" / "2026-03-23.md").write_text(
        "# 2026-03-23\n\n- The Zephyr build broke; Zephyr needs a new token.\n"
    )
    (host.workspace.root / "memory" / "2026-03-24.md").write_text("# 2026-03-24\n\n- Zephyr build fixed.\n")
    with clock.pinned(NOW):
        host.call_tool("memory_index", {})
    rows = {r["key"]: r for r in host.store.query("SELECT key, days, doc_freq FROM concepts")}
    assert rows["glacier"]["days"] == 3 and rows["glacier"]["doc_freq"] == 3
    assert rows["zephyr"]["days"] == 2
    assert {r["path"] for r in search(host, "zephyr")["results"]} == {
        "memory/2026-03-23.md",
        "memory/2026-03-24.md",
    }
    (host.workspace.root / "memory" / "2026-03-24.md").unlink()
    with clock.pinned(NOW):
        host.call_tool("memory_index", {})
    assert (
        host.store.query("SELECT count(*) n FROM concepts WHERE key = 'zephyr'")[0]["n"] == 0
    )  # one day left


def test_wiki_titles_and_aliases_are_concepts(host) -> None:
    page = host.workspace.root / "wiki" / "entities" / "tidewater.md"
    page.parent.mkdir(parents=True)
    page.write_text(
        "---\nid: entity.tidewater\ntitle: Tidewater Labs\naliases: [TWL, Tidewater]\n---\n# Tidewater Labs\n\nThe company.\n"
    )
    with clock.pinned(NOW):
        host.call_tool("memory_index", {})
        ConceptIndex(host.ctx, host.plugin_config("concepts")).rebuild()
        lookup = ConceptIndex(host.ctx, host.plugin_config("concepts")).lookup(SearchRequest("TWL"))
    assert lookup.concepts == ["Tidewater Labs"]


def test_explain_and_list_commands(host) -> None:
    root = str(host.workspace.root)
    runner = CliRunner()
    out = runner.invoke(cli, ["-w", root, "--now", NOW.isoformat(), "search", "glacier", "--explain"]).output
    assert "answered by concepts (concepts: Glacier; confidence" in out and "hybrid search skipped" in out
    out = runner.invoke(
        cli,
        [
            "-w",
            root,
            "--now",
            NOW.isoformat(),
            "search",
            "what happened at the offsite planning",
            "--explain",
        ],
    ).output
    assert "answered by hybrid search" in out
    data = json.loads(runner.invoke(cli, ["-w", root, "concepts", "explain", "QMD router", "--json"]).output)
    assert data["answered"] and data["concepts"] == ["QMD", "router"]
    listed = json.loads(runner.invoke(cli, ["-w", root, "concepts", "list", "--json"]).output)
    assert {"glacier", "qmd", "router", "gut boltenhagen"} <= {c["key"] for c in listed["concepts"]}


def test_no_effect_when_disabled(make_host) -> None:
    host = make_host(
        FILES,
        {"embedding": {"provider": "none"}, "plugins": {"concepts": {"enabled": False}}},
        builtins=("embeddings", "concepts", "recall"),
        entry_points=False,
    )
    with clock.pinned(NOW):
        host.call_tool("memory_index", {})
        out = host.call_tool("memory_search", {"query": "glacier"})
    assert out["results"] and host.implementers("retrieval_pre") == []


RESCORER = """
from lifelong.contracts import Candidate

@hookimpl
def retrieval_post(ctx, request, candidates):
    for c in candidates:
        c.extra = {**c.extra, "seen_by": "rescorer"}
    return [c for c in candidates if "2026-03-02" not in c.path]

@hookimpl
def corpus_supplement(ctx, request):
    return [Candidate(chunk_id=-1, path="notes/ext.md", start_line=1, end_line=1,
                      text="Glacier vault policy", corpus="ext", score=0.99)]
"""


def test_an_answer_of_the_index_goes_through_the_rescoring_and_supplement_hooks(
    make_host, write_plugin
) -> None:
    """The concept index answering does not bypass retrieval_post (the supersede gate hides
    closed facts there) or corpus_supplement (corpus all merges the wiki)."""
    rescorer = write_plugin("rescorer", RESCORER, ["retrieval_post", "corpus_supplement"])
    h = make_host(
        FILES,
        {"embedding": {"provider": "none"}},
        builtins=("embeddings", "concepts", "recall"),
        extra_plugins=[rescorer],
        entry_points=False,
    )
    with clock.pinned(NOW):
        h.call_tool("memory_index", {})
    memory = search(h, "glacier")
    both = search(h, "glacier", corpus="all")
    assert memory["results"] and all(r["extra"]["answered_by"] == "concepts" for r in memory["results"])
    assert all(r["extra"]["seen_by"] == "rescorer" for r in memory["results"])
    assert [r["path"] for r in memory["results"]] == ["memory/2026-03-09.md"]  # the hook's filter held
    assert "notes/ext.md" in [r["path"] for r in both["results"]]


PERSON_FILES = {
    f"memory/2026-03-{day:02d}.md": f"# 2026-03-{day:02d}\n\n- Priya and I {line}\n"
    for day, line in [
        (2, "moved the backups to S3 Glacier."),
        (4, "checked the Glacier restore times."),
        (6, "planned the offsite dinner."),
        (9, "reviewed the quarterly budget."),
        (11, "fixed the printer driver."),
        (13, "tested the staging certificate."),
        (16, "drafted the hiring plan."),
        (18, "cleaned up the shared drive."),
    ]
}


def test_a_concept_in_every_note_is_too_common_to_answer_alone(make_host) -> None:
    """A person named in every daily says nothing about which note is meant: a query naming only
    her falls through to the hybrid search, one naming her and a distinctive concept is not
    carried by the index either (the concepts cover half its words), and a distinctive concept
    alone still short-circuits."""
    host = make_host(
        PERSON_FILES,
        {"embedding": {"provider": "none"}},
        builtins=("embeddings", "concepts", "recall"),
        entry_points=False,
    )
    with clock.pinned(NOW):
        host.call_tool("memory_index", {})
        index = ConceptIndex(host.ctx, host.plugin_config("concepts"))
        person = index.lookup(SearchRequest("Priya"))
        mixed = index.lookup(SearchRequest("Priya glacier"))
        distinctive = index.lookup(SearchRequest("glacier"))
    assert person.concepts == ["Priya"] and person.detail["background"] == ["priya"]
    assert not person.answered and "too common" in person.reason
    assert not mixed.answered and "cover 50%" in mixed.reason
    assert distinctive.answered and distinctive.detail["background"] == []
    assert {c.path for c in distinctive.candidates} == {"memory/2026-03-02.md", "memory/2026-03-04.md"}
    out = search(host, "Priya")
    assert out["results"] and all("answered_by" not in (r.get("extra") or {}) for r in out["results"])
    assert search(host, "glacier")["results"][0]["extra"]["answered_by"] == "concepts"
    root = str(host.workspace.root)
    out = (
        CliRunner().invoke(cli, ["-w", root, "--now", NOW.isoformat(), "concepts", "explain", "Priya"]).output
    )
    assert "falls through" in out and "too common to count (background): priya" in out


def test_an_answer_whose_lines_miss_the_query_words_falls_through(host) -> None:
    """The index's best lines must hold the query's words (stemmed): with a bar above what they
    hold, the same query falls through."""
    cfg = {**host.plugin_config("concepts"), "min_coverage": 0.0, "confidence_threshold": 0.0}
    with clock.pinned(NOW):
        loose = ConceptIndex(host.ctx, {**cfg, "min_answer_coverage": 0.0}).lookup(
            SearchRequest("glacier archive")
        )
        strict = ConceptIndex(host.ctx, {**cfg, "min_answer_coverage": 1.0}).lookup(
            SearchRequest("glacier archive")
        )
    assert loose.answered and loose.detail["answer_coverage"] == 0.5
    assert not strict.answered and "hold 50%" in strict.reason
