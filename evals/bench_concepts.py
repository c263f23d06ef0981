"""Concept-index latency against the hybrid search at 10k, 100k and 1M chunks (issue 18's
measured "O(1)"). ``python -m evals.bench_concepts [--sizes 10000,100000,1000000] [--queries N]
[--reps R] [--cache DIR]`` prints the figures.

The corpora are ``evals.bench_search``'s synthetic workspaces (same cache, same seed): Zipf text of
pseudo-words, one daily per 100 chunks going back from the pinned "today", clustered 384-d
vectors, bulk-inserted (no embedding model runs but for today's few lines). A cached corpus whose
index schema is not this code's (a migration added or unknown) or whose files' checksums a migration
forgot (recall's m007 does, to re-chunk) is deleted and built again from scratch, with a line saying
why: reusing it would re-chunk and re-embed every file with the real model (at 1M chunks, hours).
The concept index is built over them by the plugin's own ``ConceptIndex.rebuild()`` (timed
once per size and cached: ``concept_meta`` records the corpus spec), so the vocabulary,
occurrences and importance are what the plugin itself derives from that text: every pseudo-word
seen on two days is a concept, as a real name or tool would be.

Queries (seeded):

- **hit**: "what did we note about X" for concepts X that name 5-500 chunks (the size of a
  person, project or tool in a personal corpus) and that the index answers (confidence at or above
  the threshold); the hit path never needs a query embedding;
- **fall-through**: ``bench_search``'s own queries (2-4 mid-frequency words of a chunk), which the
  index mostly declines (low coverage or a term too common), and queries naming no concept at all.

Measured, each over ``queries x reps`` samples with the clock pinned:

- ``lookup_hit`` / ``lookup_miss``: ``ConceptIndex.lookup`` alone (the ``retrieval_pre`` cost),
  answered and declined;
- ``search_concepts``: the recall pipeline end to end (``Searcher.search``) on a host with the
  concepts plugin, for the hit queries (the concept index answers, nothing else runs);
- ``search_hybrid``: the same hit queries on a host without the plugin (FTS5 + vector legs,
  scoring, MMR), with a query vector given, so the query embedding (~10 ms on these machines) is
  NOT counted: the ratio is conservative;
- ``ratio_p95`` = hybrid p95 / concept p95 per size (target: >= 20x), and the hit p95 at 1M
  (target: <= 2 ms);
- the index's build time, rows and size, and the nightly refresh time.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import bench_search as bs

TARGETS = {"hit_p95_ms_at_1m": 2.0, "ratio_p95_min": 20.0}
HIT_DF = (5, 500)
NO_CONCEPT_QUERIES = [
    "what did we say about it yesterday?",
    "how did that go in the end?",
    "did we ever decide on this?",
    "what was the plan for next week?",
]


def _host(root: Path, with_concepts: bool):  # noqa: ANN202 - a Host
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    builtins = ("embeddings", "recall", "concepts") if with_concepts else ("embeddings", "recall")
    return Host(Workspace(root), builtins=builtins, entry_points=False)


def applied_migrations(db: Path) -> set[tuple[str, str]] | None:
    """The (set, name) migrations an index file records, read without migrating it (None: no
    file or no record)."""
    import sqlean

    if not db.exists():
        return None
    conn = sqlean.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {(s, n) for s, n in conn.execute("SELECT migration_set, name FROM _sqlite_migrations")}
    except sqlean.OperationalError:
        return None
    finally:
        conn.close()


def current_migrations() -> set[tuple[str, str]]:
    """The migrations this code applies to a new index (a throw-away workspace, migrated)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-concepts-schema-") as tmp:
        host = _host(Path(tmp), True)
        try:
            host.store  # noqa: B018 - opening the store migrates it
        finally:
            host.close()
        return applied_migrations(Path(tmp) / ".lifelong" / "index.sqlite") or set()


def stale_reason(root: Path, expected: set[tuple[str, str]]) -> str:
    """Why a cached corpus cannot be reused as it is ("" when it can). A corpus whose schema
    differs from this code's would be migrated on first open, and a migration may forget the
    files' checksums (recall's m007 does, to re-chunk): the next sync would then re-chunk every
    file and embed a million chunks with the real model. Such a corpus is rebuilt from scratch
    instead (synthetic vectors, minutes)."""
    import sqlean

    db = root / ".lifelong" / "index.sqlite"
    applied = applied_migrations(db)
    if applied is None:
        return ""  # nothing cached: bench_search builds it
    started = {s for s, _ in applied}  # a set never applied (concepts, before its first run) is created fresh
    missing = sorted(n for s, n in expected - applied if s in started)
    extra = sorted(n for _, n in applied - expected)
    if missing or extra:
        return (
            "schema differs"
            + (f"; not applied: {', '.join(missing)}" if missing else "")
            + (f"; unknown: {', '.join(extra)}" if extra else "")
        )
    conn = sqlean.connect(f"file:{db}?mode=ro", uri=True)
    try:
        forgotten = conn.execute("SELECT count(*) FROM files WHERE sha256 IS NULL").fetchone()[0]
    finally:
        conn.close()
    return f"{forgotten:,} files would be re-chunked (checksums forgotten)" if forgotten else ""


def corpus_for(
    cache_dir: Path,
    n: int,
    seed: int,
    n_queries: int,
    expected: set[tuple[str, str]],
    log: Callable[[str], None],
) -> bs.Corpus:
    """``bench_search``'s cached corpus of ``n`` chunks, rebuilt from scratch when its schema is
    not this code's (see :func:`stale_reason`)."""
    import shutil

    root = cache_dir / "bench" / f"n{n}-s{seed}"
    reason = stale_reason(root, expected)
    if reason:
        log(f"    cached corpus at {root} is stale ({reason}): rebuilding it from scratch")
        shutil.rmtree(root)
    return bs.build_corpus(root, n, seed, n_queries, log)


def build_concepts(corpus: bs.Corpus, log: Callable[[str], None]) -> dict[str, Any]:
    """Build (or reuse) the concept index over ``corpus``; return its figures."""
    from lifelong_plugins.concepts.index import ConceptIndex

    from lifelong import clock

    spec = json.dumps(bs._spec(corpus.n, corpus.seed), sort_keys=True)
    db = corpus.root / ".lifelong" / "index.sqlite"
    before = db.stat().st_size
    with clock.pinned(bs.NOW):
        host = _host(corpus.root, True)
        try:
            index = ConceptIndex(host.ctx, host.ctx.config("concepts"))
            conn = host.store.conn
            row = conn.execute("SELECT value FROM concept_meta WHERE name = 'bench-spec'").fetchone()
            out: dict[str, Any] = {}
            if row is None or row[0] != spec:
                log(f"    building the concept index over {corpus.n:,} chunks")
                t0 = time.perf_counter()
                counts = index.rebuild()
                out["rebuild_s"] = round(time.perf_counter() - t0, 1)
                with host.store.lock:
                    conn.execute(
                        "INSERT OR REPLACE INTO concept_meta(name, value) VALUES ('bench-spec', ?)", [spec]
                    )
                    conn.execute(
                        "INSERT OR REPLACE INTO concept_meta(name, value) VALUES ('bench-rebuild-s', ?)",
                        [str(out["rebuild_s"])],
                    )
                    conn.commit()
                out["reused"] = False
            else:
                stored = conn.execute(
                    "SELECT value FROM concept_meta WHERE name = 'bench-rebuild-s'"
                ).fetchone()
                out["rebuild_s"] = float(stored[0]) if stored else None
                out["reused"] = True
            t0 = time.perf_counter()
            counts = index.refresh()
            out["nightly_refresh_s"] = round(time.perf_counter() - t0, 2)
            out.update(counts)
            pages = conn.execute(
                "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'concept%' OR name LIKE 'sqlite_autoindex_concept%'"
            ).fetchone()[0]
            out["tables_mb"] = round((pages or 0) / 2**20, 1)
        except Exception as exc:  # dbstat may be missing from a build: report what we can
            if "dbstat" not in str(exc):
                raise
            out["tables_mb"] = round((db.stat().st_size - before) / 2**20, 1)
        finally:
            host.close()
    return out


def hit_queries(corpus: bs.Corpus, count: int, seed: int) -> list[str]:
    """Queries naming one concept of 5-500 chunks, sampled with a seed."""
    from lifelong import clock

    with clock.pinned(bs.NOW):
        host = _host(corpus.root, True)
        try:
            rows = host.store.conn.execute(
                "SELECT display FROM concepts WHERE doc_freq BETWEEN ? AND ? ORDER BY key", HIT_DF
            ).fetchall()
        finally:
            host.close()
    rng = np.random.default_rng([seed, 18])
    picks = rng.choice(len(rows), size=min(count, len(rows)), replace=False)
    # two forms, alternating: the bare name (typed into a search box) and a framed question; the
    # framing words count against the index's coverage, so it declines many framed ones
    return [
        rows[int(i)][0] if n % 2 == 0 else f"what did we note about {rows[int(i)][0]}"
        for n, i in enumerate(picks)
    ]


def _time(
    fn: Callable[[Any], Any], items: Sequence[Any], reps: int
) -> tuple[list[float], list[float], list[Any]]:
    """Wall-clock and process CPU milliseconds per call, and the results. On a shared machine a
    call preempted half way shows a scheduler slice more of wall time and none of CPU time, so
    both are kept (the hybrid search's lexical leg runs in a second thread: its CPU time counts
    both legs)."""
    times, cpu, results = [], [], []
    for _ in range(reps):
        for item in items:
            c0, t0 = time.process_time(), time.perf_counter()
            results.append(fn(item))
            times.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
    return times, cpu, results


def measure(corpus: bs.Corpus, *, n_queries: int, reps: int, seed: int) -> dict[str, Any]:
    from lifelong_plugins.concepts.index import ConceptIndex
    from lifelong_plugins.recall import service
    from lifelong_plugins.recall.search import Searcher

    from lifelong import clock
    from lifelong.contracts import SearchRequest

    out: dict[str, Any] = {"chunks": corpus.n}
    hits = hit_queries(corpus, n_queries, seed)
    vectors = [v for _, v, _ in corpus.queries]
    with clock.pinned(bs.NOW):
        host = _host(corpus.root, True)
        try:
            cfg = host.ctx.config("recall")
            shape = {"max_results": cfg["max_results"], "min_score": cfg["min_score"], "record": False}
            index = ConceptIndex(host.ctx, host.ctx.config("concepts"))
            hit_requests = [SearchRequest(q, **shape) for q in hits]
            index.lookup(hit_requests[0])  # warm the statement cache and the pages
            t_hit, _, lookups = _time(index.lookup, hit_requests, reps)
            answered = [lk.answered for lk in lookups[: len(hit_requests)]]
            out["hit_queries"] = len(hit_requests)
            out["hit_answered"] = round(sum(answered) / max(1, len(answered)), 3)
            kept = [r for r, a in zip(hit_requests, answered, strict=True) if a]
            t_hit = [t for t, a in zip(t_hit, answered * reps, strict=True) if a]
            out["lookup_hit"] = bs.percentiles(t_hit)

            misses = [SearchRequest(q, **shape) for q, _, _ in corpus.queries] + [
                SearchRequest(q, **shape) for q in NO_CONCEPT_QUERIES
            ]
            t_miss, _, miss_lookups = _time(index.lookup, misses, reps)
            declined = [not lk.answered for lk in miss_lookups]
            out["fallthrough_share"] = round(sum(declined[: len(misses)]) / len(misses), 3)
            out["lookup_miss"] = bs.percentiles([t for t, d in zip(t_miss, declined, strict=True) if d])

            out["hit_answered_bare"] = round(sum(answered[0::2]) / max(1, len(answered[0::2])), 3)
            out["hit_answered_framed"] = round(sum(answered[1::2]) / max(1, len(answered[1::2])), 3)
            if not kept:
                nan = {"p50": float("nan"), "p95": float("nan")}
                out["note"] = "the index answered none of the hit queries: no hit-path timing"
                out.update(
                    search_concepts=nan,
                    search_hybrid=nan,
                    search_concepts_cpu=nan,
                    search_hybrid_cpu=nan,
                    ratio_p50=float("nan"),
                    ratio_p95=float("nan"),
                )
                return out
            searcher = Searcher(service.index_for(host.ctx))
            searcher.search(kept[0])
            t_concept, cpu_concept, outcomes = _time(searcher.search, kept, reps)
            out["search_concepts"] = bs.percentiles(t_concept)
            out["search_concepts_cpu"] = bs.percentiles(cpu_concept)
            out["concepts_short_circuit"] = round(
                sum(o.short_circuit for o in outcomes) / max(1, len(outcomes)), 3
            )
        finally:
            host.close()

        plain = _host(corpus.root, False)
        try:
            searcher = Searcher(service.index_for(plain.ctx))
            with_vectors = [
                SearchRequest(r.query, query_vector=vectors[i % len(vectors)], **shape)
                for i, r in enumerate(kept)
            ]
            searcher.search(with_vectors[0])
            t_hybrid, cpu_hybrid, _ = _time(searcher.search, with_vectors, reps)
            out["search_hybrid"] = bs.percentiles(t_hybrid)
            out["search_hybrid_cpu"] = bs.percentiles(cpu_hybrid)
        finally:
            plain.close()
    out["ratio_p95"] = round(out["search_hybrid"]["p95"] / max(out["search_concepts"]["p95"], 1e-6), 1)
    out["ratio_p50"] = round(out["search_hybrid"]["p50"] / max(out["search_concepts"]["p50"], 1e-6), 1)
    return out


def run_bench(
    sizes: Sequence[int],
    *,
    cache_dir: Path,
    seed: int,
    n_queries: int,
    reps: int,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    results: dict[str, Any] = {"sizes": list(sizes), "seed": seed, "queries": n_queries, "reps": reps}
    results["targets"] = TARGETS
    results["by_size"] = {}
    expected = current_migrations()
    for n in sizes:
        log(f"  corpus of {n:,} chunks")
        corpus = corpus_for(cache_dir, n, seed, n_queries, expected, log)
        build = build_concepts(corpus, log)
        figures = measure(corpus, n_queries=n_queries, reps=reps, seed=seed)
        results["by_size"][str(n)] = {"index": build, **figures}
        log(
            f"    {n:,} chunks: hit p95 {figures['search_concepts']['p95']:.2f} ms via concepts,"
            f" {figures['search_hybrid']['p95']:.1f} ms hybrid, ratio p95 {figures['ratio_p95']}"
        )
    largest = results["by_size"][str(max(sizes))]
    results["verdict"] = {
        "hit_p95_ms_at_largest": {
            "value": largest["search_concepts"]["p95"],
            "target": TARGETS["hit_p95_ms_at_1m"],
            "size": max(sizes),
            "met": largest["search_concepts"]["p95"] <= TARGETS["hit_p95_ms_at_1m"],
        },
        "hit_p95_cpu_ms_at_largest": {
            "value": largest["search_concepts_cpu"]["p95"],
            "target": TARGETS["hit_p95_ms_at_1m"],
            "size": max(sizes),
            "met": largest["search_concepts_cpu"]["p95"] <= TARGETS["hit_p95_ms_at_1m"],
        },
        "ratio_p50_every_size": {
            "value": min(r["ratio_p50"] for r in results["by_size"].values()),
            "target": TARGETS["ratio_p95_min"],
            "met": all(r["ratio_p50"] >= TARGETS["ratio_p95_min"] for r in results["by_size"].values()),
        },
        "ratio_p95_every_size": {
            "value": min(r["ratio_p95"] for r in results["by_size"].values()),
            "target": TARGETS["ratio_p95_min"],
            "met": all(r["ratio_p95"] >= TARGETS["ratio_p95_min"] for r in results["by_size"].values()),
        },
    }
    return results


def print_results(results: dict[str, Any]) -> None:
    print(
        f"{'chunks':>9} {'lookup hit p50/p95':>19} {'lookup miss p50/p95':>20} {'search via concepts':>20} "
        f"{'hybrid search':>15} {'ratio p50/p95':>14} {'answered bare/framed':>21} {'build s':>8} {'nightly s':>9} {'MB':>6}"
    )
    for n, r in results["by_size"].items():
        ix = r["index"]
        print(
            f"{int(n):>9,} {r['lookup_hit']['p50']:>8.2f}/{r['lookup_hit']['p95']:<10.2f} "
            f"{r['lookup_miss']['p50']:>9.2f}/{r['lookup_miss']['p95']:<10.2f} "
            f"{r['search_concepts']['p50']:>9.2f}/{r['search_concepts']['p95']:<10.2f} "
            f"{r['search_hybrid']['p50']:>7.1f}/{r['search_hybrid']['p95']:<7.1f} "
            f"{r['ratio_p50']:>6.1f}/{r['ratio_p95']:<7.1f} {r['hit_answered_bare']:>10.3f}/{r['hit_answered_framed']:<10.3f} "
            f"{ix.get('rebuild_s') or float('nan'):>8.1f} {ix['nightly_refresh_s']:>9.2f} {ix['tables_mb']:>6.1f}"
        )
    print("  CPU time per search (ms, p50/p95; preemption excluded): via concepts | hybrid")
    for n, r in results["by_size"].items():
        c, h = r["search_concepts_cpu"], r["search_hybrid_cpu"]
        print(f"  {int(n):>9,}  {c['p50']:.2f}/{c['p95']:.2f} | {h['p50']:.1f}/{h['p95']:.1f}")
    print(
        f"  load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
    )
    for name, v in results["verdict"].items():
        print(f"  {name}: {v['value']} (target {v['target']}) {'met' if v['met'] else 'MISSED'}")


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    from .harness import DEFAULT_CACHE, SEED

    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_concepts", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated chunk counts")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    results = run_bench(sizes, cache_dir=args.cache, seed=args.seed, n_queries=args.queries, reps=args.reps)
    print_results(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
