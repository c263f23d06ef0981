from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lifelong.errors import InputError, LockedError, WorkspaceError
from lifelong.workspace import (
    Workspace,
    atomic_write,
    daily_date,
    find_regions,
    read_region,
    read_text_file,
    remove_region,
    replace_region,
    resolve_root,
    split_frontmatter,
)


def test_resolve_root_order(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
    (c / "lifelong.yaml").write_text("{}\n")
    assert resolve_root(str(a), env={"LIFELONG_WORKSPACE": str(b)}, cwd=c) == a.resolve()
    assert resolve_root(None, env={"LIFELONG_WORKSPACE": str(b)}, cwd=c) == b.resolve()
    assert resolve_root(None, env={}, cwd=c) == c.resolve()
    with pytest.raises(WorkspaceError, match="no workspace"):
        resolve_root(None, env={}, cwd=a)
    with pytest.raises(WorkspaceError, match="not a directory"):
        resolve_root(str(tmp_path / "missing"), env={})


def test_openclaw_workspace_without_config_is_recognised(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory.md").write_text("# notes\n")
    assert resolve_root(None, env={}, cwd=tmp_path) == tmp_path.resolve()
    ws = Workspace(tmp_path)
    assert ws.memory_file.name == "memory.md"
    assert ws.config["embedding"]["provider"] == "local"  # defaults without lifelong.yaml


def test_uppercase_memory_file_wins(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("x")
    assert Workspace(tmp_path).memory_file.name == "MEMORY.md"


def test_resolve_refuses_paths_outside(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.resolve("../../etc/passwd")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.resolve("/etc/passwd")
    (tmp_path / "link.md").symlink_to("/etc/hostname")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.resolve("link.md")
    assert ws.resolve("memory/x.md") == (tmp_path / "memory" / "x.md").resolve()


def test_daily_date() -> None:
    assert str(daily_date("memory/2026-03-04.md")) == "2026-03-04"
    assert str(daily_date("memory/2026-03-04-standup.md")) == "2026-03-04"
    assert daily_date("memory/2026-13-04.md") is None
    assert daily_date("MEMORY.md") is None
    assert daily_date("wiki/2026-03-04.md") is None


def test_read_text_file_refuses_bad_input(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"abc\x00def")
    (tmp_path / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "big.md").write_text("x" * 5000)
    (tmp_path / "bom.md").write_bytes("\ufeffhello".encode())
    with pytest.raises(InputError, match="binary"):
        read_text_file(tmp_path / "bin.md")
    with pytest.raises(InputError, match="not UTF-8"):
        read_text_file(tmp_path / "latin.md")
    with pytest.raises(InputError, match="over the 4096-byte limit"):
        read_text_file(tmp_path / "big.md", max_bytes=4096)
    assert read_text_file(tmp_path / "bom.md") == "hello"


def test_frontmatter() -> None:
    data, body, offset = split_frontmatter("---\ndate: 2026-01-02\ntags: [a]\n---\n# Title\n")
    assert data["tags"] == ["a"] and body == "# Title\n" and offset == 4
    assert split_frontmatter("# no frontmatter\n") == ({}, "# no frontmatter\n", 0)
    with pytest.raises(InputError, match="malformed YAML frontmatter"):
        split_frontmatter("---\nkey: [unclosed\n---\nbody\n")


HUMAN = "# MEMORY\n\nHand-written line.  \n\n<!-- lifelong:auto:start -->\nold\n<!-- lifelong:auto:end -->\n\ntrailing human text\n"


def test_replace_region_touches_nothing_outside() -> None:
    out = replace_region(HUMAN, "auto", "new body")
    start, end = HUMAN.index("<!-- lifelong:auto:start -->"), HUMAN.index("<!-- lifelong:auto:end -->")
    assert out.startswith(HUMAN[: start + len("<!-- lifelong:auto:start -->\n")])
    assert out.endswith(HUMAN[end:])
    assert read_region(out, "auto") == "new body\n"
    appended = replace_region(HUMAN, "other", "x")
    assert appended.startswith(HUMAN) and read_region(appended, "other") == "x\n"
    assert remove_region(appended, "other") == HUMAN + "\n"
    assert remove_region(HUMAN, "missing") == HUMAN


@pytest.mark.parametrize(
    "text,match",
    [
        ("<!-- lifelong:a:start -->\nno end\n", "no end fence"),
        ("<!-- lifelong:a:end -->\n", "without a matching start"),
        ("<!-- lifelong:a:start -->\n<!-- lifelong:b:start -->\n", "not closed"),
        (
            "<!-- lifelong:a:start -->\n<!-- lifelong:a:end -->\n<!-- lifelong:a:start -->\n<!-- lifelong:a:end -->\n",
            "more than once",
        ),
    ],
)
def test_malformed_regions_are_refused(text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        find_regions(text)
    with pytest.raises(InputError):
        replace_region(text, "a", "x")


def test_atomic_write_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic_write(target, "new")
    assert target.read_text() == "new"
    assert (target.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["f.md"]


WRITER = r"""
import sys
from pathlib import Path
from lifelong.workspace import atomic_write
target = Path(sys.argv[1])
payload = (sys.argv[2] * 4_000_000).encode()
print("ready", flush=True)
i = 0
while True:
    atomic_write(target, payload if i % 2 == 0 else payload.upper())
    i += 1
"""


def test_killed_writer_leaves_old_or_new_never_a_mix(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    old = b"a" * 4_000_000
    target.write_bytes(old)
    for attempt in range(5):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), "a"], stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(0.05 + 0.07 * attempt)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        data = target.read_bytes()
        assert data in (b"a" * 4_000_000, b"A" * 4_000_000), f"torn write after kill #{attempt}"


def test_the_next_writer_removes_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    """A writer killed between creating its temp file and renaming it leaves `.NAME.XXXXXXXX.tmp`;
    the next process to take the write lock removes those, and nothing else."""
    (tmp_path / "memory").mkdir()
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"a" * 4_000_000)
    left = []
    for attempt in range(20):  # kill real writers until one dies with its temp file on disk
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), "a"], stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(0.03 + 0.01 * attempt)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        left = [p.name for p in tmp_path.glob(".MEMORY.md.*.tmp")]
        if left:
            break
    assert left, "no writer was killed mid-write in 20 tries"
    journal = tmp_path / ".lifelong" / "journal" / "20260301-030000-abcd"
    journal.mkdir(parents=True)
    (journal / ".entries.json.k2j_x9q1.tmp").write_text("{")
    # deeper folders the suite writes (issue 40 item 7: the sweep went one level deep)
    deep = [
        tmp_path / ".lifelong" / "reports" / "20260301-030000-abcd" / ".deep.json.a1b2c3d4.tmp",
        tmp_path / "memory" / "captured" / "2026-03-01" / ".093000-u1.md.z9y8x7w6.tmp",
    ]
    for path in deep:
        path.parent.mkdir(parents=True)
        path.write_text("{")
    keep = [tmp_path / "memory" / ".draft.tmp", tmp_path / "notes.tmp", tmp_path / "memory" / "2026-03-01.md"]
    for path in keep:
        path.write_text("the human's")
    ws = Workspace(tmp_path)
    with ws.lock("write"):
        pass
    assert list(tmp_path.glob(".MEMORY.md.*.tmp")) == [] and list(journal.iterdir()) == []
    assert not any(p.exists() for p in deep)
    assert all(p.read_text() == "the human's" for p in keep)
    assert target.read_bytes() in (b"a" * 4_000_000, b"A" * 4_000_000)


def test_lock_is_exclusive_across_processes(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time\nfrom lifelong.workspace import Workspace\n"
            f"ws=Workspace({str(tmp_path)!r})\n"
            "with ws.lock('dream'):\n    print('held', flush=True)\n    time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        with pytest.raises(LockedError, match="holds the 'dream' lock"), ws.lock("dream", timeout=0.2):
            pass
    finally:
        holder.kill()
        holder.wait()
    with ws.lock("dream", timeout=5):
        pass
