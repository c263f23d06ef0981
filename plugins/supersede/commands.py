"""CLI and agent tool of the supersede plugin: ``lifelong remember``, ``lifelong contradictions``,
``lifelong history`` and the ``remember`` tool."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from typing import Any

import click

from lifelong.cli import emit_json, get_host
from lifelong.contracts import MEMORY_INDEX, REMEMBER, PluginContext, WriteCandidate
from lifelong.errors import InputError, LifelongError
from lifelong.workspace import append_text

# the fact model, the journal, the safety rules and the ledger are imported by the functions that
# use them: this module is imported whenever the CLI lists its commands

PLUGIN = "supersede"
MAX_TEXT = 2000


def remember(ctx: PluginContext, text: str, subject: str | None = None) -> dict[str, Any]:
    """Write one fact to today's daily through the gate (``before_message_write``): a block
    writes nothing. Secrets are redacted, invisible characters stripped; the append is journaled
    and audited, then the index is synced so search sees it at once."""
    from lifelong.journal import Journal
    from lifelong.safety import redact_secrets, strip_invisible

    clean = redact_secrets(strip_invisible(" ".join(str(text or "").split())))[0]
    if not clean:
        raise InputError("nothing to remember: the text is empty")
    if len(clean) > MAX_TEXT:
        raise InputError(f"text too long ({len(clean)} characters; at most {MAX_TEXT} per fact)")
    subject = " ".join(str(subject).split()) if subject else None
    ws = ctx.workspace
    now = ctx.now()
    rel = f"memory/{now.date().isoformat()}.md"
    candidate = WriteCandidate(
        text=clean, target=rel, source="remember", subject=subject, written_on=now.date()
    )
    decision = ctx.host.decide_write(candidate, [])
    out: dict[str, Any] = {
        "action": decision.action,
        "reason": decision.reason,
        "supersedes": list(decision.supersedes),
        "conflicts": [
            {"path": f.path, "start_line": f.start_line, "end_line": f.end_line, "text": f.text}
            for f in decision.conflicts
        ],
        "path": rel,
        "written": False,
    }
    if decision.action == "block":
        return out
    path = ws.root / rel
    run_id = f"remember-{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    with ws.lock("write"):
        current = path.read_bytes().decode("utf-8") if path.exists() else f"# {now.date().isoformat()}\n"
        # the heading is the time only: a word there would become a concept of the concept index
        new = append_text(current, f"\n## {now.strftime('%H:%M')}\n- {clean}\n")
        Journal(ws, run_id, plugin=PLUGIN).write(path, new, action="remember")
    out.update(written=True, line=len(new.rstrip("\n").split("\n")), run_id=run_id)
    if MEMORY_INDEX in ctx.host.tools:
        ctx.call_tool(MEMORY_INDEX)
    return out


REMEMBER_PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "description": "One self-contained fact, as the user stated it, e.g. 'The team sync moved to "
            "Thursday 10:00'. Name who and what it is about; no pronouns that need the chat to make sense.",
        },
        "subject": {
            "type": "string",
            "description": "Optional: what the fact is about, in a few words (e.g. 'team sync'), when the "
            "text alone does not make it clear.",
        },
    },
    "required": ["text"],
}


def remember_tool(ctx: PluginContext, **args: Any) -> dict[str, Any]:
    try:
        return remember(ctx, args.get("text", ""), args.get("subject"))
    except InputError as exc:
        return {"error": str(exc)}


def register_tools(register: Any) -> None:
    register(
        REMEMBER,
        "Save one durable fact the user told you (a preference, a decision, a date, a changed plan) to "
        "today's memory notes. The fact is checked against what memory already holds: the result says "
        "whether it was written ('allow'), written with a warning that it contradicts an earlier fact "
        "('warn'), refused ('block'), or written as the new current version of an older fact "
        "('supersede'). Tell the user when a warning names a conflicting fact.",
        REMEMBER_PARAMETERS,
        remember_tool,
        PLUGIN,
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False},
    )


def add_commands(cli: click.Group) -> None:
    cli.add_command(remember_cmd)
    cli.add_command(contradictions_cmd)
    cli.add_command(history_cmd)


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@click.command("remember")
@click.argument("text")
@click.option(
    "--subject", default=None, help="What the fact is about, when the text does not say it clearly."
)
@click.option("--json", "as_json", is_flag=True, help="Print the decision as JSON.")
def remember_cmd(text: str, subject: str | None, as_json: bool) -> None:
    """Write TEXT as a fact to today's daily through the contradiction gate and print the decision
    (allow, warn, block or supersede). A blocked fact is not written (exit status 1)."""
    host = get_host()
    out = remember(host.ctx, text, subject)
    if as_json:
        emit_json(out)
    else:
        where = f"{out['path']}:{out['line']}" if out["written"] else "not written"
        click.echo(f"{out['action']}: {where}")
        if out["reason"] and out["action"] != "allow":
            click.echo(f"  {out['reason']}")
    if not out["written"]:
        raise SystemExit(1)


@click.command("contradictions")
@click.option("--json", "as_json", is_flag=True, help="Print the log entries as JSON.")
@click.option(
    "--limit", type=click.IntRange(1, 100000), default=50, show_default=True, help="Newest N entries."
)
def contradictions_cmd(as_json: bool, limit: int) -> None:
    """List the contradiction gate's log (.lifelong/contradictions.jsonl): every write it warned
    about, blocked or let supersede an older fact, newest last."""
    from . import ledger

    host = get_host()
    entries, bad = ledger.read_log(host.ctx.workspace)
    entries = entries[-limit:]
    for e in entries:  # a write whose run was rolled back never stood: say so
        run_id = (e.get("candidate") or {}).get("run_id")
        if run_id:
            e["rolled_back"] = rolled_back(host.ctx.workspace, run_id)
    if as_json:
        emit_json({"entries": entries, "unreadable_lines": bad})
        return
    if not entries:
        click.echo("no contradictions logged")
    for e in entries:
        cand = e.get("candidate") or {}
        undone = rolled_back(host.ctx.workspace, cand.get("run_id"))
        where = f"{cand.get('target')} (rolled back: run {cand['run_id']})" if undone else cand.get("target")
        click.echo(
            f"{e.get('time', '?')}  {e.get('action', '?'):<9} {_short(cand.get('text', ''))!r} -> {where}"
        )
        for c in e.get("conflicts") or []:
            lines = f"#L{c.get('start_line')}" if c.get("start_line") else ""
            click.echo(f"    vs {c.get('path')}{lines} {_short(c.get('text', ''))!r} ({c.get('detail')})")
        if not e.get("conflicts") and e.get("reason"):
            click.echo(f"    {e['reason']}")
    if bad:
        click.echo(f"({bad} unreadable line(s) skipped)", err=True)


def rolled_back(workspace: Any, run_id: str | None) -> bool:
    """Whether the run that made a logged write was rolled back since."""
    if not run_id:
        return False
    try:
        from lifelong.journal import Journal

        return Journal(workspace, run_id).rolled_back
    except LifelongError:  # a run id no journal could have
        return False


def history_rows(conn: Any, subject: str) -> list[dict[str, Any]]:
    """Every fact the gate has seen about ``subject``: its subject stems hold every stem of the
    query, or its text holds every word of it ("manager" finds "My manager is now Priyanka Rao",
    whose subject is the names)."""
    from lifelong.facts import extract
    from lifelong.text import content_tokens

    from . import ledger

    terms = sorted(extract(subject, subject=subject).subject or content_tokens(subject))
    plain = sorted({w.casefold() for w in subject.split() if len(w) > 1})
    if not (terms or plain) or not ledger.has_table(conn, "supersede_facts"):
        return []
    by_subject = " AND ".join("subject LIKE ?" for _ in terms) or "0"
    by_text = " AND ".join("lower(text) LIKE ?" for _ in plain) or "0"
    cur = conn.execute(
        f"SELECT * FROM supersede_facts WHERE ({by_subject}) OR ({by_text})"
        " ORDER BY COALESCE(validity_start, ingestion_time), ingestion_time",
        [f"% {t} %" for t in terms] + [f"%{w}%" for w in plain],
    )
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


@click.command("history")
@click.argument("subject")
@click.option("--json", "as_json", is_flag=True, help="Print the timeline as JSON.")
def history_cmd(subject: str, as_json: bool) -> None:
    """Show SUBJECT's validity timeline: every fact about it the gate has seen, when each held
    (from - until), what superseded it, and whether it is contested or needs review."""
    from . import ledger

    host = get_host()
    tz = host.ctx.workspace.timezone
    rows = history_rows(host.store.conn, subject)
    if as_json:
        emit_json(
            [
                {
                    **{
                        k: r[k]
                        for k in ("id", "path", "start_line", "end_line", "text", "source", "strength")
                    },
                    "valid_from": ledger.iso(r["validity_start"], tz),
                    "valid_until": ledger.iso(r["validity_end"], tz),
                    "ingested": ledger.iso(r["ingestion_time"], tz),
                    "superseded_by": r["superseded_by"],
                    "supersedes": json.loads(r["supersedes"] or "[]"),
                    "contested": bool(r["contested"]),
                    "review": bool(r["review"]),
                }
                for r in rows
            ]
        )
        return
    if not rows:
        mode = host.ctx.config(PLUGIN).get("mode", "warn")
        if mode != "supersede":
            click.echo(
                f"no facts about {subject!r}: the gate keeps a timeline only in mode supersede "
                f"(this workspace: {mode}); `lifelong contradictions` lists what it warned about"
            )
        else:
            click.echo(f"no facts about {subject!r} in the gate's history")
        return

    def day(ts: float | None) -> str:
        return dt.datetime.fromtimestamp(ts, tz).strftime("%Y-%m-%d %H:%M") if ts is not None else "…"

    for r in rows:
        state = "superseded" if r["validity_end"] is not None else "current"
        if r["superseded_by"] == "expired":
            state = "expired"
        flags = "".join([" contested" if r["contested"] else "", " review" if r["review"] else ""])
        until = day(r["validity_end"]) if r["validity_end"] is not None else "now"
        where = f"{r['path']}#L{r['start_line']}" if r["start_line"] else r["path"]
        click.echo(
            f"{day(r['validity_start'])} -> {until:<16} {state}{flags}  {where}  {_short(r['text'])!r}"
        )
        if r["superseded_by"] and r["superseded_by"] != "expired":
            click.echo(f"    superseded by {r['superseded_by']}")
