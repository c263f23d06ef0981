"""Compaction: flush, capture and the reversible tier (see docs/flush.md). Before the runtime
summarises old turns away, save what matters; nothing said is lost. The hook implementations
import their modules when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import (
        ConsolidationRun,
        FlushResult,
        Message,
        MigrationRegistrar,
        PluginContext,
        Session,
        StatusReport,
    )

PLUGIN = "flush"


@hookimpl
def register_migrations(register: MigrationRegistrar) -> None:
    from . import tables

    register(tables.migrations)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)


@hookimpl
def before_compaction(ctx: PluginContext, session: Session, messages: list[Message]) -> FlushResult:
    """Fails open: an exception is logged by the host and the compaction goes on (status failed)."""
    from .run import flush_before_compaction

    return flush_before_compaction(ctx, session, messages)


@hookimpl
def after_compaction(ctx: PluginContext, session: Session, summary: str) -> None:
    from .run import index_captured

    index_captured(ctx)


@hookimpl
def after_consolidation(ctx: PluginContext, run: ConsolidationRun) -> None:
    """The nightly run prunes the compaction cache past its retention."""
    from . import tier

    removed = tier.prune(ctx.workspace, run.now, ctx.config(PLUGIN)["retention_days"])
    if removed:
        ctx.log(PLUGIN, f"pruned {len(removed)} compaction cache file(s) past retention")


@hookimpl
def status_report(ctx: PluginContext) -> StatusReport:
    from . import status

    return status.flush_status(ctx)
