"""The wiki's agent tools (wiki_search, wiki_get, wiki_apply, wiki_lint, wiki_status, memory_why)
and its corpus for ``memory_search corpus="all"`` (claims carrying their id and evidence)."""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import os
import time
from dataclasses import dataclass, field
from typing import Any

from lifelong.contracts import Candidate, SearchRequest
from lifelong.errors import InputError, LifelongError
from lifelong.journal import Journal
from lifelong.text import content_tokens
from lifelong.workspace import daily_date, replace_region

from .compile import claim_id
from .confidence import ConfidenceRule, confidence, freshness, newest_date
from .service import (
    PLUGIN,
    SourceCache,
    compile_and_lint,
    lint_json,
    load_state,
    new_run_id,
    page_cache,
    page_files,
)
from .sources import lines_sha256, parse_citation
from .vault import (
    PAGE_DIRS,
    Claim,
    Evidence,
    Page,
    PageFile,
    claim_state,
    counts_as_active,
    dump_yaml,
    normalise_key,
    page_path,
    read_page,
    render_page,
    slug,
)
from .why import evidence_step, why

# ---------------------------------------------------------------------------------------------
# the page cache and search


@dataclass(frozen=True)
class ClaimIndex:
    """Every claim of the vault with the content stems of its text and page title, and which
    claims each stem occurs in (so a search scores only the claims sharing a query word)."""

    pages: list[PageFile]
    entries: list[tuple[PageFile, Claim, frozenset[str]]]
    by_token: dict[str, list[int]]
    confidence_on: dict[tuple[dt.date, int], float] = field(default_factory=dict)  # (day, claim) memo

    def confidence_now(self, i: int, today: dt.date, rule: ConfidenceRule) -> float:
        key = (today, i)
        if key not in self.confidence_on:
            evidence = self.entries[i][1].evidence
            self.confidence_on[key] = confidence(evidence, today, rule) if evidence else 0.0
        return self.confidence_on[key]


def _signature(root: str) -> list[tuple[str, int, int]]:
    """(path, mtime_ns, size) of every page file under ``root``, by os.scandir (no pathlib)."""
    out: list[tuple[str, int, int]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.name.endswith(".md"):
                try:
                    st = entry.stat()
                except OSError:
                    continue
                out.append((entry.path, st.st_mtime_ns, st.st_size))
    return sorted(out)


SIGNATURE_TTL_S = 1.0


def claim_index(ctx: Any) -> ClaimIndex:
    """The vault's pages and claims, rebuilt only when a page file changed (cached per host; the
    files are looked at again at most once a second, so a search sees an edit within a second)."""
    ws = ctx.workspace
    cached = ctx.state.get("wiki.claims")
    if cached is not None and time.monotonic() - cached[2] < SIGNATURE_TTL_S:
        return cached[1]
    sig = [s for folder in sorted(PAGE_DIRS.values()) for s in _signature(str(ws.wiki_dir / folder))]
    if cached is not None and cached[0] == sig:
        ctx.state["wiki.claims"] = (sig, cached[1], time.monotonic())
        return cached[1]
    pages = list(page_files(ws, page_cache(ctx))[0].values())
    entries: list[tuple[PageFile, Claim, frozenset[str]]] = []
    by_token: dict[str, list[int]] = {}
    for page in pages:
        head = content_tokens(" ".join([page.title, *page.aliases]))
        for c in page.claims:
            toks = content_tokens(c.text) | head
            for t in toks:
                by_token.setdefault(t, []).append(len(entries))
            entries.append((page, c, toks))
    index = ClaimIndex(pages, entries, by_token)
    ctx.state["wiki.claims"] = (sig, index, time.monotonic())
    return index


def pages_now(ctx: Any) -> list[PageFile]:
    return claim_index(ctx).pages


def search_claims(ctx: Any, query: str, limit: int) -> list[dict[str, Any]]:
    """Claims ranked by how much of the query their text and page title cover, times
    (0.5 + 0.5 x confidence now)."""
    want = content_tokens(query)
    if not want:
        return []
    cfg = ctx.config(PLUGIN)
    rule = ConfidenceRule.from_config(cfg)
    today = ctx.now().date()
    index = claim_index(ctx)
    shared: dict[int, int] = {}
    for t in want:
        for i in index.by_token.get(t, ()):
            shared[i] = shared.get(i, 0) + 1
    # best coverage first; the score is at most the coverage, so once the coverage falls below
    # the limit-th best score no later claim can enter the results
    ranked = sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))
    hits = []
    best: list[float] = []  # min-heap of the limit best scores
    for i, n in ranked:
        cover = n / len(want)
        if len(best) >= limit and cover < best[0]:
            break
        page, c, _ = index.entries[i]
        now_conf = index.confidence_now(i, today, rule)
        score = round(cover * (0.5 + 0.5 * now_conf), 4)
        hits.append((score, page, c, now_conf))
        if len(best) < limit:
            heapq.heappush(best, score)
        elif score > best[0]:
            heapq.heapreplace(best, score)
    hits.sort(key=lambda h: (-h[0], h[2].id))
    return [
        {
            "score": score,
            "claim_id": c.id,
            "text": c.text,
            "page_id": page.id,
            "page": page.path,
            "title": page.title,
            "status": claim_state(c.status, now_conf, rule.active_threshold),
            "confidence": now_conf,
            "active": counts_as_active(c.status, now_conf, rule.active_threshold),
            "evidence": [f"{e.path}#{e.lines}" for e in c.evidence],
            "line": page.line_of(f"({c.id})"),
        }
        for score, page, c, now_conf in hits[:limit]
    ]


def supplement(ctx: Any, request: SearchRequest) -> list[Candidate]:
    """Wiki claims as candidates of corpus ``wiki``: ``extra`` holds the claim id, page and
    evidence pointers so the caller can resolve a hit back to its source lines."""
    out = []
    for hit in search_claims(ctx, request.query, request.max_results):
        digest = int(hashlib.sha256(hit["claim_id"].encode()).hexdigest()[:12], 16)
        out.append(
            Candidate(
                chunk_id=-(digest or 1),  # negative: not a chunk of the index (no recall events)
                path=hit["page"],
                start_line=hit["line"],
                end_line=hit["line"],
                # the text names the claim and its evidence too, so a caller that only sees the
                # snippet (memory_search's JSON) can still resolve the hit to its source lines
                text=f"{hit['text']} ({hit['claim_id']}; evidence {', '.join(hit['evidence'])})",
                corpus="wiki",
                heading=hit["title"],
                generated=True,
                hybrid=hit["score"],
                score=hit["score"],
                extra={
                    "claim_id": hit["claim_id"],
                    "page_id": hit["page_id"],
                    "status": hit["status"],
                    "confidence": hit["confidence"],
                    "active": hit["active"],
                    "evidence": hit["evidence"],
                },
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# get


def _chunk_of(ctx: Any, e: Evidence) -> int | None:
    if ctx.recall is None:  # no recall index in this workspace: the pointer still stands
        return None
    try:
        return ctx.recall.chunk_at(e.path, e.start, e.end)
    except Exception:  # an index that cannot be read: the pointer still stands
        return None


def claim_record(ctx: Any, page: PageFile, c: Claim, read: SourceCache) -> dict[str, Any]:
    cfg = ctx.config(PLUGIN)
    rule = ConfidenceRule.from_config(cfg)
    today = ctx.now().date()
    record = c.as_json()
    now_conf = confidence(c.evidence, today, rule) if c.evidence else 0.0
    fresh = freshness(
        c.updated_at or (newest_date(c.evidence) or "") or None,
        today,
        aging_days=int(cfg["aging_days"]),
        stale_days=int(cfg["stale_days"]),
    )
    record.update(
        page=page.path,
        page_id=page.id,
        status=claim_state(c.status, now_conf, rule.active_threshold),
        confidence_now=now_conf,
        active=counts_as_active(c.status, now_conf, rule.active_threshold),
        freshness=fresh.level,
    )
    record["evidence"] = [
        {**evidence_step(e, read), "sha256": e.sha256, "chunk_id": _chunk_of(ctx, e)} for e in c.evidence
    ]
    return record


def wiki_get(ctx: Any, lookup: str) -> dict[str, Any]:
    lookup = str(lookup).strip()
    if not lookup:
        return {"error": "wiki_get: lookup is empty (a page id, claim id, alias, title or path)"}
    read = SourceCache(ctx.workspace)
    pages = pages_now(ctx)
    low = lookup.lower()
    for page in pages:
        for c in page.claims:
            if c.id == lookup:
                return {"claim": claim_record(ctx, page, c, read)}
    for page in pages:
        names = {page.id or "", page.path, page.path.removeprefix("wiki/"), page.title, *page.aliases}
        if low in {n.lower() for n in names if n} or slug(lookup) == (page.id or "").split(".", 1)[-1]:
            return {
                "page": {
                    "id": page.id,
                    "path": page.path,
                    "page_type": page.front.get("page_type"),
                    "title": page.title,
                    "aliases": page.aliases,
                    "source_ids": page.source_ids,
                    "updated_at": str(page.updated_at) if page.updated_at is not None else None,
                    "claims": [claim_record(ctx, page, c, read) for c in page.claims],
                }
            }
    return {"error": f"wiki_get: no page or claim {lookup!r} (try wiki_search)"}


# ---------------------------------------------------------------------------------------------
# apply


def resolve_sources(ctx: Any, sources: list[str], weight: float = 1.0) -> list[Evidence]:
    """Citations ``path#Lx-Ly`` → evidence with the lines' current sha256 (InputError when a
    citation does not resolve: a synthesis cites real lines or is not written)."""
    if not sources:
        raise InputError("wiki_apply needs at least one source (a citation like memory/2026-03-04.md#L4-L5)")
    read = SourceCache(ctx.workspace)
    out = []
    for raw in sources:
        cited = parse_citation(str(raw))
        if cited is None:
            raise InputError(f"source {raw!r} is not a citation like memory/2026-03-04.md#L4-L5")
        path, start, end = cited
        lines = read(path)
        if lines is None:
            raise InputError(f"source {raw!r}: no such file in the workspace")
        if not 1 <= start <= end <= len(lines):
            raise InputError(f"source {raw!r}: lines out of range (the file has {len(lines)})")
        day = daily_date(path)
        out.append(
            Evidence(
                f"{path}#L{start}-L{end}",
                path,
                f"L{start}-L{end}",
                lines_sha256(lines, start, end),
                weight,
                "cited by wiki_apply",
                day.isoformat() if day else None,
            )
        )
    return sorted(set(out), key=lambda e: (e.path, e.start, e.end))


def _write(ctx: Any, writes: dict[str, str]) -> str:
    ws = ctx.workspace
    cfg = ctx.config(PLUGIN)
    with ws.lock("write", timeout=float(cfg["lock_timeout_s"])):
        journal = Journal(ws, new_run_id(ctx.now()), plugin=PLUGIN)
        for rel, text in sorted(writes.items()):
            journal.write(ws.root / rel, text, action="wiki-apply")
    ctx.state.pop("wiki.claims", None)
    return journal.run_id


def create_synthesis(
    ctx: Any, title: str, sources: list[str], body: str = "", claims: list[str] | None = None
) -> dict[str, Any]:
    title = str(title or "").strip()
    if not title:
        raise InputError("create_synthesis needs a title")
    evidence = tuple(resolve_sources(ctx, sources))
    pid = f"synthesis.{slug(title)}"
    rel = page_path(pid, "synthesis")
    if (ctx.workspace.root / rel).exists():
        raise InputError(f"{rel} exists already (use op update_metadata to change it)")
    cfg = ctx.config(PLUGIN)
    rule = ConfidenceRule.from_config(cfg)
    newest = newest_date(evidence)
    made = []
    for text in claims or []:
        text = " ".join(str(text).split())
        if text:
            key = normalise_key(text)
            made.append(
                Claim(
                    claim_id(key),
                    key,
                    text,
                    "active",
                    confidence(evidence, newest or dt.date(1970, 1, 1), rule),
                    evidence,
                    newest.isoformat() if newest else None,
                )
            )
    page = Page(
        pid,
        "synthesis",
        title,
        (),
        tuple(sorted(made, key=lambda c: c.key)),
        tuple(e.source_id for e in evidence),
        newest.isoformat() if newest else None,
    )
    text = render_page(page, rule.active_threshold)
    if body.strip():
        text = replace_region(text, "synthesis", body.strip() + "\n")
    run_id = _write(ctx, {rel: text})
    return {
        "op": "create_synthesis",
        "id": pid,
        "path": rel,
        "claims": [c.id for c in made],
        "run_id": run_id,
    }


def update_metadata(
    ctx: Any,
    lookup: str,
    title: str | None = None,
    aliases: list[str] | None = None,
    sources: list[str] | None = None,
) -> dict[str, Any]:
    pages, texts = page_files(ctx.workspace)
    page = next((p for p in pages.values() if lookup in (p.id, p.path)), None)
    if page is None or page.error:
        raise InputError(f"no wiki page {lookup!r}" + (f" ({page.error})" if page and page.error else ""))
    front = dict(page.front)
    if title is not None:
        if not str(title).strip():
            raise InputError("title must not be empty")
        front["title"] = str(title).strip()
    if aliases is not None:
        front["aliases"] = sorted({str(a).strip() for a in aliases if str(a).strip()})
    added = [e.source_id for e in resolve_sources(ctx, sources)] if sources else []
    front["source_ids"] = sorted({*page.source_ids, *added})
    if not front["source_ids"]:
        raise InputError(f"{page.path} has no source_ids: update_metadata needs at least one source")
    text = f"---\n{dump_yaml(front)}---\n{page.body}"
    if read_page(page.path, text).error:
        raise InputError("the new frontmatter does not read back; nothing written")
    run_id = _write(ctx, {page.path: text})
    return {
        "op": "update_metadata",
        "id": page.id,
        "path": page.path,
        "source_ids": front["source_ids"],
        "run_id": run_id,
    }


# ---------------------------------------------------------------------------------------------
# the tools


SEARCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for among the wiki's claims."},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Default 6."},
    },
    "required": ["query"],
}
GET_PARAMETERS = {
    "type": "object",
    "properties": {
        "lookup": {
            "type": "string",
            "description": "A page id (entity.elena-brandt), claim id (claim.…), alias, title or path.",
        }
    },
    "required": ["lookup"],
}
APPLY_PARAMETERS = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["create_synthesis", "update_metadata"]},
        "title": {
            "type": "string",
            "description": "create_synthesis: the page title; update_metadata: a new title.",
        },
        "body": {"type": "string", "description": "create_synthesis: the synthesis text."},
        "claims": {
            "type": "array",
            "items": {"type": "string"},
            "description": "create_synthesis: claims it states.",
        },
        "sources": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Citations path#Lx-Ly of the lines it rests on (at least one).",
        },
        "lookup": {"type": "string", "description": "update_metadata: the page id or path."},
        "aliases": {
            "type": "array",
            "items": {"type": "string"},
            "description": "update_metadata: the aliases.",
        },
    },
    "required": ["op"],
}
EMPTY = {"type": "object", "properties": {}}
WHY_PARAMETERS = {
    "type": "object",
    "properties": {"id": {"type": "string", "description": "A claim id (claim.…) or a MEMORY.md item key."}},
    "required": ["id"],
}


def _guard(fn: Any) -> Any:
    def run(ctx: Any, **args: Any) -> dict[str, Any]:
        try:
            return fn(ctx, **args)
        except LifelongError as exc:
            return {"error": str(exc)}

    run.__name__ = fn.__name__
    return run


def tool_search(ctx: Any, query: str, max_results: int = 6) -> dict[str, Any]:
    return {"query": query, "results": search_claims(ctx, query, int(max_results))}


def tool_apply(ctx: Any, op: str, **args: Any) -> dict[str, Any]:
    if op == "create_synthesis":
        unknown = set(args) - {"title", "body", "claims", "sources"}
        if unknown:
            raise InputError(f"create_synthesis does not take {', '.join(sorted(unknown))}")
        return create_synthesis(
            ctx,
            args.get("title", ""),
            list(args.get("sources") or []),
            str(args.get("body") or ""),
            list(args.get("claims") or []),
        )
    unknown = set(args) - {"lookup", "title", "aliases", "sources"}
    if unknown:
        raise InputError(f"update_metadata does not take {', '.join(sorted(unknown))}")
    if not args.get("lookup"):
        raise InputError("update_metadata needs lookup (a page id or path)")
    return update_metadata(
        ctx, str(args["lookup"]), args.get("title"), args.get("aliases"), args.get("sources")
    )


def tool_lint(ctx: Any) -> dict[str, Any]:
    outcome = compile_and_lint(ctx, compile_pages=False)
    return {**lint_json(outcome.lint), "reports_written": outcome.written, "run_id": outcome.run_id}


def wiki_status(ctx: Any) -> dict[str, Any]:
    cfg = ctx.config(PLUGIN)
    rule = ConfidenceRule.from_config(cfg)
    today = ctx.now().date()
    pages = pages_now(ctx)
    by_type: dict[str, int] = {}
    claims = active = 0
    for p in pages:
        by_type[str(p.front.get("page_type") or "unknown")] = (
            by_type.get(str(p.front.get("page_type") or "unknown"), 0) + 1
        )
        for c in p.claims:
            claims += 1
            if c.evidence and counts_as_active(
                c.status, confidence(c.evidence, today, rule), rule.active_threshold
            ):
                active += 1
    return {
        "pages": len(pages),
        "by_type": dict(sorted(by_type.items())),
        "claims": claims,
        "active_claims": active,
        "last": load_state(ctx.workspace),
    }


def register_tools(register: Any) -> None:
    read_only = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
    register(
        "wiki_search",
        "Search the belief wiki's claims (each with its confidence and evidence pointers).",
        SEARCH_PARAMETERS,
        _guard(tool_search),
        PLUGIN,
        read_only,
    )
    register(
        "wiki_get",
        "Get a wiki page or claim by id, alias, title or path: claims with their evidence "
        "lines (current text, whether they still match) and confidence.",
        GET_PARAMETERS,
        _guard(lambda ctx, lookup: wiki_get(ctx, lookup)),
        PLUGIN,
        read_only,
    )
    register(
        "wiki_apply",
        "Write to the wiki: create_synthesis (a page summarising cited lines) or "
        "update_metadata (title, aliases, sources of a page). Needs at least one source citation.",
        APPLY_PARAMETERS,
        _guard(tool_apply),
        PLUGIN,
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    )
    register(
        "wiki_lint",
        "Lint the wiki (drift, missing files, contradictions, broken links, stale pages) "
        "and refresh wiki/reports/.",
        EMPTY,
        _guard(tool_lint),
        PLUGIN,
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
    )
    register(
        "wiki_status",
        "Counts of wiki pages and claims and the last compile.",
        EMPTY,
        _guard(wiki_status),
        PLUGIN,
        read_only,
    )
    register(
        "memory_why",
        "Why is this remembered? The provenance of a claim id or MEMORY.md item key: "
        "evidence lines, daily file and date, the recalls and queries that promoted it, the dream run.",
        WHY_PARAMETERS,
        _guard(lambda ctx, id: why(ctx, id)),
        PLUGIN,
        read_only,
    )
