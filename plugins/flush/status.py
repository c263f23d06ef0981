"""The flush plugin's part of ``lifelong status``."""

from __future__ import annotations

from lifelong.contracts import PluginContext, StatusReport

from . import tier
from .run import PLUGIN


def flush_status(ctx: PluginContext) -> StatusReport:
    conn = ctx.store.conn
    flushes, facts, captured, cached, redacted = conn.execute(
        "SELECT count(*), coalesce(sum(facts), 0), coalesce(sum(captured), 0), coalesce(sum(cached), 0),"
        " coalesce(sum(secrets_redacted), 0) FROM flush_log"
    ).fetchone()
    sessions = tier.sessions(ctx.workspace)
    summary = (
        f"{flushes} flush(es): {facts} fact(s) saved, {captured} message(s) captured, "
        f"{cached} cached ({sum(s['messages'] for s in sessions)} restorable in {len(sessions)} session(s))",
    )
    if redacted:
        summary += (f"{redacted} secret(s) redacted from flushed and captured text",)
    return StatusReport(
        plugin=PLUGIN,
        summary=summary,
        data={
            "flushes": flushes,
            "facts_saved": facts,
            "captured": captured,
            "cached": cached,
            "secrets_redacted": redacted,
            "cache_sessions": len(sessions),
        },
    )
