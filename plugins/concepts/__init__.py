"""The concept index: a query that names known concepts (people, projects, tools, identifiers) is
answered from a table instead of a full hybrid scan (see docs/concepts.md).

The hook implementations import their modules when called: the host loads every plugin for any
CLI call, and most calls never touch the concept index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from lifelong.contracts import (
        Candidate,
        ConsolidationRun,
        FileChanges,
        MigrationRegistrar,
        PluginContext,
        SearchRequest,
        StatusReport,
    )

PLUGIN = "concepts"


@hookimpl
def register_migrations(register: MigrationRegistrar) -> None:
    from . import tables

    register(tables.migrations)


@hookimpl
def register_commands(cli: click.Group) -> None:
    from . import commands

    commands.add_commands(cli)


@hookimpl
def retrieval_pre(ctx: PluginContext, request: SearchRequest) -> list[Candidate] | None:
    """Answer from the index when the query's concepts carry it; None lets the hybrid search run."""
    from .index import ConceptIndex

    cfg = ctx.config(PLUGIN)
    lookup = ConceptIndex(ctx, cfg).lookup(request)
    if not lookup.answered:
        return None
    for c in lookup.candidates:
        c.extra.update(concepts=lookup.concepts, confidence=round(lookup.confidence, 3))
    return lookup.candidates


@hookimpl
def on_files_changed(ctx: PluginContext, changes: FileChanges) -> None:
    from .index import ConceptIndex, affected_paths

    ConceptIndex(ctx, ctx.config(PLUGIN)).update(affected_paths(changes))


@hookimpl
def after_consolidation(ctx: PluginContext, run: ConsolidationRun) -> None:
    """The nightly pass: fresh importance, pruning, wiki names and aliases (the occurrences are
    kept current by every sync; `lifelong concepts rebuild` re-extracts them)."""
    from .index import ConceptIndex

    ConceptIndex(ctx, ctx.config(PLUGIN)).refresh()


@hookimpl
def status_report(ctx: PluginContext) -> StatusReport:
    from lifelong.contracts import StatusReport

    conn = ctx.store.conn
    concepts, aliases = (
        conn.execute("SELECT count(*) FROM concepts").fetchone()[0],
        conn.execute("SELECT count(*) FROM concept_aliases").fetchone()[0],
    )
    top = [r[0] for r in conn.execute("SELECT display FROM concepts ORDER BY importance DESC, key LIMIT 5")]
    summary = (f"{concepts} concept(s), {aliases} alias(es)" + (f"; top: {', '.join(top)}" if top else ""),)
    return StatusReport(
        plugin=PLUGIN, summary=summary, data={"concepts": concepts, "aliases": aliases, "top": top}
    )
