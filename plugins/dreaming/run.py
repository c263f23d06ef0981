"""One consolidation run: lock -> light -> REM -> deep (through the ``dreaming_phase`` hook, so
other plugins can join each phase) -> save state -> ``after_consolidation`` -> diary -> reports ->
history row -> unlock. The run's record is :mod:`record`, its reports :mod:`reports`; undoing a run
and recovering from a killed one is :mod:`rollback`; every table read and write is :mod:`state`.

Every file a run writes (MEMORY.md, DREAMS.md, its reports) goes through
:class:`lifelong.journal.Journal` under the run id; the database changes it makes to candidates are
logged in ``dream_status_log`` so a rollback reverts them too.
"""

from __future__ import annotations

import time
from typing import Any

from lifelong.contracts import PluginContext
from lifelong.errors import ConfigError, LifelongError, PluginError
from lifelong.journal import Journal

from . import diary, state
from .light import light
from .promotion import deep
from .record import PHASES, PLUGIN, WATERMARK_KEY, DreamRun, Saved, new_run_id, record_history
from .rem import apply_rem, rem
from .reports import write_reports
from .rollback import Resolved, resolve_interrupted


def run_phase(ctx: PluginContext, phase: str, run: Any) -> dict[str, Any] | None:
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
            event_watermark=float(state.read_meta(store, WATERMARK_KEY) or 0.0),
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


def finalize(ctx: PluginContext, run: DreamRun) -> None:
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
            state.write_meta(store, key, value)
        run.status = "nothing"
        run.message = "no new material"
        return
    run.saved = Saved(material=True)
    # the recall-event watermark moves in the same transaction as the signals it produced
    state.save_pool(store, pool, run.run_id, meta=watermark, item_hashes=run.item_hashes)
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
