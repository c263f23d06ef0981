"""The contradiction gate with bi-temporal supersede (see docs/supersede.md): every durable
memory write is checked against the related facts already in memory; search in mode current
never returns a superseded fact."""

from __future__ import annotations

import click

from lifelong.contracts import (
    Candidate,
    FileChanges,
    RelatedFact,
    SearchRequest,
    StatusReport,
    WriteCandidate,
    WriteDecision,
)
from lifelong.hookspecs import hookimpl
from lifelong.host import Context

from . import commands, reading, status, tables
from .gate import PLUGIN, decide_write


@hookimpl
def register_migrations(register):
    register(tables.migrations)


@hookimpl
def register_commands(cli: click.Group) -> None:
    commands.add_commands(cli)


@hookimpl
def register_tools(register) -> None:
    commands.register_tools(register)


@hookimpl
def before_message_write(
    ctx: Context, candidate: WriteCandidate, existing: list[RelatedFact]
) -> WriteDecision:
    """Fails open: a crash in detection is logged and the write is allowed."""
    return decide_write(ctx, candidate, existing)


@hookimpl
def retrieval_post(ctx: Context, request: SearchRequest, candidates: list[Candidate]) -> None:
    if request.mode == "current":
        reading.newest_first(candidates)
    reading.filter_candidates(ctx, request, candidates)


@hookimpl
def on_files_changed(ctx: Context, changes: FileChanges) -> None:
    reading.after_sync(ctx, changes)


@hookimpl
def status_report(ctx: Context) -> StatusReport:
    return status.supersede_status(ctx)


__all__ = ["PLUGIN"]
