"""Layer 2, the pre-reply gate: before each eligible reply, look in memory and hand the main
agent one hidden, untrusted note of at most 220 characters (see docs/gate.md). The hook
implementations import their modules when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import GateResult, PluginContext, Session


@hookimpl
def before_prompt_build(ctx: PluginContext, session: Session) -> GateResult:
    """Return a ``GateResult`` whose ``prefix`` goes before the user-role prompt. Fails open:
    never raises (a crash is status ``failed``, logged to .lifelong/logs/gate.log).

    ``session`` is a dict (every key optional): ``id``; ``chat_type`` direct|group|channel;
    ``kind`` interactive|subagent|cron|heartbeat|oneshot|gate (only interactive runs);
    ``chat_id``; ``gate_enabled`` (per-session toggle, default True); ``messages``, the recent
    thread oldest first, ``[{"role": "user"|"assistant", "content": str}, ...]``; ``message``,
    the latest user message (set by ``host.before_reply``); ``model``, the session's model."""
    from . import gate

    return gate.run_gate(ctx, session)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)
