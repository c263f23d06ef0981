"""Layer 1, recall: hybrid BM25 + vector index over the workspace's markdown files. The hook
implementations import their modules when called."""

from __future__ import annotations

from lifelong.hookspecs import hookimpl


@hookimpl
def register_migrations(register):
    from . import tables

    register(tables.migrations)


@hookimpl
def register_tools(register):
    from . import service

    service.register_tools(register)


@hookimpl
def register_commands(cli):
    from . import commands

    commands.add_commands(cli)


@hookimpl
def provide_recall_store(ctx):
    from .api import RecallTables

    return RecallTables(ctx)


@hookimpl
def status_report(ctx):
    from . import status

    return status.recall_status(ctx)
