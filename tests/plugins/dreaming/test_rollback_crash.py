"""A rollback killed half way (issue 14 item 4): ``kill -9`` after it restored MEMORY.md and before
it restored the rest and recorded itself. The rollback is on record ("rolling_back") before its
first file restore, and the next ``dream`` or ``dream rollback`` finishes it with one line."""

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

from lifelong import audit
from lifelong.workspace import Workspace

from .test_commands import workspace
from .test_crash import ENV, NOW, keys, lifelong, runs


def kill_rollback_after_first_restore(root: Path, run_id: str, original: bytes) -> None:
    """Run ``dream rollback RUN`` in its own process and kill it (-9) right after it restored
    MEMORY.md: the audit log is swapped for a FIFO, so the process blocks in its first audit append,
    which comes after the first file restore and before anything else."""
    log = audit.audit_path(Workspace(root))
    kept = log.with_name("audit.kept")
    log.rename(kept)
    os.mkfifo(log)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lifelong",
            "--workspace",
            str(root),
            "--now",
            NOW,
            "dream",
            "rollback",
            run_id,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while (root / "MEMORY.md").read_bytes() != original:
            assert proc.poll() is None and time.monotonic() < deadline, (
                "the rollback never restored MEMORY.md"
            )
            time.sleep(0.05)
        time.sleep(0.3)  # it is blocked on the FIFO now
        assert proc.poll() is None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        log.unlink()
        kept.rename(log)


@pytest.mark.parametrize("next_command", ["dream", "rollback"])
def test_a_rollback_killed_half_way_is_finished_by_the_next_command(
    tmp_path: Path, next_command: str
) -> None:
    root = workspace(tmp_path)
    original = (root / "MEMORY.md").read_bytes()
    first = lifelong(root, ENV, "dream", "--json")
    assert first.returncode == 0, first.stderr
    run = json.loads(first.stdout)
    assert run["status"] == "ok" and len(run["promoted"]) == 1
    promoted = keys(root)
    assert "dream-" in (root / "DREAMS.md").read_text() or run["run_id"] in (root / "DREAMS.md").read_text()
    shutil.copy(root / "DREAMS.md", tmp_path / "dreams-after-run")

    kill_rollback_after_first_restore(root, run["run_id"], original)
    # half done: MEMORY.md is back, the diary entry and the reports are not, and the run is on record
    assert keys(root) == []
    assert (root / "DREAMS.md").read_bytes() == (tmp_path / "dreams-after-run").read_bytes()
    assert runs(root, ENV)[run["run_id"]] == "rolling_back"

    if next_command == "dream":
        out = lifelong(root, ENV, "dream")
    else:
        out = lifelong(root, ENV, "dream", "rollback", run["run_id"])
    assert out.returncode == 0, out.stderr
    notes = [ln for ln in out.stdout.splitlines() if "left half done" in ln]
    assert len(notes) == 1 and run["run_id"] in notes[0], out.stdout
    assert runs(root, ENV)[run["run_id"]] == "rolled_back"
    dreams = root / "DREAMS.md"
    assert not dreams.exists() or run["run_id"] not in dreams.read_text()
    assert not (root / ".lifelong" / "reports" / run["run_id"]).exists()
    explained = lifelong(root, ENV, "dream", "explain", promoted[0])
    if next_command == "rollback":
        assert (root / "MEMORY.md").read_bytes() == original
        assert "status staged" in explained.stdout
    else:  # the same night's dream promotes the fact again, once, from its kept recall events
        assert keys(root) == promoted
    # nothing is left to finish: a second command reports nothing more
    again = lifelong(root, ENV, "dream", "history")
    assert again.returncode == 0 and "rolling_back" not in again.stdout
