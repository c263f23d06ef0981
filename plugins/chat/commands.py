"""``lifelong chat``: the reference agent in a terminal (see agent.py, imported when it runs)."""

from __future__ import annotations

import sys

import click

from lifelong.cli import get_host


@click.command("chat")
@click.option("--model", default=None, help="A litellm model id (default: llm.model; none: offline mode).")
@click.option("--session", "session_id", default="chat", show_default=True, help="Session id.")
@click.option(
    "--context-window",
    type=click.IntRange(min=200),
    default=128_000,
    show_default=True,
    help="Tokens the model holds; the oldest half is compacted (with a flush) at 80%.",
)
def chat_cmd(model: str | None, session_id: str, context_window: int) -> None:
    """Chat with a memory: the gate's note before each reply, the memory tools, notes to today's
    daily (/note), compaction with a flush when the window fills, a summary at the end. Without a
    model it runs offline and its replies quote what the memory gate found."""
    from lifelong.runtime import Memory

    from .agent import ChatAgent

    host = get_host()
    memory = Memory(host.ctx.workspace, host=host)
    model = model or (host.ctx.workspace.config.get("llm") or {}).get("model")
    agent = ChatAgent(
        memory, model=model, session_id=session_id, context_window=context_window, echo=click.echo
    )
    agent.start()
    stdin = sys.stdin  # click.get_text_stream is deprecated (gone in Click 9)
    interactive = stdin.isatty()
    while True:
        if interactive:
            click.echo("you> ", nl=False)
        line = stdin.readline()
        if not line:
            break
        if not agent.handle(line):
            break
    agent.finish()
