"""One consolidation run: lock -> light -> REM -> deep (through the ``dreaming_phase`` hook, so
other plugins can join each phase) -> save state -> ``after_consolidation`` -> diary -> reports ->
history row -> unlock. Also rollback, history and explain.

Every file a run writes (MEMORY.md, DREAMS.md, its reports) goes through
:class:`lifelong.journal.Journal` under the run id; the database changes it makes to candidates are
logged in ``dream_status_log`` so a rollback reverts them too.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from lifelong.errors import ConfigError, InputError, LifelongError, PluginError
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

from . import diary
from .candidates import CandidatePool, LightResult, light
from .memory_file import broken_structure, item_hash, item_identity, item_keys, section_scaffold_to_keep
from .promotion import DeepResult, build_signals, deep, written_hashes
from .rem import RemResult, apply_rem, rem
from .scoring import ScoreConfig, score
from .screening import SafetyTally, neutralise, neutralise_json

PLUGIN = "dreaming"
PHASES = ("light", "rem", "deep")
WATERMARK_KEY = "event_watermark"


@dataclass(frozen=True)
class Saved:
    """What saving a run with material wrote: the diary entry's source (model | offline, None:
    no entry) and the folder of its reports."""

    material: bool
    diary_source: str | None = None
    report_dir: str | None = None


@dataclass
class DreamRun:
    """One run: its inputs, each phase's frozen result as the coordinator records it
    (:meth:`record`), the reports, the safety tally and how it ended. Third-party
    ``dreaming_phase`` implementations get it too: ``run_id``, ``now``, ``mode``, ``dry_run``,
    ``journal`` for reversible writes, the reports of earlier phases and, after deep, ``promoted``."""

    run_id: str
    now: dt.datetime
    config: dict[str, Any]
    backfill: bool = False
    dry_run: bool = False
    journal: Journal | None = None
    model: str | None = None
    llm_kwargs: dict[str, Any] = field(default_factory=dict)
    event_watermark: float = 0.0
    light_result: LightResult | None = None
    rem_result: RemResult | None = None
    deep_result: DeepResult | None = None
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_reports: dict[str, list[Any]] = field(default_factory=dict)
    completed: list[str] = field(default_factory=list)
    safety: SafetyTally = field(default_factory=SafetyTally)
    status: str = "running"
    message: str = ""
    elapsed_ms: float = 0.0
    saved: Saved | None = None
    recovered: tuple[str, ...] = ()  # what the run found a killed rollback left, and did about it

    def record(self, phase: str, result: LightResult | RemResult | DeepResult) -> dict[str, Any]:
        """The coordinator's one place to assemble a phase's result into the run."""
        if isinstance(result, LightResult):
            self.light_result = result
        elif isinstance(result, RemResult):
            self.rem_result = result
        else:
            self.deep_result = result
            self.safety.refused += len(result.plan.refused_keys)
            self.safety.refused_keys.extend(result.plan.refused_keys)
            self.safety.secrets_redacted += result.plan.secrets_redacted
        self.reports[phase] = result.report
        self.completed.append(phase)
        return result.report

    @property
    def mode(self) -> str:
        return "backfill" if self.backfill else "nightly"

    # read-only views of the phase results (what the summary, diary, rollback and tests read)
    @property
    def pool(self) -> CandidatePool | None:
        return self.light_result.pool if self.light_result else None

    @property
    def reader(self) -> Any:
        return self.light_result.reader if self.light_result else None

    @property
    def touched(self) -> frozenset[str]:
        return self.light_result.touched if self.light_result else frozenset()

    @property
    def event_watermark_next(self) -> float:
        return self.light_result.event_watermark_next if self.light_result else 0.0

    @property
    def themes(self) -> tuple[Any, ...]:
        return self.rem_result.themes if self.rem_result else ()

    @property
    def rem_summary(self) -> str:
        return self.rem_result.summary if self.rem_result else ""

    @property
    def scored(self) -> list[Any]:
        return self.deep_result.scores.scored if self.deep_result else []

    @property
    def fact_groups(self) -> dict[str, list[str]]:
        return self.deep_result.scores.fact_groups if self.deep_result else {}

    @property
    def joined(self) -> dict[str, str]:
        return self.deep_result.scores.joined if self.deep_result else {}

    @property
    def promoted(self) -> list[dict[str, Any]]:
        return self.deep_result.promoted if self.deep_result else []

    @property
    def compaction(self) -> Any:
        write = self.deep_result.write if self.deep_result else None
        return write.compaction if write else None

    @property
    def memory_regions(self) -> list[str]:
        write = self.deep_result.write if self.deep_result else None
        return write.regions if write else []

    @property
    def item_hashes(self) -> dict[str, str]:
        """key -> hash of the text written for each promoted item."""
        if self.deep_result is None:
            return {}
        return {p.key: item_hash(p.live.text) for p in self.deep_result.plan.promote}

    @property
    def human_edits(self) -> list[dict[str, str]]:
        return self.deep_result.human_edits if self.deep_result else []

    @property
    def material(self) -> bool:
        return self.saved.material if self.saved else False

    @property
    def diary_source(self) -> str | None:
        return self.saved.diary_source if self.saved else None

    @property
    def report_dir(self) -> str | None:
        return self.saved.report_dir if self.saved else None

    def as_json(self) -> dict[str, Any]:
        """The run as JSON, every string neutralised (secrets redacted, instruction-like lines
        withheld): what ``lifelong dream --json`` prints."""
        deep = self.reports.get("deep", {})
        data = {
            "version": 1,
            "run_id": self.run_id,
            "status": self.status,
            "mode": self.mode,
            "dry_run": self.dry_run,
            "now": self.now.isoformat(timespec="seconds"),
            "elapsed_ms": round(self.elapsed_ms, 1),
            "promoted": self.promoted,
            "dropped": deep.get("dropped", []),
            "blocked": deep.get("blocked", []),
            "warnings": deep.get("warnings", []),
            "compaction": deep.get("compaction"),
            "report_dir": self.report_dir,
            "diary": self.diary_source,
            "message": self.message,
            "phases": self.reports,
            "extra_phase_reports": self.extra_reports,
            "safety": self.safety.as_json(),
            "recovered": list(self.recovered),
        }
        return neutralise_json(json.loads(json.dumps(data, default=str)))


def new_run_id(now: dt.datetime) -> str:
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def run_phase(ctx: Any, phase: str, run: Any) -> dict[str, Any] | None:
    """The plugin's own ``dreaming_phase``: runs the phase (light and deep plan and apply; REM
    plans, then :func:`rem.apply_rem` changes the pool) and records its frozen result on the run."""
    if not isinstance(run, DreamRun) or phase not in PHASES:
        return None
    if phase == "light":
        return run.record(phase, light(ctx, run))
    if run.light_result is None:
        raise PluginError(f"phase {phase} needs the light phase to have run first")
    pool, reader = run.light_result.pool, run.light_result.reader
    if phase == "rem":
        result = rem(ctx, run, pool, reader)
        apply_rem(pool, result.plan, run.run_id, run.now.timestamp())
        return run.record(phase, result)
    return run.record(phase, deep(ctx, run))


# ---------------------------------------------------------------------------------------------
# the run


def read_meta(store: Any, key: str) -> str | None:
    row = store.conn.execute("SELECT value FROM dream_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def write_meta(store: Any, key: str, value: str) -> None:
    with store.lock:
        store.conn.execute("INSERT OR REPLACE INTO dream_meta(key, value) VALUES (?, ?)", (key, value))
        store.conn.commit()


def run_dream(
    host: Any,
    *,
    dry_run: bool = False,
    backfill: bool = False,
    llm_kwargs: dict[str, Any] | None = None,
) -> DreamRun:
    """Run light, REM and deep once, now (``ctx.now()``, so ``--now`` and freezegun apply)."""
    if not host.enabled(PLUGIN):
        raise ConfigError(
            "the dreaming plugin is disabled (plugins.dreaming.enabled: false in lifelong.yaml)"
        )
    ctx = host.ctx
    ws = ctx.workspace
    cfg = ctx.config(PLUGIN)
    started = time.monotonic()
    with ws.lock("dream", timeout=float(cfg["lock_timeout_s"])):
        ws.sweep_temp_files(timeout=float(cfg["lock_timeout_s"]))
        store = ctx.store
        resolved = resolve_interrupted(ctx) if not dry_run else Resolved()
        now = ctx.now()
        run_id = new_run_id(now)
        run = DreamRun(
            run_id,
            now,
            cfg,
            backfill=backfill,
            dry_run=dry_run,
            journal=None if dry_run else Journal(ws, run_id, plugin=PLUGIN),
            model=(ws.config.get("llm") or {}).get("model"),
            llm_kwargs=dict(llm_kwargs or {}),
            event_watermark=float(read_meta(store, WATERMARK_KEY) or 0.0),
            recovered=resolved.notes,
        )
        if not dry_run:
            # the run is on record (status "running", its journal named) before its first write:
            # a crash from here on leaves a run the next dream or `dream rollback` finds and undoes
            record_history(store, run)
        faults = len(host.faults)
        for phase in PHASES:
            results = ctx.hook("dreaming_phase", ctx=ctx, phase=phase, run=run)
            mine = run.reports.get(phase)
            others = [r for r in results if r is not mine]
            if others:
                run.extra_reports[phase] = others
            if phase not in run.completed:
                error = next(
                    (f["error"] for f in host.faults[faults:] if f["plugin"] == PLUGIN),
                    "the phase did not run",
                )
                run.status = "failed"
                run.message = f"{phase} phase failed: {error}"
                run.elapsed_ms = (time.monotonic() - started) * 1000
                if not dry_run:
                    record_history(store, run)
                hint = (
                    " (MEMORY.md may have been written: `lifelong dream rollback` undoes it)"
                    if phase == "deep"
                    else ""
                )
                raise PluginError(
                    f"dream run {run_id} failed in the {phase} phase: {error}; "
                    f"details in .lifelong/logs/{PLUGIN}.log{hint}"
                )
        if dry_run:
            run.status = "dry-run"
            run.elapsed_ms = (time.monotonic() - started) * 1000
            return run
        try:
            finalize(ctx, run)
        except LifelongError:
            raise
        except Exception as exc:
            run.status = "failed"
            run.message = f"saving the run failed: {type(exc).__name__}: {exc}"
            run.elapsed_ms = (time.monotonic() - started) * 1000
            record_history(store, run)
            ctx.log(PLUGIN, f"run {run_id}: {run.message}")
            raise PluginError(
                f"dream run {run_id}: {run.message} (`lifelong dream rollback {run_id}` undoes its file writes)"
            ) from exc
        run.elapsed_ms = (time.monotonic() - started) * 1000
        record_history(store, run)
    return run


def has_material(run: DreamRun) -> bool:
    pool = run.pool
    assert pool is not None
    new = any(c.is_new for c in pool.candidates.values())
    compaction = run.compaction is not None and run.compaction.changed
    # a line restated on a quiet night is material too: its occurrence must be kept
    return bool(
        new or pool.new_signals or pool.new_occurrences or pool.status_changes or run.promoted or compaction
    )


def finalize(ctx: Any, run: DreamRun) -> None:
    store = ctx.store
    pool = run.pool
    assert pool is not None
    watermark = (
        {WATERMARK_KEY: repr(run.event_watermark_next)}
        if run.event_watermark_next > run.event_watermark
        else {}
    )
    if not has_material(run):
        run.saved = Saved(material=False)
        for key, value in watermark.items():  # events that produced nothing: only the watermark moves
            write_meta(store, key, value)
        run.status = "nothing"
        run.message = "no new material"
        return
    run.saved = Saved(material=True)
    # the recall-event watermark moves in the same transaction as the signals it produced
    pool.save(store, run.run_id, meta=watermark, item_hashes=run.item_hashes)
    ctx.hook("after_consolidation", ctx=ctx, run=run)
    source = None
    if run.config["diary"]:
        try:
            source = diary.write_entry(ctx, run)
        except LifelongError as exc:  # a broken DREAMS.md must not lose the night's work
            run.message = f"diary not written: {exc}"
            ctx.log(PLUGIN, f"run {run.run_id}: {run.message}")
    run.saved = Saved(True, source, write_reports(ctx, run))
    run.status = "ok"


def write_reports(ctx: Any, run: DreamRun) -> str:
    """Write the run's reports (journaled); returns their folder, workspace-relative."""
    ws = ctx.workspace
    folder = ws.reports_dir / run.run_id
    assert run.journal is not None
    # secrets redacted and instruction-like lines withheld in every string a report carries
    reports = neutralise_json(json.loads(json.dumps(run.reports, default=str)), run.safety)
    for phase, report in reports.items():
        run.journal.write(
            folder / f"{phase}.json", json.dumps(report, indent=1, ensure_ascii=False, default=str)
        )
    if run.extra_reports:
        extra = neutralise_json(json.loads(json.dumps(run.extra_reports, default=str)), run.safety)
        run.journal.write(folder / "extra.json", json.dumps(extra, indent=1, ensure_ascii=False, default=str))
    run.journal.write(folder / "report.md", neutralise(render_report(run, reports)))
    return f".lifelong/reports/{run.run_id}"


def render_report(run: DreamRun, reports: dict[str, Any] | None = None) -> str:
    reports = run.reports if reports is None else reports
    light, rem, deep_r = (reports.get(p, {}) for p in PHASES)
    promoted = deep_r.get("promoted", run.promoted)
    lines = [
        f"# Dream run {run.run_id}",
        "",
        f"- when: {run.now.isoformat(timespec='minutes')} ({run.mode})",
        f"- light: {len(light.get('dailies', []))} dailies, {light.get('snippets', 0)} snippets, "
        f"{light.get('new_candidates', 0)} new candidates, {light.get('merged_near_duplicates', 0)} near-duplicates "
        f"merged; {light.get('events_counted', 0)} recall events, {light.get('events_attributed', 0)} attributed",
        f"- rem: {len(rem.get('themes', []))} themes, {len(rem.get('corrections', []))} corrections, "
        f"{rem.get('reinforced', 0)} candidates reinforced",
        f"- deep: {deep_r.get('scored', 0)} scored, {deep_r.get('passed_gates', 0)} passed the gates, "
        f"{len(promoted)} promoted, {len(deep_r.get('dropped', []))} dropped, "
        f"{len(deep_r.get('blocked', []))} blocked",
        "",
    ]
    if rem.get("summary"):
        lines += ["## Themes", "", rem["summary"], ""]
    if promoted:
        lines += ["## Promoted", ""]
        for p in promoted:
            comps = ", ".join(f"{k} {v:.2f}" for k, v in p["score"]["components"].items())
            lines.append(f"- {p['text']} (`{p['key']}`, {p['source']}) S={p['score']['total']:.3f}: {comps}")
            if p.get("decision") and p["decision"]["action"] != "allow":
                lines.append(f"  - {p['decision']['action']}: {p['decision']['reason']}")
        lines.append("")
    for title, key in (("Dropped", "dropped"), ("Blocked", "blocked")):
        if deep_r.get(key):
            lines += [f"## {title}", ""]
            lines += [f"- {d['text']} (`{d['key']}`): {d['reason']}" for d in deep_r[key]]
            lines.append("")
    comp = deep_r.get("compaction")
    if comp and comp.get("note"):
        lines += ["## Size budget", "", comp["note"], ""]
        lines += [f"- evicted: {e['text']} (`{e['key']}`)" for e in comp.get("evicted", [])]
    return "\n".join(lines).rstrip() + "\n"


def record_history(store: Any, run: DreamRun) -> None:
    light = run.reports.get("light", {})
    deep_r = run.reports.get("deep", {})
    summary = {
        "promoted": [p["key"] for p in run.promoted],
        "compacted_regions": run.compaction.touched_regions() if run.compaction is not None else [],
        "memory_region": None,
        "memory_regions": run.memory_regions if run.promoted else [],
        "diary_region": diary.region_name(run.run_id) if run.diary_source else None,
        "report_dir": run.report_dir,
        "themes": [t.tag for t in run.themes][:12],
        "journal": f".lifelong/journal/{run.run_id}" if run.journal is not None else None,
        "safety": run.safety.as_json(),
    }
    with store.lock:
        store.conn.execute(
            "INSERT OR REPLACE INTO dream_runs(run_id, started_at, finished_at, mode, status, staged, new_candidates,"
            " signals, promoted, dropped, blocked, memory_bytes, elapsed_ms, message, summary)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.run_id,
                run.now.isoformat(timespec="seconds"),
                (run.now + dt.timedelta(milliseconds=run.elapsed_ms)).isoformat(timespec="seconds"),
                run.mode,
                run.status,
                int(light.get("snippets", 0)),
                int(light.get("new_candidates", 0)),
                int(light.get("signals", 0)),
                len(run.promoted),
                len(deep_r.get("dropped", [])),
                len(deep_r.get("blocked", [])),
                deep_r.get("memory_bytes"),
                round(run.elapsed_ms, 1),
                run.message,
                json.dumps(summary),
            ),
        )
        store.conn.commit()


# ---------------------------------------------------------------------------------------------
# history, rollback, explain


def history(store: Any, limit: int = 50) -> list[dict[str, Any]]:
    rows = store.query("SELECT * FROM dream_runs ORDER BY started_at DESC, run_id DESC LIMIT ?", (limit,))
    for r in rows:
        r["summary"] = json.loads(r["summary"] or "{}")
    return rows


def revert_statuses(store: Any, run_id: str, *, log_as: str | None = None) -> int:
    """Undo the run's status changes. A candidate the run staged stays staged (what was learned
    from the notes and recalls is kept; only the run's decisions are undone). With ``log_as``,
    each change is itself logged under that id (a forced rollback), so it can be undone too."""
    log = store.conn.execute(
        "SELECT key, old_status, old_status_run, old_status_reason FROM dream_status_log WHERE run_id = ?"
        " ORDER BY seq DESC",
        (run_id,),
    ).fetchall()
    fresh_keys = [
        r[0]
        for r in store.conn.execute(
            "SELECT key FROM dream_candidates WHERE status_run = ? AND status != 'staged'", (run_id,)
        )
    ]
    with store.lock:
        if log_as is not None:
            seq = 0
            for key in [k for k, *_ in log] + fresh_keys:
                row = store.conn.execute(
                    "SELECT status, status_run, status_reason FROM dream_candidates WHERE key = ?", (key,)
                ).fetchone()
                if row is None:
                    continue
                store.conn.execute(
                    "INSERT INTO dream_status_log(run_id, seq, key, old_status, old_status_run, old_status_reason,"
                    " new_status) VALUES (?, ?, ?, ?, ?, ?, 'reverted')",
                    (log_as, seq, key, *row),
                )
                seq += 1
        for key, old, old_run, old_reason in log:
            store.conn.execute(
                "UPDATE dream_candidates SET status = ?, status_run = ?, status_reason = ?,"
                " superseded_by = CASE WHEN ? = 'superseded' THEN superseded_by ELSE NULL END WHERE key = ?",
                (old or "staged", old_run, old_reason, old or "staged", key),
            )
        # candidates the run created and decided on in the same run have no log row: back to staged
        fresh = store.conn.execute(
            "UPDATE dream_candidates SET status = 'staged', status_run = NULL, status_reason = NULL"
            " WHERE status_run = ? AND status != 'staged'",
            (run_id,),
        ).rowcount
        store.conn.commit()
    return len(log) + max(fresh, 0)


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


def undo_interrupted(ctx: Any, run_id: str, summary: dict[str, Any]) -> list[str]:
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


def resolve_interrupted(ctx: Any) -> Resolved:
    """Find runs left "running" by a killed dream (the caller holds the dream lock, so none is
    alive) and undo each exactly (recorded as "interrupted"); then finish every rollback a kill
    left "rolling_back" (its files part restored, its statuses and record not yet written)."""
    store = ctx.store
    rows = store.query("SELECT run_id, summary FROM dream_runs WHERE status = 'running' ORDER BY run_id DESC")
    for row in rows:
        run_id = row["run_id"]
        restored = undo_interrupted(ctx, run_id, json.loads(row["summary"] or "{}"))
        message = f"interrupted; undone by the next command ({len(restored)} file(s) restored)"
        with store.lock:
            store.conn.execute(
                "UPDATE dream_runs SET status = 'interrupted', message = ? WHERE run_id = ?",
                (message, run_id),
            )
            store.conn.commit()
        ctx.log(PLUGIN, f"run {run_id}: {message}")
    notes, finished = [], []
    for row in store.query("SELECT * FROM dream_runs WHERE status = ? ORDER BY run_id", (ROLLING_BACK,)):
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
        rows = store.query("SELECT * FROM dream_runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise InputError(f"no dream run {run_id!r} (see `lifelong dream history`)")
        row = rows[0]
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


def roll_back(ctx: Any, row: dict[str, Any], *, force: bool = False) -> dict[str, Any]:
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
        with store.lock:
            store.conn.execute(
                "UPDATE dream_runs SET status = ?, message = ?, summary = ? WHERE run_id = ?",
                (ROLLING_BACK, "rollback in progress", json.dumps({**summary, "rollback": state}), run_id),
            )
            store.conn.commit()
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
            with store.lock:
                store.conn.execute(
                    "UPDATE dream_runs SET status = ?, message = ?, summary = ? WHERE run_id = ?",
                    (state["status"], state["message"], row["summary"], run_id),
                )
                store.conn.commit()
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
    with store.lock:
        if undo is not None:
            message += f"; `lifelong dream rollback {undo.run_id}` undoes this rollback"
            store.conn.execute(
                "INSERT OR REPLACE INTO dream_runs(run_id, started_at, finished_at, mode, status, message, summary)"
                " VALUES (?, ?, ?, 'rollback', 'applied', ?, ?)",
                (
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
                ),
            )
        if summary.get("undoes"):  # rolling back a forced rollback: the run it undid stands again
            store.conn.execute(
                "UPDATE dream_runs SET status = ?, message = ? WHERE run_id = ?",
                (summary.get("undone_status") or "ok", summary.get("undone_message"), summary["undoes"]),
            )
        summary.pop("rollback", None)
        store.conn.execute(
            "UPDATE dream_runs SET status = 'rolled_back', message = ?, summary = ? WHERE run_id = ?",
            (message, json.dumps(summary), run_id),
        )
        store.conn.commit()
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


def explain(host: Any, key: str) -> dict[str, Any]:
    """Everything known about one candidate: text, where it was written, the recalls attributed
    to it (with their queries), its score components now, and its status history."""
    ctx = host.ctx
    store = ctx.store
    key = key.strip().lower()
    if len(key) < 4:
        raise InputError(
            "KEY needs at least 4 characters (keys are shown in MEMORY.md, reports and --dry-run)"
        )
    rows = store.query("SELECT * FROM dream_candidates WHERE key LIKE ? ORDER BY key", (key + "%",))
    if not rows:
        raise InputError(f"no candidate with key {key!r}")
    if len(rows) > 1:
        raise InputError(f"key {key!r} is ambiguous: {', '.join(r['key'] for r in rows[:5])}")
    row = rows[0]
    pool = CandidatePool.load(store, ctx.config(PLUGIN)["dedupe_jaccard"])
    cand = pool.candidates[row["key"]]
    occurrences = pool.occurrences_of(cand.key)
    signals = store.query(
        "SELECT s.event_id, s.ts, s.day, s.query_hash, s.score, s.source, s.overlap, NULL AS query"
        " FROM dream_signals s WHERE s.key = ? ORDER BY s.ts",
        (cand.key,),
    )
    if ctx.recall is not None:  # the queries, from recall's recorded searches
        queries = {e.id: e.query for e in ctx.recall.events(ids=[s["event_id"] for s in signals])}
        for s in signals:
            s["query"] = queries.get(s["event_id"])
    now = ctx.now()
    sig = build_signals(
        cand,
        [(s["ts"], s["day"], s["query_hash"], s["score"]) for s in signals],
        occurrences,
        now.timestamp(),
        ctx.workspace.timezone,
        now.date(),
    )
    result = score(sig, ScoreConfig.from_config(ctx.config(PLUGIN)))
    log = store.query(
        "SELECT run_id, old_status, new_status FROM dream_status_log WHERE key = ? ORDER BY run_id, seq",
        (cand.key,),
    )
    return {
        "version": 1,
        "key": cand.key,
        "text": cand.text,
        "status": cand.status,
        "status_run": cand.status_run,
        "status_reason": cand.status_reason,
        "superseded_by": cand.superseded_by,
        "source": cand.citation,
        "first_day": cand.day,
        "occurrences": [
            {"path": o.path, "lines": f"L{o.start_line}-L{o.end_line}", "day": o.day, "text": o.text}
            for o in occurrences
        ],
        "recalls": [
            {
                "day": s["day"],
                "query": s["query"],
                "score": round(s["score"], 4),
                "source": s["source"],
                "overlap": round(s["overlap"], 3),
            }
            for s in signals
        ],
        "signals": sig.__dict__,
        "score_now": result.as_json(),
        "now": now.isoformat(timespec="seconds"),
        "light": {"hits": cand.light_hits, "last": cand.light_last},
        "rem": {"hits": cand.rem_hits, "last": cand.rem_last},
        "history": log,
    }
