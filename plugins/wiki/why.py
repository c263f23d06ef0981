"""``lifelong why ID`` / ``memory_why``: walk a claim's or a MEMORY.md item's provenance.

claim → its evidence lines (with their current text, and whether they still match) → the daily
file and its date → the MEMORY.md item that promoted it → the recall events and queries that
promoted it → the dream run. The consolidation's records are read from its tables in the index
by name (``dream_candidates``, ``dream_signals``, ``dream_status_log``, ``dream_runs``), the
queries from recall's recorded searches (``ctx.recall.events``); a workspace without them gives a
shorter chain that says what is missing.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from lifelong.errors import InputError
from lifelong.workspace import daily_date

from .service import SourceCache, page_files, read_sources
from .sources import SourceLine, lines_sha256
from .vault import Claim, Evidence

_HEX = re.compile(r"^(?:key:)?([0-9a-f]{4,64})$")


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _rows(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def evidence_step(e: Evidence, read: SourceCache) -> dict[str, Any]:
    lines = read(e.path)
    day = daily_date(e.path)
    step: dict[str, Any] = {
        "source_id": e.source_id,
        "path": e.path,
        "lines": e.lines,
        "weight": e.weight,
        "note": e.note,
        "date": day.isoformat() if day else e.date,
        "daily": day is not None,
    }
    if lines is None:
        step.update(status="missing", text=None)
    else:
        step["text"] = "\n".join(lines[e.start - 1 : e.end]) if e.end <= len(lines) else None
        ok = e.end <= len(lines) and (not e.sha256 or lines_sha256(lines, e.start, e.end) == e.sha256)
        step["status"] = "ok" if ok else "drift"
    return step


def promotion(ctx: Any, key: str | None, run_hint: str | None) -> dict[str, Any]:
    """What consolidation recorded about the item with ``key``: the recalls (with their queries)
    attributed to it and the run that promoted it."""
    out: dict[str, Any] = {"key": key, "recalls": [], "dream_run": None, "missing": []}
    conn = ctx.store.conn
    tables = _tables(conn)
    run_id = run_hint
    if key and "dream_candidates" in tables:
        cand = _rows(
            conn,
            "SELECT key, status, status_run, day, path, start_line, end_line FROM dream_candidates"
            " WHERE key = ?",
            (key,),
        )
        if cand:
            out["candidate"] = cand[0]
            if cand[0]["status"] == "promoted" and cand[0]["status_run"]:
                run_id = run_id or cand[0]["status_run"]
    elif key:
        out["missing"].append("dream_candidates table (no consolidation has run in this index)")
    if key and "dream_signals" in tables:
        recalls = _rows(
            conn,
            "SELECT s.event_id, s.ts, s.day, s.score, s.source, NULL AS query FROM dream_signals s"
            " WHERE s.key = ? ORDER BY s.ts, s.event_id",
            (key,),
        )
        if ctx.recall is not None:
            queries = {e.id: e.query for e in ctx.recall.events(ids=[r["event_id"] for r in recalls])}
            for r in recalls:
                r["query"] = queries.get(r["event_id"])
        else:
            out["missing"].append("recall index (queries unknown)")
        out["recalls"] = recalls
    elif key:
        out["missing"].append("dream_signals table (recalls unknown)")
    if key and run_id is None and "dream_status_log" in tables:
        log = _rows(
            conn,
            "SELECT run_id FROM dream_status_log WHERE key = ? AND new_status = 'promoted'"
            " ORDER BY run_id DESC LIMIT 1",
            (key,),
        )
        run_id = log[0]["run_id"] if log else None
    if key and not out["recalls"] and not out["missing"]:
        out["missing"].append(f"recall events attributed to key {key} (none recorded in this index)")
    if key and not run_id:
        out["missing"].append(f"the dream run that promoted key {key} (none recorded in this index)")
    if run_id:
        run: dict[str, Any] = {"run_id": run_id}
        if "dream_runs" in tables:
            found = _rows(conn, "SELECT started_at, status, mode FROM dream_runs WHERE run_id = ?", (run_id,))
            if found:
                run.update(found[0])
        out["dream_run"] = run
    return out


def _find_claim(ctx: Any, lookup: str) -> tuple[str, Claim] | None:
    pages, _ = page_files(ctx.workspace)
    for p in pages.values():
        for c in p.claims:
            if c.id == lookup:
                return p.path, c
    return None


def _find_item(memory: list[SourceLine], lookup: str) -> SourceLine | None:
    m = _HEX.match(lookup.lower())
    if m:
        found = [i for i in memory if i.key and i.key.startswith(m.group(1))]
        if len(found) > 1:
            raise InputError(f"key {lookup!r} is ambiguous: {', '.join(i.key or '' for i in found[:5])}")
        return found[0] if found else None
    return next((i for i in memory if i.citation == lookup or f"{i.path}#L{i.start}" == lookup), None)


def why(ctx: Any, lookup: str) -> dict[str, Any]:
    """The provenance chain of a claim id, a MEMORY.md item key (or ``MEMORY.md#Lx``)."""
    lookup = lookup.strip()
    if not lookup:
        raise InputError("why needs a claim id (claim.…) or a MEMORY.md item key")
    cfg = ctx.config("wiki")
    memory, _, _ = read_sources(ctx.workspace, cfg)
    read = SourceCache(ctx.workspace)
    out: dict[str, Any] = {"version": 1, "id": lookup}
    item: SourceLine | None = None
    if lookup.startswith("claim."):
        found = _find_claim(ctx, lookup)
        if found is None:
            raise InputError(f"no claim {lookup!r} in the wiki (run `lifelong wiki compile`)")
        page, claim = found
        out.update(kind="claim", text=claim.text, page=page, status=claim.status, confidence=claim.confidence)
        out["evidence"] = [evidence_step(e, read) for e in claim.evidence]
        mem = next(
            (e for e in claim.evidence if e.path == ctx.workspace.relpath(ctx.workspace.memory_file)), None
        )
        if mem is not None:
            item = next((i for i in memory if i.start == mem.start and i.end == mem.end), None)
    else:
        item = _find_item(memory, lookup)
        if item is None:
            raise InputError(f"no claim or MEMORY.md item {lookup!r} (claim ids start with 'claim.')")
        out.update(kind="memory-item", text=item.text)
        out["evidence"] = [
            evidence_step(Evidence(f"{p}#L{s}-L{e}", p, f"L{s}-L{e}", "", 1.0, "cited source"), read)
            for p, s, e in item.cites
        ]
    if item is not None:
        out["memory_item"] = {"path": item.path, "lines": item.lines, "key": item.key, "text": item.text}
        out["promotion"] = promotion(ctx, item.key, item.run_id) if item.key else None
    else:
        out["memory_item"] = None
        out["promotion"] = None
    out["missing"] = chain_gaps(out["evidence"], item, out.get("promotion") or {})
    out["complete"] = not out["missing"]
    return out


def chain_gaps(evidence: list[dict[str, Any]], item: SourceLine | None, promo: dict[str, Any]) -> list[str]:
    """What the chain claim → daily lines → MEMORY.md item → recalls → dream run lacks (pure);
    empty when it is complete."""
    gaps = []
    daily = [s for s in evidence if s["daily"]]
    if not daily:
        gaps.append("a daily note among the evidence (nothing cites one)")
    for s in daily:
        if s["status"] != "ok":
            what = "file is missing" if s["status"] == "missing" else "lines changed since they were cited"
            gaps.append(f"the evidence {s['path']}#{s['lines']} as cited ({what})")
    if item is None:
        gaps.append("a MEMORY.md item (the wiki compiled this claim from the notes; no dream promoted it)")
    elif not item.key:
        gaps.append("a promotion key on the MEMORY.md item (written by hand, not by a dream)")
    else:
        if not promo.get("recalls"):
            gaps.append(f"the recalls that led to promoting key {item.key} (none recorded in this index)")
        if not promo.get("dream_run"):
            gaps.append(f"the dream run that promoted key {item.key} (none recorded in this index)")
    return gaps


def render_why(data: dict[str, Any]) -> list[str]:
    lines = [f"{data['id']}: {data['text']}"]
    if data.get("kind") == "claim":
        lines.append(f"  claim on {data['page']} ({data['status']}, confidence {data['confidence']:.2f})")
    for s in data["evidence"]:
        where = f"{s['path']}#{s['lines']}"
        when = f" written {s['date']}" if s.get("date") else ""
        lines.append(f"  <- evidence {where}{when} [{s['status']}]: {s['text'] or '(file missing)'}")
    item = data.get("memory_item")
    if item:
        lines.append(
            f"  <- MEMORY.md item {item['path']}#{item['lines']}"
            + (f" key:{item['key']}" if item["key"] else "")
        )
    promo = data.get("promotion") or {}
    for r in promo.get("recalls", []):
        lines.append(
            f"  <- recalled {r['day']} ({r['source']}, score {r['score']:.2f}): {r['query'] or '(query unknown)'!r}"
        )
    run = promo.get("dream_run")
    if run:
        lines.append(
            f"  <- promoted by dream run {run['run_id']}"
            + (f" ({run.get('started_at')})" if run.get("started_at") else "")
        )
    for miss in promo.get("missing", []):
        lines.append(f"  (not available: {miss})")
    if data["complete"]:
        lines.append("chain complete")
    else:
        lines.append("chain incomplete: missing " + "; ".join(data["missing"]))
    return lines
