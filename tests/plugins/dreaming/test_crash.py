"""A dream killed at any moment stays reversible (issue 14, item 4): the run is on record as
"running" before its first write, and the next dream or `dream rollback` undoes it exactly from its
journal; the recall events it consumed are not lost (the watermark commits with the pool)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lifelong.journal as journal_module
from lifelong.host import Host
from lifelong.workspace import Workspace

from .conftest import at, dream
from .test_commands import workspace

NOW = "2026-03-10T03:00:00+01:00"
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

# a third-party plugin (a real entry point on PYTHONPATH) that stalls after MEMORY.md is written
# and the pool saved, before the diary, the reports and the run's final history row
STALL_PLUGIN = """
import os, time
from lifelong.hookspecs import hookimpl

@hookimpl
def after_consolidation(ctx, run):
    root = ctx.workspace.root
    if (root / ".stall").exists():
        (root / ".stalled").write_text(str(os.getpid()))
        time.sleep(60)
"""


def install_stall_plugin(where: Path) -> dict[str, str]:
    pkg = where / "stalldream"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(STALL_PLUGIN)
    (pkg / "plugin.yaml").write_text(
        "id: stalldream\nhooks: [after_consolidation]\nconfig_schema: {type: object, properties: {}}\n"
    )
    info = where / "stalldream-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stalldream\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lifelong]\nstalldream = stalldream\n")
    return {**ENV, "PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")])}


def lifelong(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lifelong", "--workspace", str(root), "--now", NOW, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def keys(root: Path) -> list[str]:
    return [
        ln.split("key:")[1].split()[0] for ln in (root / "MEMORY.md").read_text().splitlines() if "key:" in ln
    ]


def runs(root: Path, env: dict[str, str]) -> dict[str, str]:
    out = lifelong(root, env, "dream", "history", "--json")
    assert out.returncode == 0, out.stderr
    return {r["run_id"]: r["status"] for r in json.loads(out.stdout)["runs"]}


def temp_files(root: Path) -> list[Path]:
    return list(root.rglob(".*.tmp"))


def test_a_dream_killed_after_writing_memory_is_undone_by_the_next_dream_or_rollback(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    original = (root / "MEMORY.md").read_bytes()
    env = install_stall_plugin(tmp_path / "site")
    (root / ".stall").write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lifelong", "--workspace", str(root), "--now", NOW, "dream"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (root / ".stalled").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the dream never reached the stall"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    (root / ".stall").unlink()
    promoted = keys(root)
    assert len(promoted) == 1  # killed after MEMORY.md was written...
    (killed,) = runs(root, env)
    assert runs(root, env)[killed] == "running"  # ...and it is on record, with its journal
    # a temp file a killed writer left is swept by the next command
    (root / ".MEMORY.md.abcd1234.tmp").write_text("half")

    # `dream rollback` of the interrupted run undoes it exactly
    other = tmp_path / "copy"
    shutil.copytree(root, other)
    undone = lifelong(other, env, "dream", "rollback", killed)
    assert undone.returncode == 0, undone.stderr
    assert "interrupted" in undone.stdout
    assert (other / "MEMORY.md").read_bytes() == original
    assert runs(other, env) == {killed: "interrupted"}
    assert "status staged" in lifelong(other, env, "dream", "explain", promoted[0]).stdout
    assert temp_files(other) == []

    # the next dream undoes it, then promotes the same item once (its recall events were kept)
    again = lifelong(root, env, "dream", "--json")
    assert again.returncode == 0, again.stderr
    run = json.loads(again.stdout)
    assert run["status"] == "ok" and [p["key"] for p in run["promoted"]] == promoted
    assert keys(root) == promoted
    assert runs(root, env) == {killed: "interrupted", run["run_id"]: "ok"}
    assert temp_files(root) == []
    back = lifelong(root, env, "dream", "rollback", run["run_id"])
    assert back.returncode == 0, back.stderr
    assert "forced" not in back.stdout and "edits kept" not in back.stdout
    assert (root / "MEMORY.md").read_bytes() == original
    assert not (root / ".lifelong" / "reports" / killed).exists()


@pytest.mark.parametrize("target", ["MEMORY.md", "DREAMS.md"])
def test_a_crash_between_the_journal_entry_and_the_write_is_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    root = workspace(tmp_path)
    original = (root / "MEMORY.md").read_bytes()
    real_write = journal_module.atomic_write

    def dies_at_target(path: Path, data: bytes | str) -> None:
        if Path(path).name == target:
            raise SystemExit("killed")  # what a kill looks like to the files: the entry, no write
        real_write(path, data)

    host = Host(Workspace(root), builtins=("embeddings", "recall", "dreaming"), entry_points=False)
    monkeypatch.setattr(journal_module, "atomic_write", dies_at_target)
    with pytest.raises(SystemExit):
        dream(host, at("2026-03-10"))
    monkeypatch.setattr(journal_module, "atomic_write", real_write)
    from lifelong_plugins.dreaming.rollback import rollback_run
    from lifelong_plugins.dreaming.state import history

    (killed,) = history(host.store)
    assert (
        killed["status"] == "running"
        and killed["summary"]["journal"] == f".lifelong/journal/{killed['run_id']}"
    )
    run = dream(host, at("2026-03-10"))
    assert run.status == "ok" and len(run.promoted) == 1
    statuses = {r["run_id"]: r["status"] for r in history(host.store)}
    assert statuses == {killed["run_id"]: "interrupted", run.run_id: "ok"}
    rollback_run(host, run.run_id)
    assert (root / "MEMORY.md").read_bytes() == original
    assert not (root / "DREAMS.md").exists() or "dream-" not in (root / "DREAMS.md").read_text()
    host.close()
