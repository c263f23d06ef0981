"""CLI command of the gate plugin: ``lifelong gate MESSAGE``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from lifelong.cli import emit_json, get_host
from lifelong.contracts import Message, Session
from lifelong.errors import InputError

from .eligibility import CHAT_TYPES, SESSION_KINDS
from .query import QUERY_MODES


def add_commands(cli: click.Group) -> None:
    cli.add_command(gate_cmd)


def read_thread(path: Path) -> list[Message]:
    """A JSONL file of ``{"role": "user"|"assistant", "content": "..."}`` lines, oldest first."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--recent {path}: cannot read ({exc})") from exc
    thread: list[Message] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InputError(f"--recent {path}:{n}: not a JSON object ({exc.args[0]})") from exc
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            raise InputError(f'--recent {path}:{n}: needs {{"role": "user"|"assistant", "content": "..."}}')
        thread.append({"role": item["role"], "content": str(item.get("content") or "")})
    return thread


@click.command("gate")
@click.argument("message")
@click.option(
    "--recent",
    "recent_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    metavar="FILE.jsonl",
    help='Earlier turns, one {"role": "user"|"assistant", "content": "..."} per line, oldest first.',
)
@click.option(
    "--mode",
    type=click.Choice(QUERY_MODES),
    default=None,
    help="Query mode (default: plugins.gate.query_mode, normally recent).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the gate result as JSON.")
@click.option(
    "--session-type",
    type=click.Choice(CHAT_TYPES),
    default="direct",
    show_default=True,
    help="Chat type of the simulated session.",
)
@click.option(
    "--kind",
    type=click.Choice(SESSION_KINDS),
    default="interactive",
    show_default=True,
    help="Kind of run (the gate only runs for interactive ones).",
)
@click.option("--chat-id", default=None, help="Conversation id (matched against allowed/denied_chat_ids).")
@click.option("--session-id", default="cli", show_default=True, help="Session id (the cache is per session).")
def gate_cmd(
    message: str,
    recent_file: Path | None,
    mode: str | None,
    as_json: bool,
    session_type: str,
    kind: str,
    chat_id: str | None,
    session_id: str,
) -> None:
    """Run the pre-reply gate on MESSAGE as the runtime would before a reply: print the status
    line, the hidden note and the exact prefix the main agent would receive."""
    host = get_host()
    session: Session = {
        "id": session_id,
        "chat_type": session_type,
        "kind": kind,
        "messages": read_thread(recent_file) if recent_file else [],
    }
    if chat_id is not None:  # no chat id: the key is absent (the gate reads both alike)
        session["chat_id"] = chat_id
    if mode:
        session["query_mode"] = mode
    result = host.before_reply(session, message)
    if as_json:
        emit_json(
            {
                "version": 1,
                "status": result.status,
                "note": result.note,
                "prefix": result.prefix,
                "elapsed_ms": result.elapsed_ms,
                "summary_chars": len(result.note),
                "citations": list(result.citations),
                "source": result.source,
                "detail": result.detail,
                "verbose": result.verbose_line(),
            }
        )
        return
    click.echo(result.verbose_line())
    detail = result.detail or {}
    for key in ("reason", "error", "model_error", "model_skipped"):
        if detail.get(key):
            click.echo(f"{key.replace('_', ' ')}: {detail[key]}")
    click.echo(f"note: {result.note}" if result.note else "note: (none)")
    if result.prefix:
        click.echo("prefix:")
        click.echo(result.prefix)
    else:
        click.echo("prefix: (empty: nothing is prepended)")
