"""The wiki's part of ``lifelong status``."""

from __future__ import annotations

from lifelong.contracts import PluginContext, StatusReport

from .service import PLUGIN
from .tools import wiki_status


def wiki_status_report(ctx: PluginContext) -> StatusReport:
    data = wiki_status(ctx)
    last = data["last"]
    summary = [f"{data['pages']} page(s), {data['claims']} claim(s), {data['active_claims']} active"]
    warnings: list[str] = []
    steps: list[str] = []
    if last:
        counts = last.get("counts") or {}
        found = sum(counts.values())
        summary.append(f"last compile/lint {last['at']}: {found} lint finding(s)")
        if last.get("contradictions"):
            warnings.append(
                f"{last['contradictions']} contradiction(s) in the wiki: see wiki/reports/contradictions.md"
            )
        for code in ("drift", "evidence-file-missing"):
            if counts.get(code):
                warnings.append(
                    f"{counts[code]} claim evidence pointer(s) with {code}: see wiki/reports/lint.md"
                )
    else:
        summary.append("never compiled")
        steps.append("lifelong wiki compile  (build the wiki from MEMORY.md and the daily notes)")
    return StatusReport(
        plugin=PLUGIN,
        summary=tuple(summary),
        data={**data, "last": last},
        warnings=tuple(warnings),
        next_steps=tuple(steps),
    )
