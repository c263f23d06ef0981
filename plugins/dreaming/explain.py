"""``lifelong dream explain KEY``: everything known about one candidate."""

from __future__ import annotations

from typing import Any

from lifelong.errors import InputError

from . import state
from .promotion import build_signals
from .record import PLUGIN
from .scoring import ScoreConfig, score


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
    rows = state.candidates_by_prefix(store, key)
    if not rows:
        raise InputError(f"no candidate with key {key!r}")
    if len(rows) > 1:
        raise InputError(f"key {key!r} is ambiguous: {', '.join(r['key'] for r in rows[:5])}")
    row = rows[0]
    pool = state.load_pool(store, ctx.config(PLUGIN)["dedupe_jaccard"])
    cand = pool.candidates[row["key"]]
    occurrences = pool.occurrences_of(cand.key)
    signals = state.signals_of(store, cand.key)
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
    log = state.status_log_of(store, cand.key)
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
