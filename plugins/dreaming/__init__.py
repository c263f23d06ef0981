"""Layer 3, dreaming: nightly consolidation (light -> REM -> deep) promoting what recurs into
MEMORY.md. The logic lives in the other modules; these are the hook implementations only."""

from __future__ import annotations

from lifelong.hookspecs import hookimpl

from . import commands, linemap, service, status, tables
from .run import run_phase


@hookimpl
def register_migrations(register):
    register(tables.migrations)


@hookimpl
def register_commands(cli):
    commands.add_commands(cli)


@hookimpl
def register_tools(register):
    service.register(register)


@hookimpl
def on_files_changed(ctx, changes):
    linemap.record_snapshots(ctx, [*changes.new, *changes.modified])


@hookimpl
def dreaming_phase(ctx, phase, run):
    return run_phase(ctx, phase, run)


@hookimpl
def status_report(ctx):
    return status.dreaming_status(ctx)
