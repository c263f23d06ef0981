"""The dreaming plugin's part of ``lifelong status``: the last nightly run, what is waiting to be
promoted, what MEMORY.md holds, and when a first dream is due."""

from __future__ import annotations

from lifelong.contracts import PluginContext, StatusReport

from .memory_file import existing_keys, human_edits
from .record import PLUGIN
from .state import history, safety_totals, staged_count, written_hashes


def dreaming_status(ctx: PluginContext) -> StatusReport:
    store = ctx.store
    runs = history(store, limit=1)
    staged = staged_count(store)
    memory = ctx.workspace.memory_file
    text = memory.read_text("utf-8", errors="replace") if memory.exists() else ""
    items = len(existing_keys(text))
    summary = []
    steps = []
    last = runs[0] if runs else None
    if last is None:
        summary.append("never dreamed")
        has_dailies = ctx.workspace.memory_dir.is_dir() and any(ctx.workspace.memory_dir.glob("*.md"))
        if has_dailies:
            steps.append("lifelong dream --backfill  (first consolidation of the notes already here)")
        steps.append("lifelong dream schedule  (or cron/: consolidate every night at 03:00)")
    else:
        summary.append(
            f"last dream {last['started_at']} ({last['status']}, {last['promoted']} promoted, run {last['run_id']})"
        )
    summary.append(
        f"{staged} candidate(s) staged; MEMORY.md holds {items} promoted item(s), {len(text.encode())} bytes"
    )
    safety = safety_totals(store)
    if any(safety.values()):
        summary.append(
            f"safety: {safety['secrets_redacted']} secret(s) redacted, {safety['refused']} instruction-like "
            f"candidate(s) never promoted, {safety['lines_withheld']} diary/report line(s) withheld"
        )
    edits = human_edits(text, written_hashes(store))
    if edits:
        summary.append(
            f"{len(edits)} human edit(s) inside MEMORY.md's managed sections, kept "
            f"(never compacted or evicted): {'; '.join(e['kind'] + ' in ' + e['section'] for e in edits[:3])}"
        )
    budget = ctx.config(PLUGIN)["memory_max_bytes"]
    warnings = ()
    if len(text.encode()) > budget:
        warnings = (f"MEMORY.md is {len(text.encode())} bytes, over its {budget}-byte budget",)
    return StatusReport(
        plugin=PLUGIN,
        summary=tuple(summary),
        data={
            "last_run": {k: last[k] for k in ("run_id", "started_at", "status", "promoted")}
            if last
            else None,
            "staged": staged,
            "memory_items": items,
            "memory_bytes": len(text.encode()),
            "safety": safety,
            "human_edits": edits,
        },
        warnings=warnings,
        next_steps=tuple(steps),
    )
