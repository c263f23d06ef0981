"""One run of the pre-reply gate: eligibility -> adaptive recall -> query -> cache -> search and
read (deadline-bound) -> model note or offline extractive note -> escaped, untrusted prefix.

The gate fails open: whatever goes wrong, the reply goes on. An exception becomes status
``failed`` (logged to ``.lifelong/logs/gate.log``); a run past ``timeout_ms`` returns at the
deadline with the partial note it has (``timeout_partial``) or nothing (``timeout``).
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, cast
from xml.sax.saxutils import escape

from lifelong import clock, llm
from lifelong.contracts import MEMORY_GET, MEMORY_SEARCH, PluginContext, Session
from lifelong.errors import LLMOffline, LLMTimeout
from lifelong.hookspecs import GateResult
from lifelong.privacy import gate_scope
from lifelong.safety import find_instructions, redact_secrets, strip_invisible

from .eligibility import check_eligibility, is_trivial
from .extractive import Note, extractive_note
from .query import MEMORY_TAG, PREFIX_HEADER, CacheKey, GateQuery, build_query, cache_key, clip
from .subagent import CircuitBreaker, read_reply, render_prompt

PLUGIN = "gate"
STATUSES = (
    "ok",
    "empty",
    "no_relevant_memory",
    "timeout",
    "timeout_partial",
    "skipped_ineligible",
    "skipped_trivial",
    "failed",
)
CACHED_STATUSES = ("ok", "empty", "no_relevant_memory")
CACHE_MAX_ENTRIES = 512
MODEL_MIN_S = 0.05  # below this much time left, the model is not called at all

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="lifelong-gate")
        return _pool


def make_prefix(note: str) -> str:
    """The exact text prepended to the user-role prompt: the note XML-escaped inside a block
    marked untrusted ('' for no note)."""
    if not note:
        return ""
    return f"{PREFIX_HEADER}\n<{MEMORY_TAG}>{escape(note)}</{MEMORY_TAG}>"


class GateSearchError(Exception):
    """memory_search answered with an error."""


@dataclass
class Retrieval:
    hits: list[dict[str, Any]]
    search_ms: float
    read_ms: float


@dataclass
class Run:
    """The bookkeeping of one gate run."""

    started: float
    deadline: float
    max_chars: int = 220
    detail: dict[str, Any] = field(default_factory=dict)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000.0


def retrieve(
    ctx: PluginContext, query: GateQuery, config: dict[str, Any], scope: str = "shared"
) -> Retrieval:
    """memory_search (corpus ``memory`` by default, source gate) then memory_get for the exact
    lines of each hit. ``scope`` private (a direct chat that asks for it, ``lifelong.privacy.gate_scope``) lets
    private notes in; a group or channel chat never gets them."""
    t0 = time.monotonic()
    args: dict[str, Any] = {
        "query": query.query,
        "corpus": config["corpus"],
        "source": "gate",
        "max_results": config["max_results"],
        "mode": config["search_mode"],
    }
    if config["min_score"] is not None:
        args["min_score"] = config["min_score"]
    if query.task:
        args["task"] = query.task
    if scope == "private":
        args["scope"] = "private"
    found = ctx.call_tool(MEMORY_SEARCH, **args)
    if not isinstance(found, dict):
        raise GateSearchError(f"memory_search returned {type(found).__name__}, not a result object")
    if found.get("error"):
        raise GateSearchError(str(found["error"]))
    # the shape of SearchToolResult; a tool breaking it raises here (the gate fails open, logged)
    hits = [dict(h) for h in cast(list[dict[str, Any]], found.get("results") or [])]
    t1 = time.monotonic()
    for hit in hits:
        start, end = int(hit.get("start_line") or 1), int(hit.get("end_line") or 0)
        if not hit.get("path") or end < start:
            continue
        got = ctx.call_tool(
            MEMORY_GET, path=hit["path"], scope=scope, **{"from": start, "lines": end - start + 1}
        )
        if isinstance(got, dict) and not got.get("error") and got.get("from") == start:
            hit["text"] = got.get("text") or ""
    return Retrieval(hits, (t1 - t0) * 1000.0, (time.monotonic() - t1) * 1000.0)


def resolve_model(ctx: PluginContext, config: dict[str, Any], session: Session) -> str | None:
    """gate.model, else the session's model, else llm.model, else gate.model_fallback; None means
    the offline extractive gate."""
    core = (ctx.workspace.config.get("llm") or {}).get("model")
    return config["model"] or session.get("model") or core or config["model_fallback"] or None


def breaker_for(ctx: PluginContext, model: str, config: dict[str, Any]) -> CircuitBreaker:
    breakers: dict[str, CircuitBreaker] = ctx.state.setdefault("gate.breakers", {})
    if model not in breakers:
        breakers[model] = CircuitBreaker(
            failures=config["circuit_breaker_failures"],
            cooldown_s=config["circuit_breaker_cooldown_ms"] / 1000.0,
        )
    return breakers[model]


def _cache(ctx: PluginContext) -> dict[CacheKey, tuple[float, GateResult]]:
    return ctx.state.setdefault("gate.cache", {})


def cached_result(ctx: PluginContext, key: CacheKey) -> GateResult | None:
    entry = _cache(ctx).get(key)
    if entry is None:
        return None
    expires, result = entry
    if clock.now().timestamp() >= expires:
        _cache(ctx).pop(key, None)
        return None
    return result


def store_result(ctx: PluginContext, key: CacheKey, result: GateResult, ttl_ms: int) -> None:
    cache = _cache(ctx)
    now_ts = clock.now().timestamp()
    if len(cache) >= CACHE_MAX_ENTRIES:
        for k in [k for k, (exp, _) in cache.items() if exp <= now_ts] or list(cache)[: len(cache) // 2]:
            cache.pop(k, None)
    cache[key] = (now_ts + ttl_ms / 1000.0, result)


def run_gate(ctx: PluginContext, session: Session, *, mode: str | None = None) -> GateResult:
    """Run the gate for one reply and never raise.

    ``session`` is a dict describing the chat (all keys optional):

    - ``id``: session id (the cache is per session and query)
    - ``chat_type``: ``direct`` | ``group`` | ``channel`` (default direct)
    - ``kind``: ``interactive`` | ``subagent`` | ``cron`` | ``heartbeat`` | ``oneshot`` | ``gate``
      (default interactive; the gate runs only for interactive)
    - ``chat_id``: the conversation id matched against allowed/denied_chat_ids
    - ``gate_enabled``: per-session on/off toggle (default True)
    - ``messages``: the recent thread, oldest first: ``[{"role": "user"|"assistant", "content": str}]``
    - ``message``: the latest user message (set by ``host.before_reply``)
    - ``model``: the session's chat model, used when ``gate.model`` is unset
    - ``query_mode``: ``message`` | ``recent`` | ``full``, overriding ``gate.query_mode``
    """
    started = time.monotonic()
    try:
        config = ctx.config(PLUGIN)
    except Exception as exc:  # the gate's own config is unreadable: fail open
        return GateResult("failed", source=PLUGIN, detail={"error": f"{type(exc).__name__}: {exc}"})
    run = Run(started, started + config["timeout_ms"] / 1000.0, config["max_summary_chars"])
    query: GateQuery | None = None
    try:
        result = _run(ctx, session, config, run, mode)
        query = run.detail.get("_query")
    except Exception as exc:
        query = run.detail.get("_query")
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        ctx.log(PLUGIN, f"gate failed ({type(exc).__name__}: {exc}); the reply goes on without memory\n{tb}")
        run.detail["error"] = f"{type(exc).__name__}: {exc}"
        result = _finish(run, "failed")
    run.detail.pop("_query", None)
    if config.get("logging"):
        _log_run(ctx, session, result, query)
    return result


def fit_escaped(text: str, max_chars: int) -> str:
    """``text`` cut (at a word boundary) so that its XML-escaped form, what the agent receives
    inside the prefix, is at most ``max_chars`` characters."""
    while text and len(escape(text)) > max_chars:
        text = clip(text, max(1, len(text) - max(1, len(escape(text)) - max_chars)))
    return text


def safe_note(text: str, max_chars: int) -> tuple[str, dict[str, Any]]:
    """The note as it may be injected: no invisible or bidi characters, secrets redacted, nothing
    that reads as instructions to an agent (withheld whole), within the cap after escaping."""
    if not text:
        return "", {}
    info: dict[str, Any] = {}
    text = strip_invisible(text)
    text, redacted = redact_secrets(text)
    if redacted:
        info["secrets_redacted"] = redacted
    rules = sorted({f.rule for f in find_instructions(text)})
    if rules:
        info["withheld"] = f"the note reads as instructions to an agent ({', '.join(rules)})"
        return "", info
    return fit_escaped(text, max_chars), info


def _finish(
    run: Run, status: str, note: Note | str | None = None, citations: tuple[str, ...] = ()
) -> GateResult:
    text = note.text if isinstance(note, Note) else (note or "")
    if isinstance(note, Note) and not citations:
        citations = note.citations
    text, safety = safe_note(text, run.max_chars)
    run.detail.update(safety)
    if not text and status in ("ok", "timeout_partial"):
        status = "no_relevant_memory" if status == "ok" else "timeout"
        citations = ()
    detail = {k: v for k, v in run.detail.items() if not k.startswith("_")}
    detail["summary_chars"] = len(text)
    return GateResult(
        status=status,
        note=text,
        prefix=make_prefix(text),
        elapsed_ms=round(run.elapsed_ms(), 1),
        citations=tuple(citations),
        source=PLUGIN,
        detail=detail,
    )


def _run(
    ctx: PluginContext, session: Session, config: dict[str, Any], run: Run, mode: str | None
) -> GateResult:
    eligibility = check_eligibility(session, config)
    if not eligibility.eligible:
        run.detail["reason"] = eligibility.reason
        return _finish(run, "skipped_ineligible")
    query = build_query(session, config, mode or session.get("query_mode"))
    run.detail.update(_query=query, query=query.query, query_mode=query.mode)
    if not query.focus.strip() or (config["skip_trivial"] and is_trivial(query.focus)):
        run.detail["reason"] = "greeting, acknowledgement or chatter: no retrieval"
        return _finish(run, "skipped_trivial")

    key = cache_key(session, query)
    cached = cached_result(ctx, key)
    if cached is not None:
        return replace(
            cached, elapsed_ms=round(run.elapsed_ms(), 1), detail={**cached.detail, "cached": True}
        )

    future = _executor().submit(retrieve, ctx, query, config, gate_scope(session))
    try:
        retrieval = future.result(timeout=max(0.0, run.remaining()))
    except concurrent.futures.TimeoutError:
        future.cancel()
        run.detail["reason"] = f"memory search did not finish within {config['timeout_ms']} ms"
        return _finish(run, "timeout")
    except GateSearchError as exc:
        run.detail["error"] = f"memory_search: {exc}"
        ctx.log(PLUGIN, f"gate failed: memory_search error: {exc}; the reply goes on without memory")
        return _finish(run, "failed")
    run.detail.update(
        hits=len(retrieval.hits), search_ms=round(retrieval.search_ms, 1), read_ms=round(retrieval.read_ms, 1)
    )
    if not retrieval.hits:
        result = _finish(run, "empty")
        store_result(ctx, key, result, config["cache_ttl_ms"])
        return result

    now = ctx.now()
    max_chars = config["max_summary_chars"]
    context = query.query if query.mode != "message" else ""
    offline = extractive_note(retrieval.hits, query.focus, context, max_chars=max_chars, now=now)
    model = resolve_model(ctx, config, session)
    result = _with_model(ctx, session, config, run, query, retrieval, offline, model) if model else None
    if result is None:
        run.detail.setdefault("note_source", "extractive")
        result = _finish(run, "ok" if offline else "no_relevant_memory", offline)
    if result.status in CACHED_STATUSES:
        store_result(ctx, key, result, config["cache_ttl_ms"])
    return result


def _with_model(
    ctx: PluginContext,
    session: Session,
    config: dict[str, Any],
    run: Run,
    query: GateQuery,
    retrieval: Retrieval,
    offline: Note | None,
    model: str,
) -> GateResult | None:
    """The model's note, or a timeout result, or None to fall back to the offline note."""
    run.detail["model"] = model
    breaker = breaker_for(ctx, model, config)
    now_ts = clock.now().timestamp()
    if not breaker.allows(now_ts):
        run.detail["circuit"] = "open"
        run.detail["model_skipped"] = f"circuit breaker open after {breaker.consecutive} consecutive timeouts"
        return None
    remaining = run.remaining()
    if remaining < MODEL_MIN_S:
        run.detail["reason"] = "no time left for the model"
        return _finish(run, "timeout_partial" if offline else "timeout", offline)
    messages = render_prompt(
        conversation=query.conversation,
        hits=retrieval.hits,
        config=config,
        mode=query.mode,
        now=ctx.now(),
        timezone=str(ctx.workspace.timezone),
        workspace=ctx.workspace,
    )
    t0 = time.monotonic()
    try:
        reply = llm.complete(messages, model=model, deadline_s=remaining, **config["model_options"])
    except LLMTimeout as exc:
        breaker.record_timeout(clock.now().timestamp())
        run.detail.update(
            model_ms=round((time.monotonic() - t0) * 1000, 1),
            reason=str(exc),
            circuit=breaker.state(clock.now().timestamp()),
        )
        if offline:
            run.detail["note_source"] = "extractive (partial)"
        return _finish(run, "timeout_partial" if offline else "timeout", offline)
    except LLMOffline as exc:
        run.detail["model_error"] = str(exc)
        ctx.log(PLUGIN, f"model {model} unavailable ({exc}); using the offline note")
        return None
    breaker.record_success()
    run.detail.update(
        model_ms=round((time.monotonic() - t0) * 1000, 1), note_source="model", circuit="closed"
    )
    note = read_reply(reply, config["max_summary_chars"])
    if note is None:
        return _finish(run, "no_relevant_memory")
    rules = sorted({f.rule for f in find_instructions(note)})
    if rules:  # the model echoed hostile text: fall back to the offline note
        run.detail["model_note_withheld"] = f"reads as instructions to an agent ({', '.join(rules)})"
        run.detail.pop("note_source", None)
        ctx.log(PLUGIN, f"model note withheld: {run.detail['model_note_withheld']}; using the offline note")
        return None
    cited = tuple(dict.fromkeys(c for h in retrieval.hits for c in [_citation(h)] if _path_of(c) in note))
    if not cited:
        cited = tuple(_citation(h) for h in retrieval.hits[:3])
    return _finish(run, "ok", note, cited)


def _citation(hit: dict[str, Any]) -> str:
    start, end = hit.get("start_line"), hit.get("end_line")
    return f"{hit.get('path')}#L{start}-L{end}" if end and end != start else f"{hit.get('path')}#L{start}"


def _path_of(citation: str) -> str:
    return citation.split("#", 1)[0]


def _log_run(ctx: PluginContext, session: Session, result: GateResult, query: GateQuery | None) -> None:
    d = result.detail
    parts = [
        f"status={result.status}",
        f"elapsed_ms={result.elapsed_ms:.0f}",
        f"chars={len(result.note)}",
        f"session={session.get('id') or '-'}",
        f"mode={query.mode if query else '-'}",
        f"hits={d.get('hits', '-')}",
        f"source={d.get('note_source', '-')}",
        f"cached={'yes' if d.get('cached') else 'no'}",
    ]
    if d.get("model"):
        parts.append(f"model={d['model']} circuit={d.get('circuit', '-')}")
    if d.get("reason"):
        parts.append(f'reason="{clip(str(d["reason"]), 120)}"')
    if query is not None:
        parts.append(f'query="{clip(query.focus, 80)}"')
    ctx.log(PLUGIN, " ".join(parts))
