"""What the learned update reader costs a search in mode current.

``python -m evals.bench_update_reader [--reps 3]``

The demo workspace (indexed once with the bundled embedder), every search of its replay script
asked through the real ``memory_search`` tool in mode current (the supersede plugin loaded, as by
default), in one warm process: wall time p50 / p95 with the learned reader
(``lifelong.update_model``, up to ``reading.LEARNED_POOL`` dated results embedded per search) and
without it (pool 0: the hand rules alone), interleaved query by query. The reader's per-process
vector cache is emptied before every search, so each figure is the cost of a search whose lines
were never read before (an upper bound: a warm process re-reads its memory's lines from cache).
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from lifelong import clock, update_model
from lifelong.host import Host
from lifelong.workspace import Workspace


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--pool", type=int, default=0, help="learned pool size to measure (default: the shipped one)"
    )
    args = ap.parse_args(argv)
    from lifelong_plugins.demo.commands import REPLAY_SCRIPT, create_demo_workspace
    from lifelong_plugins.supersede import reading

    script = yaml.safe_load(REPLAY_SCRIPT.read_text("utf-8"))
    queries = list(dict.fromkeys(q for day in script["searches"].values() for q in day))
    with tempfile.TemporaryDirectory(prefix="lifelong-reader-") as tmp:
        root = Path(tmp) / "demo"
        create_demo_workspace(root)
        host = Host(Workspace(root))
        now = dt.datetime(2026, 3, 24, 9, tzinfo=dt.UTC)
        times: dict[str, list[float]] = {"learned": [], "rules": []}
        shipped = reading.LEARNED_POOL
        pool = args.pool or shipped
        try:
            with clock.pinned(now):
                host.call_tool("memory_search", {"query": "warm up", "mode": "current"})  # index, load
                for _ in range(args.reps):
                    for q in queries:
                        for name, size in (("learned", pool), ("rules", 0)):
                            reading.LEARNED_POOL = size
                            update_model._vectors.clear()
                            t0 = time.perf_counter()
                            host.call_tool("memory_search", {"query": q, "mode": "current"})
                            times[name].append((time.perf_counter() - t0) * 1000)
        finally:
            reading.LEARNED_POOL = shipped
            host.close()
    print(f"{len(queries)} searches x {args.reps}, demo workspace, mode current, warm process:")
    for name, label in (("learned", f"learned reader (pool {pool})"), ("rules", "hand rules alone")):
        t = times[name]
        print(f"  {label:28} p50 {statistics.median(t):6.1f} ms  p95 {percentile(t, 0.95):6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
