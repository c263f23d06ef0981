"""Journaled writes: every automatic write records the exact previous bytes so a run can be undone,
and an entry in the audit log (:mod:`lifelong.audit`).

A journal belongs to one run (``run_id``) and lives in ``.lifelong/journal/<run_id>/``:
``entries.json`` lists, in order, each written path with the sha256 of the bytes before and after,
and ``prev-N.bin`` holds the previous bytes (absent when the file did not exist).

:func:`rollback` restores every file to its state before the run, newest entry first. When a file
no longer holds the bytes the run wrote (a human edited it since), rollback refuses, unless the
caller passes ``on_conflict``: a function given (path, current, before) that returns the
bytes to keep (the dreaming plugin uses it to keep the human edit and remove only its own items).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import audit
from .errors import LifelongError, WorkspaceError
from .workspace import Workspace, atomic_write


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RollbackConflict(LifelongError):
    """A file changed after the run wrote it; rolling back would lose someone's edit."""


@dataclass(frozen=True)
class JournalEntry:
    path: str
    before_sha: str | None
    after_sha: str | None  # None: the write removed the file (see Journal.remove)
    blob: str | None


class Journal:
    """The journal of one run. ``plugin`` names the writer in the audit log."""

    def __init__(self, workspace: Workspace, run_id: str, *, plugin: str = ""):
        if not run_id or "/" in run_id or run_id.startswith("."):
            raise WorkspaceError(f"invalid run id {run_id!r}")
        self.workspace = workspace
        self.run_id = run_id
        self.plugin = plugin
        self.dir = workspace.state_dir / "journal" / run_id

    @property
    def entries_path(self) -> Path:
        return self.dir / "entries.json"

    def entries(self) -> list[JournalEntry]:
        if not self.entries_path.exists():
            return []
        return [JournalEntry(**e) for e in json.loads(self.entries_path.read_text("utf-8"))]

    def exists(self) -> bool:
        return self.entries_path.exists()

    def remove(self, path: Path, *, action: str = "remove") -> None:
        """Delete ``path`` (inside the workspace), journaling its bytes so a rollback recreates it."""
        path = self.workspace.resolve(path)
        if not path.exists():
            return
        before = path.read_bytes()
        self.dir.mkdir(parents=True, exist_ok=True)
        entries = self.entries()
        blob = f"prev-{len(entries)}.bin"
        atomic_write(self.dir / blob, before)
        entries.append(JournalEntry(self.workspace.relpath(path), sha256(before), None, blob))
        atomic_write(self.entries_path, "[\n" + ",\n".join(json.dumps(e.__dict__) for e in entries) + "\n]")
        rel = entries[-1].path
        path.unlink()
        audit.record(
            self.workspace,
            path=rel,
            action=action,
            run_id=self.run_id,
            plugin=self.plugin,
            before_sha=entries[-1].before_sha,
            after_sha=None,
        )

    def write(self, path: Path, data: bytes | str, *, action: str = "write") -> None:
        """Atomically write ``data`` to ``path`` (inside the workspace), journaling the old bytes
        and recording ``action`` in the audit log."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        path = self.workspace.resolve(path)
        before = path.read_bytes() if path.exists() else None
        if before == data:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        entries = self.entries()
        blob = None
        if before is not None:
            blob = f"prev-{len(entries)}.bin"
            atomic_write(self.dir / blob, before)
        entries.append(
            JournalEntry(
                self.workspace.relpath(path),
                sha256(before) if before is not None else None,
                sha256(data),
                blob,
            )
        )
        # the journal entry lands before the file changes: a crash between the two leaves an
        # entry whose after_sha does not match, which rollback reports instead of guessing.
        # one entry a line, each encoded by json's C encoder (indent= takes the pure-Python path,
        # which made a 1,000-file run spend ~10 s re-encoding this growing list)
        atomic_write(self.entries_path, "[\n" + ",\n".join(json.dumps(e.__dict__) for e in entries) + "\n]")
        atomic_write(path, data)
        entry = entries[-1]
        audit.record(
            self.workspace,
            path=entry.path,
            action=action if before is not None else "create",
            run_id=self.run_id,
            plugin=self.plugin,
            before_sha=entry.before_sha,
            after_sha=entry.after_sha,
        )


def later_writes(workspace: Workspace, run_id: str) -> dict[str, set[str]]:
    """path -> the checksums that journaled runs *other than* ``run_id`` wrote to it: a file whose
    bytes are one of these was last changed by the suite (a later night), not by a human."""
    out: dict[str, set[str]] = {}
    folder = workspace.state_dir / "journal"
    if not folder.is_dir():
        return out
    for entries_path in folder.glob("*/entries.json"):
        if entries_path.parent.name == run_id:
            continue
        try:
            rows = json.loads(entries_path.read_text("utf-8"))
        except (OSError, ValueError):
            continue  # a journal being written, or left torn by a kill: no evidence either way
        for row in rows:
            if isinstance(row, dict) and row.get("after_sha") and row.get("path"):
                out.setdefault(row["path"], set()).add(row["after_sha"])
    return out


def rollback(
    workspace: Workspace,
    run_id: str,
    *,
    on_conflict: Callable[[str, bytes, bytes | None], bytes | None] | None = None,
    record_in: Journal | None = None,
) -> list[str]:
    """Undo every write of ``run_id``. Returns the paths restored. Raises RollbackConflict (and
    changes nothing) when a file was edited since and no ``on_conflict`` resolves it. With
    ``record_in``, the rollback's own writes go through it, so the rollback can be undone too."""
    journal = Journal(workspace, run_id)
    entries = journal.entries()
    if not entries:
        raise WorkspaceError(f"no journal for run {run_id!r}")
    # earliest 'before' and latest 'after' per path
    first: dict[str, JournalEntry] = {}
    last: dict[str, JournalEntry] = {}
    for e in entries:
        first.setdefault(e.path, e)
        last[e.path] = e
    plan: list[tuple[Path, bytes | None]] = []
    for rel, e_last in last.items():
        path = workspace.resolve(rel)
        current = path.read_bytes() if path.exists() else None
        e_first = first[rel]
        before = (journal.dir / e_first.blob).read_bytes() if e_first.blob else None
        if current is not None and sha256(current) == e_last.after_sha:
            plan.append((path, before))
            continue
        if current is None and e_last.after_sha is None:
            plan.append((path, before))  # the run removed it: recreate
            continue
        if current is not None and before is not None and sha256(current) == e_first.before_sha:
            continue  # already restored
        if current is None and before is None:
            continue  # never created (the run was killed between its journal entry and the write) or gone
        if on_conflict is None or current is None:
            raise RollbackConflict(
                f"{rel} was edited after run {run_id} wrote it; rollback would lose that edit "
                "(use --force to keep the edit and remove only this run's items)"
            )
        resolved = on_conflict(rel, current, before)
        plan.append((path, resolved))
    restored = []
    for path, data in plan:
        if record_in is not None:
            rel = workspace.relpath(path) if path.exists() else str(path.relative_to(workspace.root))
            if data is None:
                record_in.remove(path, action="rollback-delete")
            else:
                record_in.write(path, data, action="rollback")
            restored.append(rel)
            continue
        before_sha = sha256(path.read_bytes()) if path.exists() else None
        if data is None:
            if path.exists():
                path.unlink()
        else:
            atomic_write(path, data)
        rel = workspace.relpath(path) if path.exists() else str(path.relative_to(workspace.root))
        restored.append(rel)
        audit.record(
            workspace,
            path=rel,
            action="rollback" if data is not None else "rollback-delete",
            run_id=run_id,
            plugin=journal.plugin,
            before_sha=before_sha,
            after_sha=sha256(data) if data is not None else None,
        )
    done = journal.dir / "rolled_back"
    atomic_write(done, "\n".join(restored))
    return restored
