"""sqlite-vec against the recall plugin's own vector leg: per-query time and recall@10 (issue 11, item 7).

``python -m evals.vec_backends [--sizes 10000,100000] [--queries N] [--seed S] [--json FILE]``

The vectors are the latency benchmark's generator (``bench_search.ClusteredVectors``, seeded,
generated in memory) in its two distributions: ``clustered`` (384-d unit vectors in two levels
around a shared direction, as e5 embeddings are: topics of ~2,000, sub-topics of ~24) and
``flat`` (its stress figure: flat topics with no sub-topic structure and noise 0.45, so the true
top 10 differ from the rest of their topic only by noise; the harder case for binary codes).
The queries are random stored vectors plus noise (``ClusteredVectors.query``). Every
backend reads the same real SQLite file (WAL), in which the float32 vectors are also stored as
blobs in a plain table ``vectors(id, embedding)`` (the recall plugin's ``chunk_vectors``).
Backends, each asked for the top 10 of every query:

- ``numpy exact``: the baseline: brute-force cosine over every vector held in memory (BLAS);
- ``vec0 float exact``: sqlite-vec ``vec0(embedding float[384])``,
  ``WHERE embedding MATCH ? AND k = 10`` (its exact KNN; L2 distance, which ranks unit vectors as
  cosine does);
- ``vec0 bit + re-rank``: sqlite-vec ``vec0(embedding bit[384])`` filled with
  ``vec_quantize_binary(vector - centroid)`` (centred as the plugin centres its codes; without
  centring the shared direction sets most bits alike), ``k = 200`` nearest by Hamming distance,
  then those 200 float blobs read from ``vectors`` and re-ranked by exact cosine;
- ``vec0 bit 2000 + re-rank``: the same with ``k = 2000`` (the plugin's coarse pool) and all
  2,000 re-ranked exactly (10x the float reads of the others);
- ``recall leg``: the plugin's own functions (``lifelong_plugins.recall.vectors``):
  ``pack_codes`` around the centroid of the first 20,000 vectors, an in-memory ``CodeMatrix``,
  ``shortlist`` (Hamming coarse pool 2,000, narrowed to 200 by the asymmetric score), then the
  same read of 200 float blobs and exact cosine as the search's vector leg does.

The pools (200 and 2,000) are the recall plugin's defaults ``vector_pool`` and ``coarse_pool``,
read from its plugin.yaml.

Printed per size: the time to fill each backend's store (for the recall leg: computing the codes
and the matrix, which the plugin does once per process from ``chunk_codes``), ms p50 / p95 per
query (after a few warm-up queries, not counted), and recall@10 against exact brute force; then a
verdict line. sqlite-vec is a dependency of the harness (``pip install -e ./evals``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bench_search import BLOCK, CENTROID_SAMPLE, DIM, ClusteredVectors, percentiles

K = 10


def _recall_default(key: str) -> int:
    """A default of the recall plugin's config schema (its plugin.yaml)."""
    import lifelong_plugins.recall as recall

    from lifelong.host import load_manifest

    return int(load_manifest(recall)["config_schema"]["properties"][key]["default"])


RERANK = _recall_default("vector_pool")  # 200: exact re-ranks per query
COARSE = _recall_default("coarse_pool")  # 2000: the Hamming coarse pool
WARMUP = 5
BIT_COARSE = f"vec0 bit {COARSE} + re-rank"
BACKENDS = ("numpy exact", "vec0 float exact", "vec0 bit + re-rank", BIT_COARSE, "recall leg")
SQLITE_VEC = ("vec0 float exact", "vec0 bit + re-rank", BIT_COARSE)
DISTRIBUTIONS = ("clustered", "flat")
TARGET_RECALL = 0.98  # issue 3's vector recall@10 target


def corpus(n: int, seed: int, n_queries: int, distribution: str) -> tuple[np.ndarray, np.ndarray]:
    """(n, 384) stored vectors and (q, 384) query vectors, float32 unit rows."""
    if distribution == "flat":  # bench_search.stress_vector_recall's distribution
        gen = ClusteredVectors(n, seed + 1, sub=0.0, noise=0.45)
    else:
        gen = ClusteredVectors(n, seed)
    vecs = np.vstack([gen.block(s, min(n, s + BLOCK)) for s in range(0, n, BLOCK)])
    rng = np.random.default_rng([seed, 11])
    sources = rng.choice(n, size=min(n_queries, n), replace=False)
    queries = np.stack([gen.query(rng, vecs[s]) for s in sources]).astype(np.float32)
    return vecs, queries


def exact_top(vecs: np.ndarray, queries: np.ndarray, k: int = K) -> list[set[int]]:
    """The true top-k ids (1-based rowids) of each query by cosine, in blocks of queries."""
    out: list[set[int]] = []
    for q0 in range(0, len(queries), 64):
        sims = vecs @ queries[q0 : q0 + 64].T
        top = np.argpartition(-sims, k - 1, axis=0)[:k].T
        out.extend({int(i) + 1 for i in row} for row in top)
    return out


def connect(path: Path) -> Any:
    """A sqlean connection with sqlite-vec loaded (raises ImportError when it is not installed)."""
    import sqlean
    import sqlite_vec

    conn = sqlean.connect(str(path))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def _timed(fill: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    fill()
    return round(time.perf_counter() - t0, 2)


def _rerank(conn: Any, ids: Sequence[int], query: np.ndarray) -> list[int]:
    """Read the float blobs of ``ids`` and return the ``K`` best by cosine (as the search's vector
    leg: one ``json_each`` query, a product without BLAS)."""
    rows = conn.execute(
        "SELECT id, embedding FROM vectors WHERE id IN (SELECT value FROM json_each(?))",
        [json.dumps([int(i) for i in ids])],
    ).fetchall()
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    sims = np.einsum("ij,j->i", mat, query)
    return [rows[i][0] for i in np.argsort(-sims)[:K]]


def measure(
    n: int, distribution: str, seed: int, n_queries: int, folder: Path, log: Callable[[str], None] = print
) -> dict[str, Any]:
    from lifelong_plugins.recall.vectors import CodeMatrix, pack_codes

    vecs, queries = corpus(n, seed, n_queries, distribution)
    truth = exact_top(vecs, queries)
    centroid = vecs[:CENTROID_SAMPLE].mean(axis=0).astype(np.float32)
    conn = connect(folder / f"vec-{n}-{distribution}.db")
    fill_s: dict[str, float] = {}

    def fill_vectors() -> None:
        conn.execute("CREATE TABLE vectors(id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        conn.executemany(
            "INSERT INTO vectors VALUES (?, ?)", ((i + 1, v.tobytes()) for i, v in enumerate(vecs))
        )
        conn.commit()

    def fill_float() -> None:
        conn.execute(f"CREATE VIRTUAL TABLE vec_float USING vec0(embedding float[{DIM}])")
        conn.executemany(
            "INSERT INTO vec_float(rowid, embedding) VALUES (?, ?)",
            ((i + 1, v.tobytes()) for i, v in enumerate(vecs)),
        )
        conn.commit()

    def fill_bit() -> None:
        conn.execute(f"CREATE VIRTUAL TABLE vec_bit USING vec0(embedding bit[{DIM}])")
        conn.executemany(
            "INSERT INTO vec_bit(rowid, embedding) VALUES (?, vec_quantize_binary(?))",
            ((i + 1, (v - centroid).tobytes()) for i, v in enumerate(vecs)),
        )
        conn.commit()

    matrix: list[CodeMatrix] = []

    def fill_codes() -> None:
        codes = pack_codes(vecs, centroid)
        matrix.append(
            CodeMatrix("bench", 0, np.arange(1, n + 1, dtype=np.int64), np.ascontiguousarray(codes.T))
        )

    log(f"  {n:,} {distribution} vectors: filling the stores")
    fill_s["vectors table"] = _timed(fill_vectors)
    fill_s["vec0 float exact"] = _timed(fill_float)
    fill_s["vec0 bit + re-rank"] = fill_s[BIT_COARSE] = _timed(fill_bit)
    fill_s["recall leg"] = _timed(fill_codes)
    codes = matrix[0]

    def numpy_exact(q: np.ndarray) -> list[int]:
        sims = vecs @ q
        top = np.argpartition(-sims, K - 1)[:K]
        return [int(i) + 1 for i in top[np.argsort(-sims[top])]]

    def vec_float(q: np.ndarray) -> list[int]:
        rows = conn.execute(
            "SELECT rowid FROM vec_float WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (q.tobytes(), K),
        ).fetchall()
        return [r[0] for r in rows]

    def vec_bit(q: np.ndarray, pool: int = RERANK) -> list[int]:
        rows = conn.execute(
            "SELECT rowid FROM vec_bit WHERE embedding MATCH vec_quantize_binary(?) AND k = ?",
            ((q - centroid).tobytes(), pool),
        ).fetchall()
        return _rerank(conn, [r[0] for r in rows], q)

    def recall_leg(q: np.ndarray) -> list[int]:
        qcode = pack_codes(q[None, :], centroid)[0]
        ids = codes.shortlist(qcode, q - centroid, COARSE, RERANK)
        return _rerank(conn, ids.tolist(), q)

    runs: dict[str, Callable[[np.ndarray], list[int]]] = {
        "numpy exact": numpy_exact,
        "vec0 float exact": vec_float,
        "vec0 bit + re-rank": vec_bit,
        BIT_COARSE: lambda q: vec_bit(q, COARSE),
        "recall leg": recall_leg,
    }
    backends: dict[str, Any] = {}
    for name, search in runs.items():
        for q in queries[:WARMUP]:
            search(q)
        times, recalls = [], []
        for q, true in zip(queries, truth, strict=True):
            t0 = time.perf_counter()
            got = search(q)
            times.append((time.perf_counter() - t0) * 1000)
            recalls.append(len(true & set(got[:K])) / K)
        backends[name] = {
            "ms": percentiles(times),
            "recall@10": round(float(np.mean(recalls)), 4),
            "fill_s": fill_s.get(name),
        }
        log(
            f"    {name:24} {backends[name]['ms']['p50']:8.2f} ms p50  recall@10 {backends[name]['recall@10']}"
        )
    conn.close()
    return {
        "n": n,
        "distribution": distribution,
        "queries": len(queries),
        "vectors_table_fill_s": fill_s["vectors table"],
        "backends": backends,
    }


def verdict(runs: list[dict[str, Any]]) -> str:
    """At the largest size, per distribution: the fastest backend meeting the recall target, and
    the recall leg against the fastest sqlite-vec option that meets it."""
    largest = max(r["n"] for r in runs)
    parts = []
    for run in (r for r in runs if r["n"] == largest):
        b = run["backends"]
        good = [name for name in BACKENDS if b[name]["recall@10"] >= TARGET_RECALL]
        fastest = min(good, key=lambda name: b[name]["ms"]["p50"]) if good else "none"
        vec_good = [name for name in SQLITE_VEC if name in good] or list(SQLITE_VEC)
        vec = min(vec_good, key=lambda name: b[name]["ms"]["p50"])
        leg = b["recall leg"]
        ratio = b[vec]["ms"]["p50"] / max(leg["ms"]["p50"], 1e-9)
        parts.append(
            f"{run['distribution']}: fastest at recall@10 >= {TARGET_RECALL} is {fastest}; recall leg "
            f"{leg['ms']['p50']:.2f} ms (recall {leg['recall@10']}) vs sqlite-vec {vec} "
            f"{b[vec]['ms']['p50']:.2f} ms (recall {b[vec]['recall@10']}), {ratio:.1f}x "
            f"{'faster' if ratio >= 1 else 'slower'}"
        )
    return f"at {largest:,} vectors, p50 per query: " + "; ".join(parts)


def run(
    sizes: Sequence[int],
    *,
    seed: int,
    n_queries: int,
    distributions: Sequence[str] = DISTRIBUTIONS,
    folder: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    import sqlite_vec

    out: dict[str, Any] = {
        "seed": seed,
        "k": K,
        "rerank": RERANK,
        "coarse_pool": COARSE,
        "sqlite_vec": getattr(sqlite_vec, "__version__", "?"),
        "cores": os.cpu_count(),
        "runs": [],
    }
    if folder is not None:
        Path(folder).mkdir(parents=True, exist_ok=True)  # --tmp names a folder it may create
    with tempfile.TemporaryDirectory(prefix="vec-backends-", dir=folder) as tmp:
        for n in sizes:
            for distribution in distributions:
                out["runs"].append(measure(n, distribution, seed, n_queries, Path(tmp), log))
    out["verdict"] = verdict(out["runs"])
    return out


def print_results(r: dict[str, Any]) -> None:
    print(
        f"\nvector backends, top {r['k']} per query (sqlite-vec {r['sqlite_vec']}, seed {r['seed']}, "
        f"{r['cores']} cores); ms per query p50 / p95, recall@10 vs exact brute force"
    )
    print(
        f"{'vectors':>9} {'distribution':12} {'backend':24} {'p50':>8} {'p95':>8} {'recall@10':>10} {'fill s':>7}"
    )
    for run in r["runs"]:
        for name, b in run["backends"].items():
            fill = "" if b["fill_s"] is None else f"{b['fill_s']:.2f}"
            print(
                f"{run['n']:>9,} {run['distribution']:12} {name:24} {b['ms']['p50']:>8.2f} "
                f"{b['ms']['p95']:>8.2f} {b['recall@10']:>10.4f} {fill:>7}"
            )
    print(f"verdict: {r['verdict']}")


def main(argv: Sequence[str] | None = None) -> None:
    from .harness import SEED

    parser = argparse.ArgumentParser(
        prog="python -m evals.vec_backends", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated vector counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--distributions", default=",".join(DISTRIBUTIONS), help="comma-separated: clustered, flat"
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--tmp", type=Path, default=None, help="folder for the temporary SQLite files")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        import sqlite_vec  # noqa: F401
    except ImportError:
        raise SystemExit("sqlite-vec is not installed: pip install -e ./evals") from None
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    distributions = [d for d in args.distributions.split(",") if d]
    unknown = sorted(set(distributions) - set(DISTRIBUTIONS))
    if unknown:
        raise SystemExit(
            f"unknown distribution {', '.join(unknown)} (choose from {', '.join(DISTRIBUTIONS)})"
        )
    results = run(sizes, seed=args.seed, n_queries=args.queries, distributions=distributions, folder=args.tmp)
    print_results(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
