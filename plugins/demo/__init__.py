"""``lifelong demo``: the whole suite on a scripted example workspace, offline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    cli.add_command(commands.demo_cmd)
