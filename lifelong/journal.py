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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    # the bytes the write left (journals from before 2026-11 have none): what a rollback needs to
    # tell the run's own lines from lines changed since (see :func:`unapply`)
    after_blob: str | None = None


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

    @property
    def rolled_back(self) -> bool:
        """Whether :func:`rollback` undid this run (it leaves a ``rolled_back`` mark)."""
        return (self.dir / "rolled_back").exists()

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
        after_blob = f"next-{len(entries)}.bin"
        atomic_write(self.dir / after_blob, data)
        entries.append(
            JournalEntry(
                self.workspace.relpath(path),
                sha256(before) if before is not None else None,
                sha256(data),
                blob,
                after_blob,
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


def _other_journals(workspace: Workspace, run_id: str) -> list[tuple[Path, list[dict[str, Any]]]]:
    """(folder, entry rows) of every journal but ``run_id``'s; a journal being written, or left
    torn by a kill, is skipped (no evidence either way)."""
    folder = workspace.state_dir / "journal"
    out: list[tuple[Path, list[dict[str, Any]]]] = []
    if not folder.is_dir():
        return out
    for entries_path in sorted(folder.glob("*/entries.json")):
        if entries_path.parent.name == run_id:
            continue
        try:
            rows = json.loads(entries_path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        out.append((entries_path.parent, [r for r in rows if isinstance(r, dict) and r.get("path")]))
    return out


def later_edges(workspace: Workspace, run_id: str) -> dict[str, dict[str, set[str]]]:
    """path -> before-checksum -> the after-checksums journaled runs other than ``run_id`` wrote
    over those bytes: every journal read once, for :func:`changed_only_by_runs`."""
    edges: dict[str, dict[str, set[str]]] = {}
    for _folder, rows in _other_journals(workspace, run_id):
        for row in rows:
            if row.get("before_sha") and row.get("after_sha"):
                edges.setdefault(row["path"], {}).setdefault(row["before_sha"], set()).add(row["after_sha"])
    return edges


def changed_only_by_runs(edges: dict[str, set[str]], since: str, now: str) -> bool:
    """Whether a file went from the bytes hashing to ``since`` (what a run left) to ``now`` through
    journaled writes of other runs alone (``edges``: that file's entry of :func:`later_edges`):
    each write's before-checksum is the previous one's after-checksum. A human edit anywhere
    between two nights breaks the chain (its bytes were never a run's before), so it is not
    mistaken for a later night's output."""
    seen, todo = {since}, [since]
    while todo:
        sha = todo.pop()
        if sha == now:
            return True
        for nxt in edges.get(sha, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def bytes_after(workspace: Workspace, run_id: str, rel: str) -> bytes | None:
    """The bytes run ``run_id`` left in ``rel`` (its last write): from its own journal, or, for a
    journal from before those were kept, from another run's copy of the same bytes (a later run
    journals the bytes it found). None when no copy exists."""
    journal = Journal(workspace, run_id)
    mine = [e for e in journal.entries() if e.path == rel]
    if not mine or mine[-1].after_sha is None:
        return None
    last = mine[-1]
    if last.after_blob and (journal.dir / last.after_blob).exists():
        return (journal.dir / last.after_blob).read_bytes()
    for folder, rows in _other_journals(workspace, run_id):
        for row in rows:
            for sha_key, blob_key in (("before_sha", "blob"), ("after_sha", "after_blob")):
                if (
                    row.get(sha_key) == last.after_sha
                    and row.get(blob_key)
                    and (folder / row[blob_key]).exists()
                ):
                    data: bytes = (folder / row[blob_key]).read_bytes()
                    if sha256(data) == last.after_sha:
                        return data
    return None


@dataclass(frozen=True)
class Unapplied:
    """What :func:`unapply` decided for ``current``'s lines: the line numbers (0-based) that go
    (the run's own lines, still as it wrote them), the lines that come back (each hunk the run
    removed: where in ``current``, in which order, which lines) and the lines the run wrote that
    were changed since (each as the run wrote it): those stay as they are now. :meth:`apply`
    makes the text; a caller may first keep some of ``drop`` (a plugin keeps a section's fences
    while later lines stand inside it)."""

    current: tuple[str, ...]
    drop: frozenset[int]
    inserts: tuple[tuple[int, int, tuple[str, ...]], ...] = ()
    conflicts: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str:
        return self.apply()

    def apply(self, keep: frozenset[int] | set[int] = frozenset()) -> str:
        """The text with the run's change taken out (lines in ``keep`` stay although dropped)."""
        inserts = sorted(self.inserts, key=lambda x: (x[0], x[1]))
        out: list[str] = []
        k = 0
        for j, line in enumerate(self.current):
            while k < len(inserts) and inserts[k][0] == j:
                out.extend(inserts[k][2])
                k += 1
            if j not in self.drop or j in keep:
                out.append(line)
        for _at, _order, lines in inserts[k:]:
            out.extend(lines)
        return "".join(out)


def unapply(before: str, after: str, current: str, *, canon: Callable[[str], str] | None = None) -> Unapplied:
    """Take one run's change (``before`` -> ``after``) out of ``current``, keeping every change
    made since: a three-way revert by lines, as ``git revert`` does. Each line the run added goes
    only where it still stands exactly as the run wrote it; a line the run removed comes back
    beside the lines that surrounded it. A line the run wrote that has been changed since is never
    removed, nor are the lines around it replaced: it is returned in ``conflicts`` and kept as it is
    now. A line the run wrote that has been deleted since stays deleted. ``canon`` maps a line to
    what counts as "the same line" (the dreaming plugin maps an item the suite re-rendered, its
    text unchanged, to its key). Pure; lines keep their line ends."""
    canon = canon or (lambda line: line)
    a_lines, b_lines, c_lines = (t.splitlines(keepends=True) for t in (after, before, current))
    ka, kb, kc = ([canon(x) for x in lines] for lines in (a_lines, b_lines, c_lines))
    to_current: dict[int, int] = {}
    deleted_since: set[int] = set()
    import difflib  # only when a run is reverted: a search never is

    for tag, i1, i2, j1, _j2 in difflib.SequenceMatcher(None, ka, kc, autojunk=False).get_opcodes():
        if tag == "equal":
            to_current.update({i1 + k: j1 + k for k in range(i2 - i1)})
        elif tag == "delete":
            deleted_since.update(range(i1, i2))
    drop: set[int] = set()
    inserts: list[tuple[int, int, tuple[str, ...]]] = []
    conflicts: list[str] = []

    def position(i: int) -> int:
        """Where in ``current`` the run's line ``i`` (or the end) stands: after the nearest line
        before it that is still there, else before the nearest one after it, else the start."""
        for k in range(i - 1, -1, -1):
            if k in to_current:
                return to_current[k] + 1
        for k in range(i, len(a_lines)):
            if k in to_current:
                return to_current[k]
        return 0

    ops = difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes()
    for order, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        changed_since = [i for i in range(i1, i2) if i not in to_current and i not in deleted_since]
        if tag == "delete":  # lines the run added: remove each one that stands as written
            drop.update(to_current[i] for i in range(i1, i2) if i in to_current)
            conflicts.extend(a_lines[i] for i in changed_since)
            continue
        if changed_since:  # the run replaced lines that were edited since: keep today's
            conflicts.extend(a_lines[i] for i in changed_since)
            continue
        if tag == "replace" and all(i in deleted_since for i in range(i1, i2)):
            continue  # what the run wrote there was deleted since: nothing to bring back over
        drop.update(to_current[i] for i in range(i1, i2) if i in to_current)
        at = to_current[i1] if i1 < i2 and i1 in to_current else position(i1)
        inserts.append((at, order, tuple(b_lines[j1:j2])))
    return Unapplied(
        tuple(c_lines), frozenset(drop), tuple(inserts), tuple(x.rstrip("\n") for x in conflicts)
    )


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
