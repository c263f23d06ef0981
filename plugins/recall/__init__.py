"""Layer 1, recall: hybrid BM25 + vector index over the workspace's markdown files. The hook
implementations import their modules when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import MigrationRegistrar, PluginContext, RecallStore, StatusReport, ToolRegistrar


@hookimpl
def register_migrations(register: MigrationRegistrar) -> None:
    from . import tables

    register(tables.migrations)


@hookimpl
def register_tools(register: ToolRegistrar) -> None:
    from . import service

    service.register_tools(register)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)


@hookimpl
def provide_recall_store(ctx: PluginContext) -> RecallStore:
    from .api import RecallTables

    return RecallTables(ctx)


@hookimpl
def status_report(ctx: PluginContext) -> StatusReport:
    from . import status

    return status.recall_status(ctx)
