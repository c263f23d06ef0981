"""The supersede plugin's part of ``lifelong status``."""

from __future__ import annotations

from typing import Any

from lifelong.contracts import PluginContext, StatusReport

from . import ledger

PLUGIN = "supersede"


def counts(conn: Any) -> dict[str, int]:
    if not ledger.has_table(conn, "supersede_facts"):
        return {"facts": 0, "superseded": 0, "contested": 0, "review": 0}
    row = conn.execute(
        "SELECT count(*), sum(validity_end IS NOT NULL), sum(contested), sum(review) FROM supersede_facts"
    ).fetchone()
    return {k: int(v or 0) for k, v in zip(("facts", "superseded", "contested", "review"), row, strict=True)}


def supersede_status(ctx: PluginContext) -> StatusReport:
    cfg = ctx.config(PLUGIN)
    found = counts(ctx.store.conn)
    entries, bad = ledger.read_log(ctx.workspace)
    summary = (
        f"mode {cfg['mode']}: {len(entries)} logged decision(s); {found['facts']} fact(s) tracked, "
        f"{found['superseded']} superseded, {found['contested']} contested, {found['review']} to review",
    )
    warnings = []
    if bad:
        warnings.append(f"{bad} unreadable line(s) in .lifelong/contradictions.jsonl")
    steps = ("lifelong contradictions",) if found["contested"] or found["review"] else ()
    return StatusReport(
        PLUGIN, summary, {**found, "mode": cfg["mode"], "logged": len(entries)}, tuple(warnings), steps
    )
