"""Layer 4, the belief wiki: claims with evidence, confidence, lint, dashboards and "why?"
(see docs/wiki.md)."""

from __future__ import annotations

import click

from lifelong.contracts import Candidate, ConsolidationRun, SearchRequest, StatusReport
from lifelong.hookspecs import hookimpl
from lifelong.host import Context

from . import commands, tools
from .service import PLUGIN, compile_and_lint
from .status import wiki_status_report


@hookimpl
def register_tools(register):
    tools.register_tools(register)


@hookimpl
def register_commands(cli: click.Group) -> None:
    commands.add_commands(cli)


@hookimpl
def after_consolidation(ctx: Context, run: ConsolidationRun) -> None:
    """Compile and lint after the night's promotions, writing through the run's journal so
    `lifelong dream rollback RUN` undoes the wiki's writes too."""
    if getattr(run, "dry_run", False) or getattr(run, "journal", None) is None:
        return
    if not ctx.config(PLUGIN)["compile_after_consolidation"]:
        return
    outcome = compile_and_lint(ctx, journal=run.journal, now=run.now)
    ctx.log(PLUGIN, f"run {run.run_id}: wiki wrote {len(outcome.written)} file(s)")


@hookimpl
def corpus_supplement(ctx: Context, request: SearchRequest) -> list[Candidate]:
    return tools.supplement(ctx, request)


@hookimpl
def status_report(ctx: Context) -> StatusReport:
    return wiki_status_report(ctx)
