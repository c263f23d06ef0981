"""A run's reports: each phase's JSON and ``report.md`` under ``.lifelong/reports/<run id>/``,
journaled under the run id, every string neutralised (:mod:`screening`)."""

from __future__ import annotations

import json
from typing import Any

from lifelong.contracts import PluginContext

from .record import PHASES, DreamRun
from .screening import neutralise, neutralise_json


def write_reports(ctx: PluginContext, run: DreamRun) -> str:
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
    marked = [("struck through", d) for d in deep_r.get("struck", [])]
    marked += [("marked contested", d) for d in deep_r.get("contested", [])]
    if marked:  # REM's corrections of promoted items, now in MEMORY.md
        lines += ["## Marked in MEMORY.md", ""]
        lines += [f"- `{d['key']}` {how}, by `{d['by']}`" for how, d in marked]
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
