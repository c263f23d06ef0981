"""evals/vec_backends.py on 500 vectors: real SQLite files with sqlite-vec loaded, the recall
plugin's own code matrix, recall against exact brute force."""

from __future__ import annotations

from pathlib import Path

from lifelong_evals import vec_backends


def test_small_run_has_every_backend_and_exact_ones_find_the_true_top_10(tmp_path: Path) -> None:
    results = vec_backends.run([500], seed=3, n_queries=12, folder=tmp_path, log=lambda m: None)
    assert [(r["n"], r["distribution"]) for r in results["runs"]] == [(500, "clustered"), (500, "flat")]
    for run in results["runs"]:
        backends = run["backends"]
        assert list(backends) == list(vec_backends.BACKENDS)
        for name in ("numpy exact", "vec0 float exact", vec_backends.BIT_COARSE):
            assert backends[name]["recall@10"] == 1.0, name  # exact search (2000 >= 500: all re-ranked)
        for b in backends.values():
            assert 0.0 <= b["recall@10"] <= 1.0
            assert b["ms"]["n"] == 12 and 0 < b["ms"]["p50"] <= b["ms"]["p95"]
    # the binary coarse passes lose something on flat topics only when the pool is smaller than the index
    assert results["runs"][0]["backends"]["recall leg"]["recall@10"] >= 0.9
    assert "at 500 vectors" in results["verdict"]
    assert not list(tmp_path.iterdir())  # the temporary SQLite files are removed


def test_the_sqlite_vec_knn_is_checked_against_numpy_on_known_vectors(tmp_path: Path) -> None:
    import numpy as np

    conn = vec_backends.connect(tmp_path / "v.db")
    vecs, queries = vec_backends.corpus(300, 1, 5, "clustered")
    conn.execute("CREATE VIRTUAL TABLE t USING vec0(embedding float[384])")
    conn.executemany(
        "INSERT INTO t(rowid, embedding) VALUES (?, ?)", ((i + 1, v.tobytes()) for i, v in enumerate(vecs))
    )
    truth = vec_backends.exact_top(vecs, queries)
    for q, true in zip(queries, truth, strict=True):
        rows = conn.execute(
            "SELECT rowid FROM t WHERE embedding MATCH ? AND k = 10", (q.tobytes(),)
        ).fetchall()
        assert {r[0] for r in rows} == true
        assert int(np.argmax(vecs @ q)) + 1 == rows[0][0]
    conn.close()
