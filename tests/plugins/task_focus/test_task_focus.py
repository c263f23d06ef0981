"""Task-conditioned scoring: marker parsing, TF-IDF inference, the score is added not replaced."""

from __future__ import annotations

import datetime as dt

import pytest
from lifelong_plugins.task_focus.task import explicit_task, task_relevance, tfidf_task

from lifelong import clock
from lifelong.contracts import SearchRequest

TZ = clock.zone("Europe/Berlin")
NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=TZ)
FILES = {
    "memory/2026-03-16.md": "# 2026-03-16\n\n- Changed the retry limit in safe-cron-merge.sh to 5 after the lock bug.\n",
    "memory/2026-03-17.md": "# 2026-03-17\n\n- Changed the pitch deck: market size moved to slide 9.\n",
    "memory/2026-03-18.md": "# 2026-03-18\n\n- Changed the offsite dinner to Friday.\n",
}


def test_the_task_marker_is_parsed_newest_first() -> None:
    session = {
        "messages": [
            {"role": "user", "content": "## Task: Write the blog post"},
            {"role": "user", "content": "## Task: Debug safe-cron-merge.sh\nProject: Infra"},
            {"role": "assistant", "content": "On it."},
        ]
    }
    task = explicit_task(session)
    assert (
        task is not None and task.source == "marker" and task.task_type == "debug" and task.project == "Infra"
    )
    assert {"safe-cron-merge", "safe", "cron", "merge"} <= set(task.keywords)
    assert explicit_task({"task": "Plan the offsite"}).task_type == "plan"
    assert explicit_task({"messages": [{"role": "user", "content": "no marker here"}]}) is None


def test_tfidf_prefers_words_the_corpus_does_not_repeat() -> None:
    messages = [
        {"role": "user", "content": "the cron merge keeps failing, the lock again"},
        {"role": "user", "content": "cron lock cron"},
    ]
    df = {"cron": 2, "lock": 50, "merge": 3, "failing": 40}
    task = tfidf_task(messages, lambda terms: {t: df.get(t, 0) for t in terms}, 100)
    assert task is not None and task.source == "tfidf" and task.keywords[0] == "cron"
    assert task.keywords.index("merge") < task.keywords.index("lock")


def test_relevance_is_the_weighted_share_of_keywords_held() -> None:
    task = explicit_task({"task": "Debug safe-cron-merge.sh"})
    assert task_relevance(
        task, "Changed the retry limit in safe-cron-merge.sh", lambda k: 1.0
    ) == pytest.approx(1.0 - 1 / 5)
    assert task_relevance(task, "Changed the pitch deck", lambda k: 1.0) == 0.0


@pytest.fixture
def host(make_host):
    h = make_host(
        FILES,
        {"embedding": {"provider": "none"}},
        builtins=("embeddings", "recall", "task_focus"),
        entry_points=False,
    )
    with clock.pinned(NOW):
        h.call_tool("memory_index", {})
    return h


def test_task_focus_reranks_an_ambiguous_query_and_adds_to_the_score(host) -> None:
    with clock.pinned(NOW):
        plain = host.call_tool("memory_search", {"query": "what changed last week?", "min_score": 0})
        focused = host.call_tool(
            "memory_search",
            {"query": "what changed last week?", "min_score": 0, "task": "Debug safe-cron-merge.sh"},
        )
    assert plain["results"][0]["path"] != "memory/2026-03-16.md"
    assert focused["results"][0]["path"] == "memory/2026-03-16.md"
    # the bonus is added to the relevance (the score before MMR; "score" is MMR's, which also
    # depends on what ranks above)
    before = {r["path"]: r["relevance"] for r in plain["results"]}
    after = {r["path"]: r["relevance"] for r in focused["results"]}
    assert after["memory/2026-03-16.md"] > before["memory/2026-03-16.md"]  # added, not replaced
    assert after["memory/2026-03-18.md"] == pytest.approx(before["memory/2026-03-18.md"])


def test_no_task_no_change_and_disabled_plugin_does_nothing(host, make_host) -> None:
    from lifelong_plugins.recall.service import make_request, run_search

    with clock.pinned(NOW):
        bare = run_search(host.ctx, make_request(host.ctx, query="what did we change", min_score=0))
        same = run_search(
            host.ctx, SearchRequest("what did we change", min_score=0, session={"messages": []})
        )
    assert [c.chunk_id for c in bare.results] == [c.chunk_id for c in same.results]
    off = make_host(
        FILES,
        {"embedding": {"provider": "none"}, "plugins": {"task_focus": {"enabled": False}}},
        builtins=("embeddings", "recall", "task_focus"),
        entry_points=False,
    )
    assert off.implementers("retrieval_post") == []


def test_the_most_task_relevant_candidate_gets_the_full_weight(host) -> None:
    """An inferred task has many keywords no single note holds; the bonus is relative to the
    candidate holding the most of them, so it still decides between near-equal candidates."""
    from lifelong_plugins.recall.service import run_search

    session = {
        "messages": [
            {"role": "user", "content": "the nightly cron merge failed again on staging"},
            {"role": "user", "content": "look at the lock handling and the retry limit in the script"},
        ]
    }
    with clock.pinned(NOW):
        plain = run_search(host.ctx, SearchRequest("what changed last week?", min_score=0, record=False))
        focused = run_search(
            host.ctx, SearchRequest("what changed last week?", min_score=0, record=False, session=session)
        )
    gain = {c.path: c.relevance for c in focused.results}
    base = {c.path: c.relevance for c in plain.results}
    assert focused.results[0].path == "memory/2026-03-16.md"
    assert focused.results[0].extra["task_relevance"] < 1.0  # not every inferred keyword is held
    assert gain["memory/2026-03-16.md"] - base["memory/2026-03-16.md"] == pytest.approx(0.3)
