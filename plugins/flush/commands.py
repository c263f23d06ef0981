"""CLI of the flush plugin: ``lifelong compact`` (replay a compaction from a transcript) and
``lifelong capture list|restore|prune|undo``. Each imports the flush's modules when it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click

from lifelong import clock
from lifelong.cli import emit_json, get_host
from lifelong.contracts import Message, Session
from lifelong.errors import InputError

from . import PLUGIN


def add_commands(cli: click.Group) -> None:
    cli.add_command(compact_cmd)
    cli.add_command(capture_group)


def read_transcript(path: Path) -> list[Message]:
    """A JSONL transcript: one ``{"role", "content", "id"?, "ts"?}`` object per line."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path.name}: cannot read ({exc})") from exc
    messages: list[Message] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{path.name}:{n}: not a JSON object ({exc.args[0]})") from exc
        if not isinstance(item, dict) or not isinstance(item.get("content"), str) or not item.get("role"):
            raise InputError(f'{path.name}:{n}: needs {{"role": ..., "content": "..."}} (id and ts optional)')
        messages.append(
            cast(Message, {k: str(item[k]) for k in ("role", "content", "id", "ts") if k in item})
        )
    return messages


@click.command("compact")
@click.argument("transcript", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option(
    "--session", "session_id", default=None, help="Session id (default: the file name without .jsonl)."
)
@click.option(
    "--path",
    "compaction_path",
    type=click.Choice(["normal", "forced", "overflow"]),
    default="forced",
    show_default=True,
    help="The compaction path to replay (normal needs --total-tokens and --context-window).",
)
@click.option("--total-tokens", type=int, default=None, help="Tokens in use (normal path).")
@click.option("--context-window", type=int, default=None, help="The model's context window (normal path).")
@click.option("--json", "as_json", is_flag=True, help="Print the flush result as JSON.")
def compact_cmd(
    transcript: Path,
    session_id: str | None,
    compaction_path: str,
    total_tokens: int | None,
    context_window: int | None,
    as_json: bool,
) -> None:
    """Replay a compaction of TRANSCRIPT (JSONL of {role, content, id, ts}): flush durable facts to
    today's daily (with a model), capture the messages worth keeping, cache the trivial ones."""
    from .run import load_record

    host = get_host()
    messages = read_transcript(transcript)
    sid = session_id or transcript.name.removesuffix(".jsonl")
    record = load_record(host.ctx, sid)
    session = Session(
        id=sid,
        compaction_count=0 if record is None else record.compaction_count + 1,
        compaction_path=compaction_path,
    )
    if total_tokens is not None:
        session["total_tokens"] = total_tokens
    if context_window is not None:
        session["context_window"] = context_window
    result = host.before_compaction(session, messages)
    if result.status == "ok":
        host.after_compaction(session, result.pointer)
    if as_json:
        emit_json(
            {
                "version": 1,
                "status": result.status,
                "flushed": result.flushed,
                "captured_paths": list(result.captured_paths),
                "cached_count": result.cached_count,
                "pointer": result.pointer,
                "detail": result.detail,
            }
        )
        return
    click.echo(f"compaction of {sid} ({len(messages)} messages): {result.status}")
    detail = result.detail or {}
    if result.status != "ok":
        why = detail.get("reason") or detail.get("error") or "no flush plugin ran"
        logs = (
            " (details in .lifelong/logs/flush.log; the compaction itself goes on)"
            if result.status == "failed"
            else ""
        )
        click.echo(f"  {why}{logs}")
        return
    for fact in cast(list[str], detail.get("facts", [])):
        click.echo(f"  saved: {fact}")
    for path in result.captured_paths:
        click.echo(f"  captured {path}")
    if result.cached_count:
        click.echo(f"  {result.cached_count} short message(s) cached (lifelong capture restore {sid})")
    if result.pointer:
        click.echo(f"pointer: {result.pointer}")


@click.group("capture")
def capture_group() -> None:
    """The compaction cache: list, restore, prune, undo a flush."""


@capture_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def capture_list_cmd(as_json: bool) -> None:
    """Sessions in the compaction cache, with their message counts."""
    from . import tier

    rows = tier.sessions(get_host().ctx.workspace)
    if as_json:
        emit_json({"version": 1, "sessions": rows})
        return
    if not rows:
        click.echo("the compaction cache is empty")
    for r in rows:
        click.echo(f"{r['session']}  {r['messages']} message(s) in {r['files']} file(s)")


@capture_group.command("restore")
@click.argument("session_id")
@click.option("--from", "since", default=None, metavar="ISO8601", help="Only messages at or after this time.")
@click.option("--to", "until", default=None, metavar="ISO8601", help="Only messages at or before this time.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON (content exactly as received).")
def capture_restore_cmd(session_id: str, since: str | None, until: str | None, as_json: bool) -> None:
    """Print the cached (trivial) messages of SESSION_ID exactly as they were received."""
    from . import tier

    host = get_host()
    tz = host.ctx.workspace.timezone
    found = tier.restore(
        host.ctx.workspace,
        session_id,
        since=clock.parse_instant(since, tz) if since else None,
        until=clock.parse_instant(until, tz) if until else None,
    )
    if as_json:
        emit_json({"version": 1, "session": session_id, "messages": [m.__dict__ for m in found]})
        return
    for m in found:
        click.echo(f"[{m.ts}] {m.role}: {m.content}")


@capture_group.command("prune")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def capture_prune_cmd(as_json: bool) -> None:
    """Delete cached messages older than plugins.flush.retention_days (the nightly run does this too)."""
    from . import tier

    host = get_host()
    days = host.plugin_config(PLUGIN)["retention_days"]
    removed = tier.prune(host.ctx.workspace, host.ctx.now(), days)
    if as_json:
        emit_json({"version": 1, "removed": removed, "retention_days": days})
        return
    click.echo(f"removed {len(removed)} cache file(s) older than {days} days")


@capture_group.command("undo")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def capture_undo_cmd(run_id: str, as_json: bool) -> None:
    """Undo one flush (RUN_ID from `lifelong audit`): restore the daily and remove its captured
    notes exactly; refuses when a human edited one of them since."""
    from lifelong.journal import rollback

    host = get_host()
    if not run_id.startswith("flush-"):
        raise InputError(f"{run_id!r} is not a flush run (flush run ids start with 'flush-')")
    with host.ctx.workspace.lock("write"):
        restored = rollback(host.ctx.workspace, run_id)
    if as_json:
        emit_json({"version": 1, "run_id": run_id, "restored": restored})
        return
    click.echo(f"undid {run_id}")
    for rel in restored:
        click.echo(f"  restored {rel}")
