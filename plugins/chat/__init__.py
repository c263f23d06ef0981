"""``lifelong chat``: a reference chat agent wired to every memory hook (offline without a model)."""

from __future__ import annotations

import click

from lifelong.hookspecs import hookimpl

from .commands import chat_cmd


@hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(chat_cmd)
