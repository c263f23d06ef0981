"""Layer 3, dreaming: nightly consolidation (light -> REM -> deep) promoting what recurs into
MEMORY.md. The logic lives in the other modules; these are the hook implementations only, and
they import those modules when called."""

from __future__ import annotations

from lifelong.hookspecs import hookimpl


@hookimpl
def register_migrations(register):
    from . import tables

    register(tables.migrations)


@hookimpl
def register_commands(cli):
    from . import commands

    commands.add_commands(cli)


@hookimpl
def register_tools(register):
    from . import service

    service.register(register)


@hookimpl
def on_files_changed(ctx, changes):
    from . import linemap

    linemap.record_snapshots(ctx, [*changes.new, *changes.modified])


@hookimpl
def dreaming_phase(ctx, phase, run):
    from .run import run_phase

    return run_phase(ctx, phase, run)


@hookimpl
def status_report(ctx):
    from . import status

    return status.dreaming_status(ctx)
