"""The contradiction gate with bi-temporal supersede (see docs/supersede.md): every durable
memory write is checked against the related facts already in memory; search in mode current
never returns a superseded fact. The hook implementations import their modules when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import (
        Candidate,
        FileChanges,
        MigrationRegistrar,
        PluginContext,
        RelatedFact,
        SearchRequest,
        StatusReport,
        ToolRegistrar,
        WriteCandidate,
        WriteDecision,
    )

PLUGIN = "supersede"


@hookimpl
def register_migrations(register: MigrationRegistrar) -> None:
    from . import tables

    register(tables.migrations)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)


@hookimpl
def register_tools(register: ToolRegistrar) -> None:
    from . import commands

    commands.register_tools(register)


@hookimpl
def before_message_write(
    ctx: PluginContext, candidate: WriteCandidate, existing: list[RelatedFact]
) -> WriteDecision:
    """Fails open: a crash in detection is logged and the write is allowed."""
    from .gate import decide_write

    return decide_write(ctx, candidate, existing)


@hookimpl
def retrieval_post(ctx: PluginContext, request: SearchRequest, candidates: list[Candidate]) -> None:
    from . import reading

    if request.mode in ("current", "all"):
        # the newest statement of a slot first, both shown: in "all" too (the pre-reply gate's mode,
        # which also sees superseded facts, to flag them)
        embedder = None
        if ctx.config("supersede")["learned_reader"]:
            try:
                embedder = ctx.embedder
            except Exception:  # a misconfigured provider: the rules alone
                embedder = None
        reading.newest_first(candidates, query=request.query, embedder=embedder, tz=ctx.workspace.timezone)
    reading.filter_candidates(ctx, request, candidates)


@hookimpl
def on_files_changed(ctx: PluginContext, changes: FileChanges) -> None:
    from . import reading

    reading.after_sync(ctx, changes)


@hookimpl
def status_report(ctx: PluginContext) -> StatusReport:
    from . import status

    return status.supersede_status(ctx)


__all__ = ["PLUGIN"]
