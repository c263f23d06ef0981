from __future__ import annotations

from pathlib import Path
from typing import Any

from lifelong_evals import bench_search
from lifelong_plugins.recall import service
from lifelong_plugins.recall.search import Searcher

from lifelong import clock
from lifelong.contracts import SearchRequest


def test_bulk_built_corpus_is_a_consistent_index(small_bench: tuple[dict[str, Any], Path]) -> None:
    _, root = small_bench
    corpus = bench_search.build_corpus(root, 2000, 5, 10, log=lambda m: None)
    assert corpus.reused and len(corpus.queries) == 10
    host = bench_search._host(root)
    try:
        idx = service.index_for(host.ctx)
        with clock.pinned(bench_search.NOW):
            # the real sync agrees with the bulk-inserted rows: nothing left to do
            assert not idx.needs_sync()
            counts = host.store.execute(
                "SELECT count(*), sum(validity_end IS NOT NULL) FROM chunks WHERE path != ?",
                (f"memory/{bench_search.TODAY.isoformat()}.md",),
            ).fetchone()
            assert counts[0] == 2000 and 40 <= counts[1] <= 160  # ~5% superseded
            text, vec, source = corpus.queries[0]
            req = SearchRequest(text, query_vector=vec, record=False, min_score=0.0, mode="all")
            out = Searcher(idx).search(req)
            assert source in {c.chunk_id for c in out.results}  # the chunk the query was drawn from
            for c in out.results:  # every hit is exactly the lines of its file
                lines = (root / c.path).read_text("utf-8").split("\n")
                assert "\n".join(lines[c.start_line - 1 : c.end_line]) == c.text
    finally:
        host.close()
    # the appended lines of the reindex measurement were rolled back: today's daily is as built
    today = (root / "memory" / f"{bench_search.TODAY.isoformat()}.md").read_text("utf-8")
    assert today.count("\n") == len(bench_search.TODAY_LINES) + 2


def test_bench_figures(small_bench: tuple[dict[str, Any], Path]) -> None:
    results, _ = small_bench
    figures = results["by_size"]["2000"]
    assert figures["hybrid"]["n"] == 10 and figures["fts_only"]["n"] == 10
    assert figures["vector_recall@10"] >= 0.9
    stress = figures["vector_recall_stress"]
    assert set(stress["recall@10_by_pool"]) == {"200", "400", "1000", "2000"}
    assert stress["recall@10_by_pool"]["2000"] == 1.0  # pool >= corpus: exact
    assert set(stress["recall@10_shortlist"]) == {"2000->200", "4000->400", "8000->1000"}
    assert stress["recall@10_shortlist"]["2000->200"] >= stress["recall@10_by_pool"]["200"]
    assert 0.0 <= figures["source_in_results"] <= 1.0 and figures["fts_leg_plain_or"]["n"] == 10
    assert figures["reindex"]["embedded_chunks_per_sync"] == [1]
    assert any(p["function"].endswith("(search)") for p in figures["profile_hybrid"])
