"""CLI commands of the recall plugin: index, search, get. Each imports the index and the search
when it runs (listing commands must stay cheap)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any, cast

import click

from lifelong.cli import emit_json, get_host

from .settings import DEFAULTS


def add_commands(cli: click.Group) -> None:
    cli.add_command(index_cmd)
    cli.add_command(search_cmd)
    cli.add_command(get_cmd)


def scope_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--scope shared|private`` (lifelong.privacy), for search and get."""
    return click.option(
        "--scope",
        type=click.Choice(["shared", "private"]),
        default="shared",
        show_default=True,
        help=help_text,
    )


@click.command("index")
@click.option(
    "--force", is_flag=True, help="Re-chunk every file and rebuild all vectors (embedding cache still used)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the sync report as JSON.")
@click.option(
    "--watch", is_flag=True, help="Keep running and re-index when files change (Ctrl-C or SIGTERM to stop)."
)
def index_cmd(force: bool, as_json: bool, watch: bool) -> None:
    """Bring the index in line with the markdown files (only what changed is re-embedded)."""
    from . import service

    host = get_host()
    idx = service.index_for(host.ctx)
    report = _sync_with_progress(idx, force=force, quiet=as_json)
    if as_json:
        emit_json({"version": 1, **report.as_json()})
    else:
        _print_report(report)
    if watch:
        _watch(host, idx)


def _sync_with_progress(idx: Any, *, force: bool, quiet: bool) -> Any:
    if quiet:
        return idx.sync(force=force)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    times = (TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn())
    with Progress(*columns, *times, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(
                    {"chunk": "chunking files", "embed": "embedding chunks"}[stage], total=total
                )
            bar.update(tasks[stage], completed=done, total=total)

        return idx.sync(force=force, progress=progress)


def _print_report(report: Any) -> None:
    p = report.plan
    click.echo(
        f"indexed: {len(p.new)} new, {len(p.modified)} modified, {len(p.deleted)} deleted, "
        f"{len(p.unchanged)} unchanged files; {report.chunks_added} chunks added, "
        f"{report.chunks_removed} removed; {report.embedded} embedded, {report.cache_hits} from cache "
        f"({report.elapsed_ms:.0f} ms)"
    )
    if report.vectors != "ok":
        click.echo(f"vectors: {report.vectors}")
    for rel, why in sorted(report.skipped.items()):
        click.echo(f"skipped: {why}" if rel in why else f"skipped {rel}: {why}")
    for rel, why in sorted(report.notes.items()):
        click.echo(f"note: {rel}: {why}")


def _watch(host: Any, idx: Any) -> None:
    """Poll-free watching with watchdog; editors that save via temp file + rename produce
    moved/created events, which are handled the same as modifications (a full cheap re-scan)."""
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    changed = {"flag": False}

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            path = str(getattr(event, "dest_path", "") or event.src_path)
            if "/.lifelong/" not in path and (path.endswith(".md") or event.is_directory):
                changed["flag"] = True

    # SIGTERM (a service manager's stop, `kill`) ends the watch as Ctrl-C does, but never in the
    # middle of a sync: the flag is read between them. It is also the way to stop a watcher
    # started as a background job, which inherits SIGINT ignored.
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    observer = Observer()
    observer.schedule(Handler(), str(host.workspace.root), recursive=True)
    observer.start()
    click.echo(f"watching {host.workspace.root} (Ctrl-C to stop)")
    try:
        while not stop.wait(0.5):
            if changed["flag"]:
                changed["flag"] = False
                time.sleep(0.2)  # let an editor finish its write-then-rename
                report = idx.sync_if_changed(backlog=True)
                if report is not None:
                    _print_report(report)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        observer.stop()
        observer.join()


@click.command("search")
@click.argument("query")
@click.option(
    "--max-results",
    "-k",
    type=int,
    default=None,
    help=f"How many results (default {DEFAULTS['max_results']}).",
)
@click.option(
    "--max-tokens",
    type=int,
    default=None,
    help="Instead of a count: results in rank order until the next would overflow this many tokens of "
    "returned text; a result whose whole message fits is widened to it. The budget is filled with the "
    "best matches there are (min score 0 unless --min-score is given).",
)
@click.option(
    "--min-score",
    type=float,
    default=None,
    help=f"Drop results below this score (default {DEFAULTS['min_score']}, "
    "or the workspace's recall.min_score; 0 with --max-tokens).",
)
@click.option("--corpus", type=click.Choice(["memory", "wiki", "all"]), default="memory", show_default=True)
@scope_option("private: also search notes under memory/private/ or marked privacy: private.")
@click.option(
    "--mode",
    type=click.Choice(["current", "valid-at", "all"]),
    default=None,
    help="current: only still-valid facts (default); valid-at: as of --as-of; all.",
)
@click.option("--as-of", default=None, metavar="ISO8601", help="Point in time for --mode valid-at.")
@click.option(
    "--task", default=None, metavar="TEXT", help="What you are working on: results about it rank higher."
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.option(
    "--explain",
    is_flag=True,
    help="Show per-leg scores, decay, the relevance before MMR and its penalty (the printed score is "
    "the one that ordered the results).",
)
def search_cmd(
    query: str,
    max_results: int | None,
    max_tokens: int | None,
    min_score: float | None,
    corpus: str,
    scope: str,
    mode: str | None,
    as_of: str | None,
    task: str | None,
    as_json: bool,
    explain: bool,
) -> None:
    """Search memory: hybrid BM25 + vector, decayed by age, de-duplicated by MMR.

    A note dated after today is shown as upcoming (under --now it is hidden); the same line on
    several days is one result with the other days listed ("also: ...")."""
    from . import service
    from .results import result_json

    host = get_host()
    ctx = host.ctx
    req = service.make_request(
        ctx,
        query=query,
        max_results=max_results,
        min_score=min_score,
        corpus=corpus,
        scope=scope,
        mode=mode,
        as_of=as_of,
        source="cli",
        task=task,
        max_tokens=max_tokens,
    )
    outcome = service.run_search(ctx, req)
    cfg = ctx.config(service.PLUGIN)
    tz = ctx.workspace.timezone
    rows = [
        result_json(c, cfg["snippet_chars"], explain=explain, tz=tz, query=query) for c in outcome.results
    ]
    if as_json:
        data: dict[str, Any] = {
            "version": 1,
            "query": query,
            "corpus": corpus,
            "mode": req.mode,
            "results": rows,
            "elapsed_ms": round(outcome.elapsed_ms, 1),
        }
        if explain:
            data["legs"] = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in outcome.legs.items()}
        emit_json(data)
        return
    if not rows:
        click.echo("no results")
    for n, r in enumerate(rows, 1):
        click.echo(
            f"{n}. [{r['score']:.3f}] {r['citation']}"
            + (f"  ({r['heading']})" if r["heading"] else "")
            + ("  upcoming" if r.get("upcoming") else "")
        )
        for line in r["snippet"].splitlines():
            click.echo(f"     {line}")
        if r.get("also_dates"):
            click.echo(f"     also: {short_dates(r['also_dates'])}")
        if explain:
            e = r["explain"]

            def fmt(value: float | None, digits: int = 3) -> str:
                return "-" if value is None else f"{value:.{digits}f}"

            extra = r.get("extra") or {}
            click.echo(
                f"     cos {fmt(e['cosine'])}  bm25 {fmt(e['bm25'])}  hybrid {fmt(e['hybrid'])}  decay {fmt(e['decay'])}"
                f"  relevance {fmt(r['relevance'])}  mmr-penalty {fmt(e['mmr_penalty'], 2)}"
                + ("  (lexical rescue)" if e["rescued"] else "")
                + (f"  answers: {extra['answers']}" if extra.get("answers") else "")
                + ("  preference" if extra.get("preference") else "")
                + (f"  fragments: {len(extra['matched'])}" if extra.get("matched") else "")
                + ("  (whole message)" if extra.get("context") == "message" else "")
            )
    if explain:
        legs = outcome.legs
        if outcome.short_circuit:
            extra = outcome.results[0].extra if outcome.results else {}
            by = extra.get("answered_by", "a retrieval_pre plugin")
            concepts = ", ".join(cast(list[str], extra.get("concepts") or []))
            click.echo(
                f"answered by {by}"
                + (f" (concepts: {concepts}; confidence {extra.get('confidence')})" if concepts else "")
                + f"; hybrid search skipped; {outcome.elapsed_ms:.1f} ms total"
            )
        else:
            click.echo(
                f"answered by hybrid search: fts {legs.get('fts_hits', 0)} hits, vector {legs.get('vector_hits', 0)} hits; "
                f"{outcome.elapsed_ms:.1f} ms total"
            )
            if "embedded_query" in legs:
                click.echo(f"query embedded as: {legs['embedded_query']}  (speaker_pronoun)")


def short_dates(days: list[str]) -> str:
    """ISO dates as a short list: the year only where it changes ("2026-07-01, 07-03")."""
    out, year = [], None
    for day in days:
        out.append(day if day[:4] != year else day[5:])
        year = day[:4]
    return ", ".join(out)


@click.command("get")
@click.argument("path")
@click.option("--from", "start", type=int, default=None, help="First line, 1-based.")
@click.option(
    "--lines",
    type=int,
    default=None,
    help=f"Number of lines (default: the whole file, at most {DEFAULTS['get_max_lines']}).",
)
@scope_option("private: a private note (memory/private/, privacy: private) may be read.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def get_cmd(path: str, start: int | None, lines: int | None, scope: str, as_json: bool) -> None:
    """Print lines of a memory file (workspace-relative PATH)."""
    from . import service

    host = get_host()
    data = service.read_lines(host.ctx, path, start, lines, scope=scope)
    if as_json:
        emit_json({"version": 1, **data})
        return
    click.echo(data["text"])
