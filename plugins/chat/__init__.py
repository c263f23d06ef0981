"""``lifelong chat``: a reference chat agent wired to every memory hook (offline without a model)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def register_commands(cli: click.Group) -> None:
    from .commands import chat_cmd

    cli.add_command(chat_cmd)
