"""The cold start of a CLI call (issue 15, item 14): every ``lifelong search`` or ``lifelong gate``
is a new process that imports the suite, loads the plugins and (with vectors) the embedding model
before it searches. ``python -m evals.cli_cold_start [--runs 7] [--json]`` prints, for each call,
the wall time of the whole process (p50 / p95 over ``--runs``) next to the same work in a warm
process, so the difference is the cold start.

Calls, on the demo workspace (indexed once first, so no call re-indexes):

- ``python -c pass``: the interpreter's own start, the baseline of every ratio printed (a busy
  machine slows every process; the ratio to this one, measured in the same run, moves less);
- ``lifelong --version`` (Python and click only) and ``lifelong --help`` (every plugin's commands);
- ``lifelong search QUERY`` with ``embedding: none`` (FTS-only: no model) and with the bundled
  model (the query is embedded in the call);
- ``lifelong gate MESSAGE`` (offline extractive note, bundled model).

The load average at start is printed: on a busy 2-core machine every figure grows. Beside the
wall time, each call's CPU time (user + system of the process, p50) and its wall p50 as a multiple
of ``python -c pass``'s. Targets (issue 43): ``--help`` ≤ 300 ms and an FTS-only search ≤ 500 ms
wall on 2 idle cores.

The calls load compiled bytecode, as an installed package does (pip writes ``.pyc`` files at
install): the calls run with ``PYTHONPYCACHEPREFIX`` set to a temporary folder and without
``PYTHONDONTWRITEBYTECODE``, and each call runs once untimed first (which also builds the
per-user currency lexicon cache, ``lifelong.readers``, in a temporary ``XDG_CACHE_HOME``).
``--no-bytecode-cache`` keeps the caller's environment instead: with ``PYTHONDONTWRITEBYTECODE=1``
every call compiles the suite's sources again (~0.25 s more per call).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from .bench_search import percentiles

QUERY = "which venue did we book for the offsite?"
MESSAGE = "what did we decide about the pitch?"
NOW = "2026-03-24T09:00"


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


ENV: dict[str, str] | None = None  # the calls' environment (None: this process's)


def timed_process(argv: list[str], runs: int) -> dict[str, float]:
    samples, cpu = [], []
    subprocess.run(argv, capture_output=True, text=True, env=ENV)  # untimed: bytecode and caches
    for _ in range(runs):
        t0, c0 = time.perf_counter(), children_cpu_s()
        proc = subprocess.run(argv, capture_output=True, text=True, env=ENV)
        samples.append((time.perf_counter() - t0) * 1000)
        cpu.append((children_cpu_s() - c0) * 1000)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip()[-300:]}")
    p = percentiles(samples)
    return {
        "p50_ms": round(p["p50"]),
        "p95_ms": round(p["p95"]),
        "cpu_p50_ms": round(percentiles(cpu)["p50"]),
    }


def timed_in_process(root: Path, runs: int, *, gate: bool) -> dict[str, float]:
    from lifelong import clock
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    host = Host(Workspace(root))
    samples = []
    try:
        with clock.pinned(clock.parse_instant(NOW, host.workspace.timezone)):
            for i in range(runs + 1):
                t0 = time.perf_counter()
                if gate:
                    host.before_reply({"id": f"bench-{i}", "chat_type": "direct", "messages": []}, MESSAGE)
                else:
                    host.call_tool("memory_search", {"query": QUERY})
                if i:  # the first call warms the process; the rest are what a warm server pays
                    samples.append((time.perf_counter() - t0) * 1000)
    finally:
        host.close()
    p = percentiles(samples)
    return {"p50_ms": round(p["p50"], 1), "p95_ms": round(p["p95"], 1)}


def workspace(base: Path, provider: str) -> Path:
    from lifelong_plugins.demo.commands import create_demo_workspace

    root = base / provider
    create_demo_workspace(root)
    cfg_path = root / "lifelong.yaml"
    cfg = yaml.safe_load(cfg_path.read_text()) if cfg_path.exists() else {}
    cfg = cfg or {}
    cfg["embedding"] = {**(cfg.get("embedding") or {}), "provider": provider}
    cfg_path.write_text(yaml.safe_dump(cfg))
    subprocess.run(lifelong("-w", str(root), "--now", NOW, "index"), check=True, capture_output=True, env=ENV)
    return root


def lifelong(*args: str) -> list[str]:
    return [sys.executable, "-m", "lifelong", *args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.cli_cold_start", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="run the calls in this environment as it is (no bytecode cache folder of their own)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    out: dict[str, Any] = {
        "load_average": os.getloadavg()[0],
        "runs": args.runs,
        "bytecode_cache": not args.no_bytecode_cache,
    }
    base = Path(tempfile.mkdtemp(prefix="lifelong-cold-"))
    global ENV
    if not args.no_bytecode_cache:
        ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        ENV.update(PYTHONPYCACHEPREFIX=str(base / "pycache"), XDG_CACHE_HOME=str(base / "cache"))
    try:
        fts, local = workspace(base, "none"), workspace(base, "local")
        out["python"] = {"process": timed_process([sys.executable, "-c", "pass"], args.runs)}
        out["version"] = {"process": timed_process(lifelong("--version"), args.runs)}
        out["help"] = {"process": timed_process(lifelong("--help"), args.runs)}
        for label, root in (("search_fts_only", fts), ("search_hybrid", local)):
            out[label] = {
                "process": timed_process(lifelong("-w", str(root), "--now", NOW, "search", QUERY), args.runs),
                "in_process": timed_in_process(root, args.runs, gate=False),
            }
        out["gate"] = {
            "process": timed_process(lifelong("-w", str(local), "--now", NOW, "gate", MESSAGE), args.runs),
            "in_process": timed_in_process(local, args.runs, gate=True),
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)
    cache = "compiled bytecode" if out["bytecode_cache"] else "this environment's bytecode setting"
    print(f"load average at start {out['load_average']:.2f}; {args.runs} runs each ({cache}); ms p50 / p95")
    base_ms = max(out["python"]["process"]["p50_ms"], 1)
    for name in ("python", "version", "help", "search_fts_only", "search_hybrid", "gate"):
        row = out[name]
        proc = row["process"]
        proc["x_python"] = round(proc["p50_ms"] / base_ms, 1)
        line = (
            f"  {name:16} new process {proc['p50_ms']} / {proc['p95_ms']}"
            f" (cpu {proc['cpu_p50_ms']}, {proc['x_python']}x python -c pass)"
        )
        if "in_process" in row:
            line += f"   warm process {row['in_process']['p50_ms']} / {row['in_process']['p95_ms']}"
        print(line)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
