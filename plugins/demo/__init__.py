"""``lifelong demo``: the whole suite on a scripted example workspace, offline."""

from __future__ import annotations

import click

from lifelong.hookspecs import hookimpl

from . import commands


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(commands.demo_cmd)
