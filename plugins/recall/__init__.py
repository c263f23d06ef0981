"""Layer 1, recall: hybrid BM25 + vector index over the workspace's markdown files."""

from __future__ import annotations

from lifelong.hookspecs import hookimpl

from . import commands, service, status, tables


@hookimpl
def register_migrations(register):
    register(tables.migrations)


@hookimpl
def register_tools(register):
    service.register_tools(register)


@hookimpl
def register_commands(cli):
    commands.add_commands(cli)


@hookimpl
def status_report(ctx):
    return status.recall_status(ctx)
