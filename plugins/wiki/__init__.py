"""Layer 4, the belief wiki: claims with evidence, confidence, lint, dashboards and "why?"
(see docs/wiki.md). The hook implementations import their modules when called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import (
        Candidate,
        ConsolidationRun,
        PluginContext,
        SearchRequest,
        StatusReport,
        ToolRegistrar,
    )

PLUGIN = "wiki"


@hookimpl
def register_tools(register: ToolRegistrar) -> None:
    from . import tools

    tools.register_tools(register)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)


@hookimpl
def after_consolidation(ctx: PluginContext, run: ConsolidationRun) -> None:
    """Compile and lint after the night's promotions, writing through the run's journal so
    `lifelong dream rollback RUN` undoes the wiki's writes too."""
    if getattr(run, "dry_run", False) or getattr(run, "journal", None) is None:
        return
    if not ctx.config(PLUGIN)["compile_after_consolidation"]:
        return
    from .service import compile_and_lint

    outcome = compile_and_lint(ctx, journal=run.journal, now=run.now)
    ctx.log(PLUGIN, f"run {run.run_id}: wiki wrote {len(outcome.written)} file(s)")


@hookimpl
def corpus_supplement(ctx: PluginContext, request: SearchRequest) -> list[Candidate]:
    from . import tools

    return tools.supplement(ctx, request)


@hookimpl
def status_report(ctx: PluginContext) -> StatusReport:
    from .status import wiki_status_report

    return wiki_status_report(ctx)
