"""Every journaled write and rollback lands in the audit log; `lifelong audit` prints it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lifelong import audit
from lifelong.cli import cli
from lifelong.journal import Journal, rollback, sha256
from lifelong.workspace import append_text


def test_journal_writes_and_rollbacks_are_audited(make_workspace) -> None:
    ws = make_workspace({"MEMORY.md": "# M\n"})
    journal = Journal(ws, "run-1", plugin="dreaming")
    journal.write(ws.root / "MEMORY.md", "# M\n- item\n")
    journal.write(ws.root / "DREAMS.md", "# diary\n")
    rollback(ws, "run-1")
    entries, bad = audit.read(ws)
    assert bad == 0
    assert [(e.action, e.path) for e in entries] == [
        ("write", "MEMORY.md"),
        ("create", "DREAMS.md"),
        ("rollback", "MEMORY.md"),
        ("rollback-delete", "DREAMS.md"),
    ]
    assert entries[0].before_sha == sha256(b"# M\n") and entries[0].after_sha == sha256(b"# M\n- item\n")
    assert entries[2].after_sha == sha256(b"# M\n") and all(e.run_id == "run-1" for e in entries)
    assert entries[0].plugin == "dreaming"


def test_a_torn_line_is_skipped_and_counted(make_workspace) -> None:
    ws = make_workspace()
    audit.record(ws, path="index:chunks", action="supersede", detail="closed 3")
    with open(audit.audit_path(ws), "a", encoding="utf-8") as fh:
        fh.write('{"time": "2026-')
    entries, bad = audit.read(ws)
    assert [e.action for e in entries] == ["supersede"] and bad == 1


def test_audit_command(make_workspace) -> None:
    ws = make_workspace({"MEMORY.md": "# M\n"})
    Journal(ws, "run-7", plugin="wiki").write(ws.root / "wiki" / "index.md", "# Wiki\n")
    runner = CliRunner()
    out = runner.invoke(cli, ["--workspace", str(ws.root), "audit"], catch_exceptions=False)
    assert (
        out.exit_code == 0
        and "create" in out.output
        and "wiki/index.md" in out.output
        and "run-7" in out.output
    )
    data = json.loads(
        runner.invoke(cli, ["--workspace", str(ws.root), "audit", "--json", "--run", "nope"]).output
    )
    assert data == {"version": 1, "entries": [], "unreadable_lines": 0}


def test_append_text_keeps_every_byte() -> None:
    assert append_text("a\nb", "c") == "a\nb\nc\n"
    assert append_text("a\r\n", "c\n") == "a\r\nc\n"
    assert append_text("", "c") == "c\n"
    assert append_text("x\n", "") == "x\n"
