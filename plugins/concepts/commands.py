"""CLI of the concept index: ``lifelong concepts list|explain|rebuild`` (the index is imported
when a command runs)."""

from __future__ import annotations

import click

from lifelong.cli import emit_json, get_host
from lifelong.contracts import MEMORY_INDEX

from . import PLUGIN


def add_commands(cli: click.Group) -> None:
    cli.add_command(concepts_group)


@click.group("concepts")
def concepts_group() -> None:
    """The concept index: known names and what answers a query naming them."""


@concepts_group.command("list")
@click.option(
    "--limit", type=click.IntRange(min=1), default=30, show_default=True, help="Most important first."
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def list_cmd(limit: int, as_json: bool) -> None:
    """Known concepts, most important first: importance, days seen, chunks, last seen, script."""
    rows = get_host().store.query(
        "SELECT key, display, script, kind, frequency, days, doc_freq, last_seen, importance FROM concepts"
        " ORDER BY importance DESC, key LIMIT ?",
        (limit,),
    )
    if as_json:
        emit_json({"version": 1, "concepts": rows})
        return
    if not rows:
        click.echo("no concepts yet (they appear once a term recurs on two days; `lifelong index` first)")
    for r in rows:
        click.echo(
            f"{r['importance']:.2f}  {r['display']:<28} {r['kind']:<7} {r['days']:>3} day(s) "
            f"{r['doc_freq']:>5} chunk(s)  last {r['last_seen']}  {r['script']}"
        )


@concepts_group.command("explain")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def explain_cmd(query: str, as_json: bool) -> None:
    """Would the concept index answer QUERY? The concepts it recognises, the confidence and why."""
    from lifelong.contracts import SearchRequest

    from .index import ConceptIndex

    host = get_host()
    lookup = ConceptIndex(host.ctx, host.plugin_config(PLUGIN)).lookup(SearchRequest(query=query))
    threshold = host.plugin_config(PLUGIN)["confidence_threshold"]
    data = {
        "version": 1,
        "query": query,
        "concepts": lookup.concepts,
        "confidence": round(lookup.confidence, 3),
        "threshold": threshold,
        "background": lookup.detail.get("background", []),
        "coverage": lookup.detail.get("coverage"),
        "exact": lookup.detail.get("exact"),
        "answered": lookup.answered,
        "reason": lookup.reason,
        "results": [c.citation for c in lookup.candidates],
    }
    if as_json:
        emit_json(data)
        return
    path = (
        "the concept index answers"
        if lookup.answered
        else f"falls through to hybrid search ({lookup.reason})"
    )
    named = ", ".join(lookup.concepts) or "none"
    if data["exact"]:
        named += " (the whole query: a known identifier or name)"
    click.echo(f"concepts: {named}; confidence {lookup.confidence:.2f} (threshold {threshold}): {path}")
    if data["background"]:
        click.echo(f"  too common to count (background): {', '.join(data['background'])}")
    for c in lookup.candidates:
        click.echo(f"  Source: {c.citation}")


@concepts_group.command("rebuild")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def rebuild_cmd(as_json: bool) -> None:
    """Rebuild the concept index from the recall index (the nightly run does this too)."""
    from .index import ConceptIndex

    host = get_host()
    if MEMORY_INDEX in host.tools:  # bring the recall index up to date first
        synced = host.call_tool(MEMORY_INDEX, {})
        if "error" in synced:
            click.echo(
                f"warning: indexing failed ({synced['error']}); rebuilding from the index as it is", err=True
            )
    counts = ConceptIndex(host.ctx, host.plugin_config(PLUGIN)).rebuild()
    if as_json:
        emit_json({"version": 1, **counts})
        return
    click.echo(
        f"{counts['concepts']} concept(s) from {counts['occurrences']} occurrence(s), {counts['aliases']} alias(es)"
    )
