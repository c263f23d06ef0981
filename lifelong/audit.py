"""The audit log: one JSON line per automatic durable write, in ``.lifelong/audit.jsonl``.

Every file write that goes through :class:`lifelong.journal.Journal` (promotions, diary entries,
reports, wiki pages, captured notes, flushes) and every rollback is recorded here with the time,
the run, the file, the action and the sha256 of the bytes before and after; writes that change no
file (a supersede closing a validity interval in the index) call :func:`record` themselves.
``lifelong audit`` prints it. Lines are appended with O_APPEND (one ``write`` each), so concurrent
writers never interleave within a line; a line that cannot be parsed (a crash mid-append) is
skipped by :func:`read` and reported.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from . import clock
from .workspace import Workspace

AUDIT_NAME = "audit.jsonl"


@dataclass(frozen=True)
class AuditEntry:
    time: str  # ISO 8601, UTC
    run_id: str | None
    path: str  # workspace-relative (a file) or a resource name (index:chunks)
    action: str  # write | create | delete | rollback | supersede | ...
    plugin: str = ""
    before_sha: str | None = None
    after_sha: str | None = None
    detail: str = ""


def audit_path(workspace: Workspace) -> Path:
    return workspace.state_dir / AUDIT_NAME


def record(
    workspace: Workspace,
    *,
    path: str,
    action: str,
    run_id: str | None = None,
    plugin: str = "",
    before_sha: str | None = None,
    after_sha: str | None = None,
    detail: str = "",
) -> AuditEntry:
    """Append one entry to the workspace's audit log and return it."""
    entry = AuditEntry(
        clock.now().astimezone().isoformat(timespec="seconds"),
        run_id,
        path,
        action,
        plugin,
        before_sha,
        after_sha,
        detail,
    )
    line = (json.dumps(asdict(entry), ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    workspace.ensure_state()
    fd = os.open(audit_path(workspace), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return entry


def read(workspace: Workspace) -> tuple[list[AuditEntry], int]:
    """Every entry, oldest first, and the number of unreadable lines skipped."""
    path = audit_path(workspace)
    if not path.exists():
        return [], 0
    entries: list[AuditEntry] = []
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                entries.append(AuditEntry(**json.loads(line)))
            except (ValueError, TypeError):
                bad += 1
    return entries, bad
