"""Compaction: flush, capture and the reversible tier (see docs/flush.md). Before the runtime
summarises old turns away, save what matters; nothing said is lost."""

from __future__ import annotations

import click

from lifelong.contracts import ConsolidationRun, FlushResult, Message, Session, StatusReport
from lifelong.hookspecs import hookimpl
from lifelong.host import Context

from . import commands, status, tables, tier
from .run import PLUGIN, flush_before_compaction, index_captured


@hookimpl
def register_migrations(register):
    register(tables.migrations)


@hookimpl
def register_commands(cli: click.Group) -> None:
    commands.add_commands(cli)


@hookimpl
def before_compaction(ctx: Context, session: Session, messages: list[Message]) -> FlushResult:
    """Fails open: an exception is logged by the host and the compaction goes on (status failed)."""
    return flush_before_compaction(ctx, session, messages)


@hookimpl
def after_compaction(ctx: Context, session: Session, summary: str) -> None:
    index_captured(ctx)


@hookimpl
def after_consolidation(ctx: Context, run: ConsolidationRun) -> None:
    """The nightly run prunes the compaction cache past its retention."""
    removed = tier.prune(ctx.workspace, run.now, ctx.config(PLUGIN)["retention_days"])
    if removed:
        ctx.log(PLUGIN, f"pruned {len(removed)} compaction cache file(s) past retention")


@hookimpl
def status_report(ctx: Context) -> StatusReport:
    return status.flush_status(ctx)
