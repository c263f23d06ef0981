"""CLI of the wiki plugin: ``lifelong wiki compile|lint|search|get|status`` and ``lifelong why ID``.
Each command imports the wiki's modules when it runs (listing commands must stay cheap)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from lifelong.cli import emit_json, get_host
from lifelong.errors import InputError

from . import PLUGIN

if TYPE_CHECKING:
    from .lint import LintResult


def add_commands(cli: click.Group) -> None:
    cli.add_command(wiki_group)
    cli.add_command(why_cmd)


@click.group("wiki")
def wiki_group() -> None:
    """The belief wiki: compile pages from memory, lint them, search and read claims."""


def _print_counts(counts: dict[str, int]) -> None:
    shown = ", ".join(f"{code} {n}" for code, n in counts.items() if n) or "no findings"
    click.echo(f"lint: {shown}")


@wiki_group.command("compile")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def compile_cmd(as_json: bool) -> None:
    """Compile wiki pages from MEMORY.md and the daily notes, then lint and refresh wiki/reports/
    (only pages whose sources changed are rewritten; every write is journaled)."""
    from .service import compile_and_lint

    host = get_host()
    outcome = compile_and_lint(host.ctx)
    if as_json:
        emit_json(outcome.as_json())
        return
    plan = outcome.plan
    assert plan is not None
    click.echo(
        f"compiled {len(plan.pages)} page(s), {plan.claims} claim(s): "
        f"{len(plan.writes)} page/index file(s) written, {len(plan.unchanged)} page(s) unchanged "
        f"({outcome.compile_ms:.0f} ms; lint {outcome.lint_ms:.0f} ms)"
    )
    for rel in outcome.written:
        click.echo(f"  wrote {rel}")
    for problem in outcome.problems:
        click.echo(f"  skipped: {problem}")
    for rel in plan.orphans:
        click.echo(f"  left alone: {rel} (no claims compile to it now; delete it if it is not wanted)")
    _print_counts(outcome.lint.counts())
    _print_contradictions(outcome.lint)


def _print_contradictions(result: LintResult) -> None:
    if not result.contradictions:
        return
    click.echo(f"{len(result.contradictions)} contradiction(s), in wiki/reports/contradictions.md:")
    for k in result.contradictions:
        click.echo(f"  {k.pages}: {k.reason}")
        for c in (k.left, k.right):
            pointers = ", ".join(f"{e.path}#{e.lines}" for e in c.evidence)
            click.echo(f"    - {c.text} ({c.id}; evidence {pointers})")


@wiki_group.command("lint")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def lint_cmd(as_json: bool) -> None:
    """Lint the wiki (drift, missing evidence files, contradictions, duplicate ids, broken links,
    stale pages, decayed confidence) and refresh wiki/reports/."""
    from . import tools
    from .service import compile_and_lint

    host = get_host()
    outcome = compile_and_lint(host.ctx, compile_pages=False)
    if as_json:
        emit_json({**tools.lint_json(outcome.lint), "reports_written": outcome.written})
        return
    result = outcome.lint
    click.echo(f"linted {result.pages} page(s), {result.claims} claim(s) as of {result.today.isoformat()}")
    for f in result.findings:
        claim = f" {f.claim}" if f.claim else ""
        click.echo(f"  {f.code}: {f.page}{claim}: {f.message}")
    _print_counts(result.counts())
    _print_contradictions(result)


@wiki_group.command("search")
@click.argument("query")
@click.option(
    "--max-results", type=click.IntRange(1, 100), default=6, show_default=True, help="How many claims."
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def search_cmd(query: str, max_results: int, as_json: bool) -> None:
    """Search the wiki's claims (with confidence and evidence pointers)."""
    from . import tools

    host = get_host()
    if not query.strip():
        raise InputError("query is empty")
    hits = tools.search_claims(host.ctx, query, max_results)
    if as_json:
        emit_json({"version": 1, "query": query, "results": hits})
        return
    if not hits:
        click.echo("no claims found")
    for n, h in enumerate(hits, 1):
        click.echo(f"{n}. [{h['score']:.3f}] {h['text']}")
        click.echo(f"     {h['claim_id']} on {h['page']} ({h['status']}, confidence {h['confidence']:.2f})")
        click.echo(f"     evidence: {', '.join(h['evidence'])}")


@wiki_group.command("get")
@click.argument("lookup")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def get_cmd(lookup: str, as_json: bool) -> None:
    """Show a page or claim (by id, alias, title or path) with its evidence lines as they read now."""
    from . import tools

    host = get_host()
    data = tools.wiki_get(host.ctx, lookup)
    if "error" in data:
        raise InputError(str(data["error"]).removeprefix("wiki_get: "))
    if as_json:
        emit_json({"version": 1, **data})
        return
    claims = [data["claim"]] if "claim" in data else data["page"]["claims"]
    if "page" in data:
        page = data["page"]
        click.echo(f"{page['title']} ({page['id']}, {page['path']})")
        if page["aliases"]:
            click.echo(f"  aliases: {', '.join(page['aliases'])}")
    for c in claims:
        click.echo(
            f"- {c['text']}  [{c['id']}; {c['status']}, confidence now {c['confidence_now']:.2f}; {c['freshness']}]"
        )
        for e in c["evidence"]:
            click.echo(
                f"    {e['path']}#{e['lines']} [{e['status']}]: {e['text'] if e['text'] is not None else '(missing)'}"
            )


@wiki_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def status_cmd(as_json: bool) -> None:
    """Pages and claims in the wiki and what the last compile and lint found."""
    from . import tools

    host = get_host()
    data = tools.wiki_status(host.ctx)
    if as_json:
        emit_json({"version": 1, **data})
        return
    kinds = ", ".join(f"{n} {k}" for k, n in data["by_type"].items()) or "none"
    click.echo(
        f"{data['pages']} page(s) ({kinds}), {data['claims']} claim(s), {data['active_claims']} active"
    )
    last = data["last"]
    if last:
        click.echo(
            f"last compile/lint {last['at']} ({last.get('run_id') or 'nothing written'}); "
            f"{last.get('contradictions', 0)} contradiction(s)"
        )
    else:
        click.echo("never compiled: run `lifelong wiki compile`")


@click.command("why")
@click.argument("id")
@click.option("--json", "as_json", is_flag=True, help="Print the provenance chain as JSON.")
def why_cmd(id: str, as_json: bool) -> None:  # noqa: A002 - the documented argument name
    """Why is this remembered? Walk a claim's (claim.…) or MEMORY.md item's (its key) provenance:
    evidence lines with their current text, the daily file and date, the recalls and queries
    that promoted it, and the dream run."""
    from .why import render_why, why

    host = get_host()
    if not host.enabled(PLUGIN):
        raise InputError("the wiki plugin is disabled (plugins.wiki.enabled: false)")
    data = why(host.ctx, id)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        return
    for line in render_why(data):
        click.echo(line)
