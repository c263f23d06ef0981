"""The recall plugin's public operations, shared by its tools, its commands and other plugins
(through the tools registry): open the index, sync, search, get."""

from __future__ import annotations

from typing import Any, cast

from lifelong import clock
from lifelong.contracts import MEMORY_GET, MEMORY_INDEX, MEMORY_SEARCH, Corpus, PluginContext, ValidityMode
from lifelong.errors import InputError, LifelongError
from lifelong.privacy import is_private_text

from .index import RecallIndex
from .results import result_json
from .scan import is_generated_path
from .search import Searcher, SearchOutcome, SearchRequest
from .settings import CONFIG_PROPERTIES, DEFAULTS, PLUGIN


def _bounds(key: str) -> dict[str, Any]:
    return {
        k: CONFIG_PROPERTIES[key][k] for k in ("type", "minimum", "maximum") if k in CONFIG_PROPERTIES[key]
    }


def index_for(ctx: PluginContext) -> RecallIndex:
    """The RecallIndex of this host (one per context, created on first use)."""
    idx = ctx.state.get("recall.index")
    if idx is None:
        idx = RecallIndex(ctx, ctx.config(PLUGIN))
        ctx.state["recall.index"] = idx
    return idx


def ensure_synced(ctx: PluginContext) -> None:
    idx = index_for(ctx)
    if idx.config["auto_sync"]:
        idx.sync_if_changed()


def run_search(ctx: PluginContext, request: SearchRequest, *, sync: bool = True) -> SearchOutcome:
    if sync:
        ensure_synced(ctx)
    return Searcher(index_for(ctx)).search(request)


BUDGET_MIN_SCORE = 0.0  # the default min_score of a request with max_tokens


def make_request(
    ctx: PluginContext,
    *,
    query: str,
    max_results: int | None = None,
    min_score: float | None = None,
    corpus: str | None = None,
    mode: str | None = None,
    as_of: str | None = None,
    source: str = "tool",
    task: str | None = None,
    max_tokens: int | None = None,
    scope: str | None = None,
) -> SearchRequest:
    cfg = ctx.config(PLUGIN)
    when = clock.parse_instant(as_of, ctx.workspace.timezone) if as_of else None
    return SearchRequest(
        query=str(query),
        max_results=int(max_results or cfg["max_results"]),
        # a token budget bounds the answer itself: unless the caller names a min_score, the budget
        # is filled with the best matches there are, the weak ones last (on BEAM's 100K chats,
        # FTS-only, the 5,000-token budget was 57% filled and its evidence recall 0.522; 98%, 0.570)
        min_score=float(
            (BUDGET_MIN_SCORE if max_tokens is not None else cfg["min_score"])
            if min_score is None
            else min_score
        ),
        corpus=cast(Corpus, corpus or "memory"),  # checked by SearchRequest.validate
        mode=cast(ValidityMode, mode or ("valid-at" if when else "current")),
        as_of=when,
        source=source,
        session={"task": task} if task else None,
        max_tokens=int(max_tokens) if max_tokens is not None else None,
        scope=scope or "shared",
    ).validate()


SCOPE_PARAMETER = {
    "type": "string",
    "enum": ["shared", "private"],
    "description": "shared (default): never private notes; private: also the notes under memory/private/ "
    "or marked privacy: private (only for the user's own direct chat).",
}

SEARCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for, in natural language or keywords."},
        "max_results": {
            **_bounds("max_results"),
            "description": f"Default {DEFAULTS['max_results']}.",
        },
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100000,
            "description": "Instead of a count: results in rank order until the next would overflow this many "
            "tokens of returned text; a result whose whole message fits is widened to it. The budget is "
            "filled with the best matches there are (min_score 0 unless given).",
        },
        "min_score": {
            **_bounds("min_score"),
            "description": f"Default {DEFAULTS['min_score']} (0 with max_tokens).",
        },
        "corpus": {"type": "string", "enum": ["memory", "wiki", "all"], "description": "Default memory."},
        "scope": SCOPE_PARAMETER,
        "mode": {
            "type": "string",
            "enum": ["current", "valid-at", "all"],
            "description": "current (default): only facts still valid; valid-at: as of as_of; all.",
        },
        "as_of": {"type": "string", "description": "ISO 8601 date/time for mode valid-at."},
        "task": {
            "type": "string",
            "description": "What the user is working on right now (e.g. 'Debug safe-cron-merge.sh'): "
            "results about it rank a little higher.",
        },
        "source": {
            "type": "string",
            "enum": ["tool", "gate", "cli", "eval"],
            "description": "Who is searching (recorded with recall events). Default tool.",
            "x-internal": True,
        },
    },
    "required": ["query"],
}

GET_PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Workspace-relative path, e.g. memory/2026-03-04.md"},
        "from": {"type": "integer", "minimum": 1, "description": "First line (1-based). Default 1."},
        "lines": {
            "type": "integer",
            "minimum": 1,
            "description": f"How many lines. Default: the whole file (at most {DEFAULTS['get_max_lines']}).",
        },
        "scope": SCOPE_PARAMETER,
    },
    "required": ["path"],
}


def memory_search(ctx: PluginContext, **args: Any) -> dict[str, Any]:
    try:
        req = make_request(ctx, **args)
        outcome = run_search(ctx, req)
    except LifelongError as exc:
        return {"error": str(exc)}
    cfg = ctx.config(PLUGIN)
    tz = ctx.workspace.timezone
    results = [result_json(c, cfg["snippet_chars"], tz=tz, query=req.query) for c in outcome.results]
    if cfg["redact_tool_results"]:  # what a tool returns goes to a model (and its provider)
        from lifelong.safety import neutralise_json  # not imported by a CLI search: it prints exact

        for r in results:
            for field in ("snippet", "heading", "extra"):
                if field in r:
                    r[field] = neutralise_json(r[field])
    return {"query": req.query, "corpus": req.corpus, "mode": req.mode, "results": results}


def memory_get(ctx: PluginContext, **args: Any) -> dict[str, Any]:
    rel = str(args.get("path", ""))
    try:
        got = read_lines(
            ctx, rel, args.get("from"), args.get("lines"), scope=str(args.get("scope") or "shared")
        )
    except LifelongError as exc:
        return {"error": str(exc)}
    if ctx.config(PLUGIN)["redact_tool_results"]:  # `lifelong get` (read_lines) stays exact
        from lifelong.safety import neutralise_json

        got["text"] = neutralise_json(got["text"])
    return got


def read_lines(
    ctx: PluginContext, rel: str, start: int | None, count: int | None, *, scope: str = "shared"
) -> dict[str, Any]:
    """Lines of a workspace markdown file; a private note (``lifelong.privacy``) only with scope
    ``private``."""
    ws = ctx.workspace
    path = ws.resolve(rel)
    relpath = ws.relpath(path)
    if not relpath.endswith(".md") or relpath.startswith(".lifelong/"):
        raise InputError(f"{rel}: only markdown files of the workspace can be read")
    if not path.is_file():
        raise InputError(f"{rel}: no such file in the workspace")
    text = ws.read_text(relpath)
    if scope != "private" and is_private_text(relpath, text):
        raise InputError(f"{relpath} is a private note: read it with scope private")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = 1 if start is None else int(start)
    if first < 1:
        raise InputError(f"from: invalid value {first} (lines are numbered from 1)")
    cap = ctx.config(PLUGIN)["get_max_lines"]
    if count is not None and int(count) < 1:
        raise InputError(f"lines: invalid value {count} (at least 1)")
    n = cap if count is None else min(int(count), cap)
    chunk = lines[first - 1 : first - 1 + n]
    return {
        "path": relpath,
        "from": first,
        "to": first + len(chunk) - 1 if chunk else first - 1,
        "total_lines": len(lines),
        "text": "\n".join(chunk),
        "generated": is_generated_path(relpath),
        "truncated": first - 1 + n < len(lines),
    }


INDEX_PARAMETERS = {"type": "object", "properties": {}}


def memory_index(ctx: PluginContext) -> dict[str, Any]:
    """Bring the index in line with the files now (what changed is re-chunked and embedded)."""
    try:
        report = index_for(ctx).sync_if_changed()  # never waits for another process's embedding
    except LifelongError as exc:
        return {"error": str(exc)}
    if report is None:
        return {"changed": False}
    return {"changed": True, **report.as_json()}


def register_tools(register: Any) -> None:
    register(
        MEMORY_SEARCH,
        "Search the agent's long-term memory (markdown notes, MEMORY.md, and with corpus=all the wiki). "
        "Returns snippets with a 'Source: path#Lx-Ly' citation; use memory_get to read more lines. "
        "A result dated after today is marked upcoming (a plan); also_dates lists the other days the "
        "same line was written on. Records what was looked up (recall events), which the nightly consolidation learns from.",
        SEARCH_PARAMETERS,
        memory_search,
        PLUGIN,
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    )
    register(
        MEMORY_GET,
        "Read lines of a memory markdown file by workspace-relative path.",
        GET_PARAMETERS,
        memory_get,
        PLUGIN,
        {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    )
    register(
        MEMORY_INDEX,
        "Index the memory files that changed since the last index (writes the derived index only; "
        "the markdown files are never changed). Plugins call it after writing notes.",
        INDEX_PARAMETERS,
        memory_index,
        PLUGIN,
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    )
