"""One flush, the executor around the pure parts: decide (``trigger.plan_flush``), ask the model for
durable facts (``flush_turn``, only with a model) and append them to today's daily through
``before_message_write``, capture the evicted messages (``capture.plan_capture``) and keep the
trivial ones in the compressed tier (``tier``). Every file write goes through one journal (run id
``flush-…``), under the workspace's write lock, so it is audited and ``lifelong capture undo RUN``
restores the exact previous bytes; the session record is written last, so a crash leaves the cycle to be flushed again
(idempotently: captured notes have deterministic paths and known hashes are skipped)."""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass, field
from typing import Any

from lifelong import llm
from lifelong.contracts import FlushResult, Message, Session, WriteCandidate
from lifelong.errors import LLMOffline
from lifelong.host import Context
from lifelong.journal import Journal
from lifelong.privacy import PRIVATE_DIR, gate_scope
from lifelong.workspace import append_text

from . import tier
from .capture import CAPTURE_DIR, CapturePlan, plan_capture
from .flush_turn import read_facts, render_prompt
from .trigger import FlushDecision, FlushRecord, plan_flush

PLUGIN = "flush"


def load_record(ctx: Context, session_id: str) -> FlushRecord | None:
    row = ctx.store.conn.execute(
        "SELECT compaction_count, total_tokens FROM flush_sessions WHERE session_id = ?", (session_id,)
    ).fetchone()
    return FlushRecord(row[0], row[1]) if row else None


def daily_relpath(day: dt.date, *, private: bool = False) -> str:
    """Today's daily, or for a session in the private scope its private twin under memory/private/."""
    return f"{PRIVATE_DIR}{day.isoformat()}.md" if private else f"memory/{day.isoformat()}.md"


@dataclass
class FlushOutcome:
    facts: list[str] = field(default_factory=list)
    blocked: list[dict[str, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    secrets_redacted: int = 0
    note: str = ""


def model_facts(ctx: Context, messages: list[Message], cfg: dict[str, Any], now: dt.datetime) -> FlushOutcome:
    """The flush turn: the model's durable facts from the evicted messages (nothing offline)."""
    model = cfg["model"] or (ctx.workspace.config.get("llm") or {}).get("model")
    if not model or not cfg["flush_turn"]:
        return FlushOutcome(note="no model configured: capture only")
    prompt = render_prompt(
        messages,
        today=now.date(),
        timezone=str(ctx.workspace.timezone),
        max_facts=cfg["max_facts"],
        workspace=ctx.workspace,
    )
    try:
        reply = llm.complete(prompt, model=model, deadline_s=cfg["timeout_s"], **cfg["model_options"])
    except LLMOffline as exc:
        ctx.log(PLUGIN, f"flush turn skipped: {exc}")
        return FlushOutcome(note=f"flush turn skipped: {exc}")
    facts, redacted, dropped = read_facts(reply, cfg["max_facts"])
    return FlushOutcome(facts, [], dropped, redacted, "NO_REPLY" if not facts and not dropped else "")


def write_facts(
    ctx: Context,
    journal: Journal,
    outcome: FlushOutcome,
    session_id: str,
    now: dt.datetime,
    *,
    private: bool = False,
) -> list[str]:
    """Append the facts the gate allows to today's daily (append-only; the private daily for a
    session in the private scope); returns what was written."""
    rel = daily_relpath(now.date(), private=private)
    allowed = []
    for fact in outcome.facts:
        decision = ctx.host.decide_write(
            WriteCandidate(
                text=fact, target=rel, source=PLUGIN, written_on=now.date(), run_id=journal.run_id
            ),
            [],
        )
        if decision.action == "block":
            outcome.blocked.append({"text": fact, "reason": decision.reason or "blocked"})
            continue
        allowed.append(fact)
    if not allowed:
        return []
    path = ctx.workspace.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    current = path.read_bytes().decode("utf-8") if path.exists() else f"# {now.date().isoformat()}\n"
    heading = f"\n## Saved before compaction ({now.strftime('%H:%M')}, session {session_id})\n"
    journal.write(path, append_text(current, heading + "".join(f"- {f}\n" for f in allowed)), action="flush")
    return allowed


def recent_daily_text(ctx: Context, today: dt.date, days: int = 2) -> str:
    """What the last ``days`` dailies already say (so it is not captured twice)."""
    texts = []
    for back in range(days):
        path = ctx.workspace.root / daily_relpath(today - dt.timedelta(days=back))
        if path.is_file():
            texts.append(path.read_text("utf-8", errors="replace"))
    return "\n".join(texts)


def apply_capture(
    ctx: Context, journal: Journal, plan: CapturePlan, session_id: str, now: dt.datetime, count: int
) -> tuple[list[str], str | None]:
    """Write the captured notes and the cache file; remember every kept message's hash."""
    paths = []
    for note in plan.notes:
        journal.write(ctx.workspace.root / note.relpath, note.text, action="capture")
        paths.append(note.relpath)
    cache_file = tier.write_batch(ctx.workspace, session_id, plan.cached, now, count)
    kept = [(n.hash, n.relpath) for n in plan.notes]
    kept += [(c.hash, f"cache:{cache_file.name}") for c in plan.cached if cache_file is not None]
    with ctx.store.lock:
        ctx.store.conn.executemany(
            "INSERT OR IGNORE INTO flush_captured(hash, path, session_id, captured_at) VALUES (?, ?, ?, ?)",
            [(h, path, session_id, now.timestamp()) for h, path in kept],
        )
        ctx.store.conn.commit()
    return paths, cache_file.name if cache_file else None


def record_flush(
    ctx: Context,
    *,
    run_id: str,
    session: Session,
    session_id: str,
    decision: FlushDecision,
    now: dt.datetime,
    facts: int,
    plan: CapturePlan,
    secrets_redacted: int,
) -> None:
    total = session.get("total_tokens")
    with ctx.store.lock:
        conn = ctx.store.conn
        conn.execute(
            "INSERT OR REPLACE INTO flush_sessions(session_id, compaction_count, total_tokens, flushed_at)"
            " VALUES (?, ?, ?, ?)",
            (
                session_id,
                decision.compaction_count,
                total if isinstance(total, int) else None,
                now.timestamp(),
            ),
        )
        conn.execute(
            "INSERT OR REPLACE INTO flush_log(run_id, session_id, at, compaction_count, path, facts, captured,"
            " cached, secrets_redacted, pointer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                session_id,
                now.timestamp(),
                decision.compaction_count,
                decision.path,
                facts,
                len(plan.notes),
                len(plan.cached),
                secrets_redacted,
                plan.pointer,
            ),
        )
        conn.commit()


def flush_before_compaction(ctx: Context, session: Session, messages: list[Message]) -> FlushResult:
    cfg = ctx.config(PLUGIN)
    session_id = str(session.get("id") or "default")
    decision = plan_flush(
        dict(session),
        load_record(ctx, session_id),
        reserve_tokens_floor=cfg["reserve_tokens_floor"],
        soft_threshold_tokens=cfg["soft_threshold_tokens"],
    )
    if not decision.run:
        return FlushResult("skipped", detail={"reason": decision.reason, "path": decision.path})
    ws = ctx.workspace
    now = ctx.now()
    run_id = f"flush-{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    journal = Journal(ws, run_id, plugin=PLUGIN)
    outcome = model_facts(ctx, messages, cfg, now)
    private = gate_scope(session) == "private"  # what a private session says stays private
    with ws.lock("write", timeout=cfg["lock_timeout_s"]):
        written = write_facts(ctx, journal, outcome, session_id, now, private=private)
        # the hashes of every message captured as a note, with the session that captured it
        noted = dict(
            ctx.store.conn.execute(
                "SELECT hash, session_id FROM flush_captured WHERE path NOT LIKE 'cache:%'"
            )
        )
        plan = plan_capture(
            messages if cfg["capture"] else [],
            session_id=session_id,
            now=now,
            tz=ws.timezone,
            known_hashes=set(noted),
            cached_ids=tier.cached_ids(ws, session_id),
            capture_roles=frozenset(cfg["capture_roles"]),
            noted_here=frozenset(h for h, sid in noted.items() if sid == session_id),
            corpus_text=recent_daily_text(ctx, now.date()),
            min_tokens=cfg["min_capture_tokens"],
            private=private,
        )
        captured, cache_file = apply_capture(ctx, journal, plan, session_id, now, decision.compaction_count)
    redacted = outcome.secrets_redacted + plan.secrets_redacted
    record_flush(
        ctx,
        run_id=run_id,
        session=session,
        session_id=session_id,
        decision=decision,
        now=now,
        facts=len(written),
        plan=plan,
        secrets_redacted=redacted,
    )
    pointer = plan.pointer
    if written:
        pointer = f"{len(written)} fact(s) saved to {daily_relpath(now.date(), private=private)}" + (
            f"; {pointer}" if pointer else ""
        )
    return FlushResult(
        "ok",
        flushed=bool(written),
        captured_paths=tuple(captured),
        cached_count=len(plan.cached),
        pointer=pointer,
        detail={
            "run_id": run_id,
            "reason": decision.reason,
            "path": decision.path,
            "compaction_count": decision.compaction_count,
            "facts": written,
            "blocked": outcome.blocked,
            "dropped_as_instructions": outcome.dropped,
            "known": plan.known,
            "secrets_redacted": redacted,
            "flush_turn": outcome.note or "ok",
            "cache_file": cache_file,
            "capture_dir": CAPTURE_DIR,
        },
    )


def index_captured(ctx: Context) -> None:
    """After the compaction: make the captured notes searchable now (recall's ``memory_index``)."""
    if "memory_index" in ctx.host.tools:
        result = ctx.call_tool("memory_index")
        if "error" in result:
            ctx.log(PLUGIN, f"indexing captured notes failed: {result['error']}")
