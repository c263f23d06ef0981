"""Layer 3, dreaming: nightly consolidation (light -> REM -> deep) promoting what recurs into
MEMORY.md. The logic lives in the other modules; these are the hook implementations only, and
they import those modules when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import (
        ConsolidationRun,
        FileChanges,
        JSONObject,
        MigrationRegistrar,
        PluginContext,
        StatusReport,
        ToolRegistrar,
    )


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
    from . import service

    service.register(register)


@hookimpl
def on_files_changed(ctx: PluginContext, changes: FileChanges) -> None:
    from . import linemap

    linemap.record_snapshots(ctx, [*changes.new, *changes.modified])


@hookimpl
def dreaming_phase(ctx: PluginContext, phase: str, run: ConsolidationRun) -> JSONObject | None:
    from .run import run_phase

    return run_phase(ctx, phase, run)


@hookimpl
def status_report(ctx: PluginContext) -> StatusReport:
    from . import status

    return status.dreaming_status(ctx)
