"""Rollback of a run and recovery from killed processes.

``dream rollback RUN`` puts back exactly what a run wrote (its journal) and reverts the status
changes it logged; a file edited since is refused, or with ``--force`` only the run's own lines
leave MEMORY.md and DREAMS.md (:func:`keep_human_edit`). A run a kill left "running", and a
rollback a kill left "rolling_back", are resolved by the next dream or rollback
(:func:`resolve_interrupted`), which holds the dream lock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lifelong.contracts import PluginContext
from lifelong.errors import InputError, LifelongError
from lifelong.journal import (
    Journal,
    RollbackConflict,
    bytes_after,
    changed_only_by_runs,
    later_edges,
    rollback,
    sha256,
    unapply,
)

from .memory_file import broken_structure, item_identity, item_keys, section_scaffold_to_keep
from .record import PLUGIN, new_run_id
from .state import (
    record_rollback,
    revert_statuses,
    run_record,
    runs_with_status,
    set_run_status,
    written_hashes,
)


def _memory_and_dreams(ws: Any) -> tuple[str, str]:
    return (
        ws.relpath(ws.memory_file) if ws.memory_file.exists() else "MEMORY.md",
        ws.relpath(ws.dreams_file) if ws.dreams_file.exists() else "DREAMS.md",
    )


def keep_human_edit(ws: Any, store: Any, run_id: str, *, keep_edited: bool) -> Any:
    """The ``on_conflict`` of a rollback when files changed since the run: take only the run's own
    lines out of MEMORY.md and DREAMS.md (:func:`lifelong.journal.unapply`, a three-way revert
    against the bytes the run left), keeping every line written since. A line the run wrote that a
    human has changed since (an item corrected, a note after its key marker) is never removed: the
    rollback refuses and names it, or, with ``keep_edited`` (``--force``), keeps it and lists it in
    ``kept``. Any other file changed since (a wiki page, a report) is refused, or kept whole with
    ``keep_edited``; both are listed in ``conflicts``."""
    memory_rel, dreams_rel = _memory_and_dreams(ws)
    written = written_hashes(store)
    conflicts: list[str] = []
    kept: list[str] = []

    def refuse(what: str) -> RollbackConflict:
        return RollbackConflict(
            f"rollback of run {run_id} refused: {what}; nothing was changed "
            "(`--force` keeps what was edited and removes the rest of the run's writes)"
        )

    def on_conflict(rel: str, current: bytes, before: bytes | None) -> bytes | None:
        if rel not in (memory_rel, dreams_rel):
            if not keep_edited:
                raise refuse(f"{rel} was edited after run {run_id} wrote it")
            conflicts.append(rel)
            return current  # a human's edit to any other file is kept whole
        after = bytes_after(ws, run_id, rel)
        if after is None:
            raise RollbackConflict(
                f"rollback of run {run_id} refused: {rel} changed since, and the run's journal keeps no copy "
                "of what it wrote there, so its lines cannot be told from edits made since; nothing was changed"
            )
        decode = lambda b: b.decode("utf-8", errors="surrogateescape")  # noqa: E731
        result = unapply(
            decode(before) if before is not None else "",
            decode(after),
            decode(current),
            canon=(lambda line: item_identity(line, written)) if rel == memory_rel else None,
        )
        if result.conflicts:
            keys = item_keys(result.conflicts)
            named = (
                ", ".join(f"item {k}" for k in keys)
                if keys
                else "; ".join(repr(c.strip()[:60]) for c in result.conflicts[:3])
            )
            if not keep_edited:
                raise refuse(f"{rel}: {named} that this run wrote was edited since")
            kept.extend(f"{rel}: {k}" for k in keys or [c.strip()[:60] for c in result.conflicts])
        hold = section_scaffold_to_keep(result.current, result.drop) if rel == memory_rel else set()
        text = result.apply(hold)
        problem = broken_structure(text, decode(current)) if rel == memory_rel else None
        if problem:
            raise RollbackConflict(
                f"rollback of run {run_id} refused: putting back what it removed from {rel} would leave "
                f"{problem} (later nights wrote there since); nothing was changed"
            )
        conflicts.append(rel)
        if before is None and not text.strip():
            return None  # the run created the file and nothing else is in it now
        return text.encode("utf-8", errors="surrogateescape")

    on_conflict.conflicts = conflicts  # type: ignore[attr-defined]
    on_conflict.kept = kept  # type: ignore[attr-defined]
    return on_conflict


def undo_interrupted(ctx: PluginContext, run_id: str, summary: dict[str, Any]) -> list[str]:
    """Undo a run that was killed before it recorded its end, exactly, from its journal. A file
    holding any state the run's journal knows (before or after one of its writes: the crash may
    have come between the journal entry and the write) goes back to its bytes before the run; a
    file a human edited since keeps the edit (as a forced rollback does)."""
    ws = ctx.workspace
    journal = Journal(ws, run_id)
    restored: list[str] = []
    if journal.exists():
        known: dict[str, set[str | None]] = {}
        for e in journal.entries():
            known.setdefault(e.path, set()).update((e.before_sha, e.after_sha))
        keep = keep_human_edit(ws, ctx.store, run_id, keep_edited=True)

        def on_conflict(rel: str, current: bytes, before: bytes | None) -> bytes | None:
            if sha256(current) in known.get(rel, set()):
                return before
            return keep(rel, current, before)

        restored = rollback(ws, run_id, on_conflict=on_conflict)
    folder = ws.reports_dir / run_id
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    revert_statuses(ctx.store, run_id)
    return restored


ROLLING_BACK = "rolling_back"


@dataclass(frozen=True)
class Resolved:
    """What the start of a dream or rollback found left behind by killed processes: dream runs
    undone (ids) and interrupted rollbacks finished or not (one line each)."""

    dreams: tuple[str, ...] = ()
    rollbacks: tuple[str, ...] = ()  # interrupted rollbacks finished
    notes: tuple[str, ...] = ()


def resolve_interrupted(ctx: PluginContext) -> Resolved:
    """Find runs left "running" by a killed dream (the caller holds the dream lock, so none is
    alive) and undo each exactly (recorded as "interrupted"); then finish every rollback a kill
    left "rolling_back" (its files part restored, its statuses and record not yet written)."""
    store = ctx.store
    rows = runs_with_status(store, "running", newest_first=True)
    for row in rows:
        run_id = row["run_id"]
        restored = undo_interrupted(ctx, run_id, json.loads(row["summary"] or "{}"))
        message = f"interrupted; undone by the next command ({len(restored)} file(s) restored)"
        set_run_status(store, run_id, "interrupted", message)
        ctx.log(PLUGIN, f"run {run_id}: {message}")
    notes, finished = [], []
    for row in runs_with_status(store, ROLLING_BACK):
        run_id = row["run_id"]
        try:
            done = roll_back(ctx, row)
            finished.append(run_id)
            note = f"finished the rollback of run {run_id} that a killed process left half done: {done['message']}"
        except LifelongError as exc:
            note = (
                f"the rollback of run {run_id} was interrupted and could not be finished ({exc}); "
                f"`lifelong dream rollback {run_id} --force` finishes it keeping edits made since"
            )
        ctx.log(PLUGIN, note)
        notes.append(note)
    return Resolved(tuple(r["run_id"] for r in rows), tuple(finished), tuple(notes))


def rollback_run(host: Any, run_id: str, *, force: bool = False) -> dict[str, Any]:
    """Undo a run's writes exactly; refuse (RollbackConflict) when a file was edited since,
    unless ``force``: then keep the edit and remove only the run's own items (MEMORY.md, DREAMS.md;
    any other file changed since is kept as it is and listed in ``conflicts``). A forced rollback
    is itself a run (mode ``rollback``, status ``applied``) with its own journal and status log:
    ``dream rollback`` of its id puts back exactly what it changed. A run left "running" by a
    killed process is undone from its journal first (see :func:`resolve_interrupted`), and a
    rollback a kill left half done is finished first."""
    ctx = host.ctx
    ws = ctx.workspace
    store = ctx.store
    cfg = ctx.config(PLUGIN)
    with ws.lock("dream", timeout=float(cfg["lock_timeout_s"])):
        ws.sweep_temp_files(timeout=float(cfg["lock_timeout_s"]))
        resolved = resolve_interrupted(ctx)
        row = run_record(store, run_id)
        if row is None:
            raise InputError(f"no dream run {run_id!r} (see `lifelong dream history`)")
        # an interrupted run was undone by the recovery; its own rollback, killed half way, is
        # now finished: either way there is nothing left to restore
        if run_id in resolved.dreams or run_id in resolved.rollbacks:
            return {
                "version": 1,
                "run_id": run_id,
                "restored": [],
                "forced": force,
                "conflicts": [],
                "statuses_reverted": 0,
                "interrupted": run_id in resolved.dreams,
                "undo_run": None,
                "message": row["message"],
                "recovered": list(resolved.notes),
            }
        if row["status"] in ("rolled_back", "interrupted"):
            raise InputError(f"run {run_id} was already rolled back")
        return {**roll_back(ctx, row, force=force), "recovered": list(resolved.notes)}


def roll_back(ctx: PluginContext, row: dict[str, Any], *, force: bool = False) -> dict[str, Any]:
    """The rollback of run ``row`` (the caller holds the dream lock). Before the first file is
    restored the run is recorded as "rolling_back", with what the rollback decided (forced or not,
    the journal of its own writes, the status it undoes): a kill from there on leaves a record
    :func:`resolve_interrupted` finishes with the same decisions (restoring is idempotent: a file
    already back to its bytes before the run is left alone)."""
    ws = ctx.workspace
    store = ctx.store
    run_id = row["run_id"]
    summary = json.loads(row["summary"] or "{}")
    state = summary.get("rollback") if row["status"] == ROLLING_BACK else None
    resuming = state is not None
    if state is not None:
        force = force or bool(state["force"])
    journal = Journal(ws, run_id)
    restored: list[str] = []
    conflicts: list[str] = []
    later: list[str] = []  # files later runs wrote since: their output is kept, not a conflict
    kept: list[str] = []  # lines the run wrote that a human edited since, kept (forced)
    by_later: set[str] = set()  # files only later runs changed since: their output is kept
    if journal.exists():
        last_after: dict[str, str | None] = {e.path: e.after_sha for e in journal.entries()}
        edges: dict[str, dict[str, set[str]]] | None = None  # the other journals, read once if needed
        for rel, after_sha in last_after.items():
            path = ws.root / rel
            if after_sha and path.exists():
                now_sha = sha256(path.read_bytes())
                if now_sha == after_sha:
                    continue
                edges = later_edges(ws, run_id) if edges is None else edges
                if changed_only_by_runs(edges.get(rel, {}), after_sha, now_sha):
                    by_later.add(rel)
    if state is None:
        wants_undo = force or (journal.exists() and bool(by_later))
        state = {
            "force": force,
            "undo": f"undo-{new_run_id(ctx.now())}" if wants_undo else None,
            "status": row["status"],
            "message": row["message"],
        }
        # on record before the first file is restored (see the docstring)
        set_run_status(
            store, run_id, ROLLING_BACK, "rollback in progress", json.dumps({**summary, "rollback": state})
        )
    undo = Journal(ws, state["undo"], plugin=PLUGIN) if state["undo"] else None
    if journal.exists():
        surgical = keep_human_edit(ws, store, run_id, keep_edited=force)
        # a rollback killed half way already wrote some files through its undo journal: those hold
        # the bytes it wrote there (reverting them again would put back twice what the run removed)
        done = {e.path: e.after_sha for e in undo.entries()} if resuming and undo is not None else {}

        def on_conflict(rel: str, current: bytes, before: bytes | None) -> bytes | None:
            if rel in done and sha256(current) == done[rel]:
                return current
            if rel not in by_later and not force:
                raise RollbackConflict(
                    f"{rel} was edited after run {run_id} wrote it; rollback would lose that edit "
                    "(use --force to keep the edit and remove only this run's items)"
                )
            return surgical(rel, current, before)

        try:
            restored = rollback(ws, run_id, on_conflict=on_conflict, record_in=undo)
        except RollbackConflict:
            if resuming:  # files may be part restored: it stays on record as rolling back
                raise
            # nothing was restored (rollback plans every file before writing one): as it was
            set_run_status(store, run_id, state["status"], state["message"], row["summary"])
            raise
        conflicts = [r for r in surgical.conflicts if r not in by_later]
        later = [r for r in surgical.conflicts if r in by_later]
        kept = list(surgical.kept)
    folder = ws.reports_dir / run_id
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    reverted = revert_statuses(store, run_id, log_as=undo.run_id if undo else None)
    message = "rolled back" + (
        f" (forced: edits made since kept in {', '.join(conflicts)})" if conflicts else ""
    )
    if kept:
        message += f"; kept because edited since: {', '.join(kept)}"
    if later:
        message += f"; later runs' output kept in {', '.join(sorted(set(later)))}"
    undo_record = None
    if undo is not None:
        message += f"; `lifelong dream rollback {undo.run_id}` undoes this rollback"
        undo_record = (
            undo.run_id,
            ctx.now().isoformat(timespec="seconds"),
            ctx.now().isoformat(timespec="seconds"),
            f"forced rollback of {run_id}",
            json.dumps(
                {
                    "undoes": run_id,
                    "undone_status": state["status"],
                    "undone_message": state["message"],
                    "conflicts": conflicts,
                    "journal": f".lifelong/journal/{undo.run_id}" if undo.exists() else None,
                }
            ),
        )
    # rolling back a forced rollback: the run it undid stands again
    stands_again = (
        (summary.get("undone_status") or "ok", summary.get("undone_message"), summary["undoes"])
        if summary.get("undoes")
        else None
    )
    summary.pop("rollback", None)
    record_rollback(store, run_id, message, summary, undo_record=undo_record, stands_again=stands_again)
    return {
        "version": 1,
        "run_id": run_id,
        "restored": restored,
        "forced": force,
        "conflicts": conflicts,
        "kept": kept,
        "statuses_reverted": reverted,
        "interrupted": False,
        "undo_run": undo.run_id if undo is not None else None,
        "message": message,
    }
