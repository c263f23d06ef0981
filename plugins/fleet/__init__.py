"""Fleet mode: nightly consolidation for many workspaces on a task queue (see docs/fleet.md)."""

from __future__ import annotations

import click

from lifelong.hookspecs import hookimpl


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)
