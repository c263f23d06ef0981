"""CLI of the dreaming plugin: ``lifelong dream`` and its subcommands. Each imports the
consolidation when it runs (listing commands must stay cheap)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lifelong.cli import emit_json, get_host

if TYPE_CHECKING:
    from .record import DreamRun


def say(line: str) -> None:
    """Print one line of the dream's output: secrets redacted, instruction-like lines withheld
    (lifelong.safety's rules, as in the reports and the diary)."""
    from .screening import neutralise

    click.echo(neutralise(line))


def emit(data: Any) -> None:
    """:func:`lifelong.cli.emit_json` of ``data`` with every string neutralised."""
    from .screening import neutralise_json

    emit_json(neutralise_json(data))


def add_commands(cli: click.Group) -> None:
    cli.add_command(dream_group)


def _fmt_components(score: dict[str, Any]) -> str:
    c = score["components"]
    return (
        f"rel {c['relevance']:.2f} freq {c['frequency']:.2f} div {c['diversity']:.2f} "
        f"rec {c['recency']:.2f} cons {c['consolidation']:.2f} rich {c['richness']:.2f} boost {score['boost']:.2f}"
    )


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def print_run(run: DreamRun) -> None:
    from .record import PHASES

    data = run.as_json()  # every text in it neutralised: the lines below are built from it
    light, rem, deep = (data["phases"].get(p, {}) for p in PHASES)
    promoted = data["promoted"]
    head = "dry run (nothing written)" if run.dry_run else run.status
    for note in data["recovered"]:
        say(note)
    say(
        f"dream {run.run_id} ({run.mode}, {run.now.isoformat(timespec='minutes')}): {head}, {run.elapsed_ms:.0f} ms"
    )
    say(
        f"  light: {len(light.get('dailies', []))} dailies, {light.get('snippets', 0)} snippets, "
        f"{light.get('new_candidates', 0)} new; {light.get('events_counted', 0)} recall events, "
        f"{light.get('events_attributed', 0)} attributed"
    )
    themes = ", ".join(t["tag"] for t in rem.get("themes", [])[:6]) or "none"
    say(f"  rem:   themes {themes}; {len(rem.get('corrections', []))} corrections")
    say(
        f"  deep:  {deep.get('scored', 0)} scored, {deep.get('passed_gates', 0)} passed the gates, "
        f"{len(promoted)} {'would be promoted' if run.dry_run else 'promoted'}"
    )
    for p in promoted:
        say(f"  + {p['text']}")
        say(f"      key {p['key']}  Source: {p['source']}  S={p['score']['total']:.3f}")
        if run.dry_run:
            say(f"      {_fmt_components(p['score'])}")
        if p.get("decision") and p["decision"]["action"] != "allow":
            say(f"      {p['decision']['action']}: {p['decision']['reason']}")
    for d in deep.get("dropped", []):
        say(f"  - dropped {d['key']}: {_short(d['text'], 60)} ({d['reason']})")
    for b in deep.get("blocked", []):
        say(f"  - blocked {b['key']}: {_short(b['text'], 60)} ({b['reason']})")
    if run.dry_run:
        misses = deep.get("near_misses", [])[:5]
        if misses:
            say("  near misses:")
        for m in misses:
            say(f"    {m['key']} S={m['score']['total']:.3f} {_short(m['text'], 70)}")
            say(f"      {_fmt_components(m['score'])}; fails: {'; '.join(m['failed_gates'])}")
    comp = deep.get("compaction")
    if comp and comp.get("note"):
        say(f"  size budget: {comp['note']}")
    if data["report_dir"]:
        say(f"  report: {data['report_dir']}/report.md")
    if data["message"] and run.status not in ("nothing",):
        say(f"  note: {data['message']}")


@click.group("dream", invoke_without_command=True)
@click.option(
    "--dry-run", is_flag=True, help="Show what would be promoted, with every score component; write nothing."
)
@click.option(
    "--backfill",
    is_flag=True,
    help="First run on an existing workspace: read every daily and promote at S >= 0.5 with no count gates.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@click.pass_context
def dream_group(ctx: click.Context, dry_run: bool, backfill: bool, as_json: bool) -> None:
    """Consolidate memory now: light, REM and deep phases; promote what recurs into MEMORY.md.

    Subcommands: explain, rollback, history, schedule, replay."""
    if ctx.invoked_subcommand is not None:
        return
    from . import run as runs

    host = get_host()
    run = runs.run_dream(host, dry_run=dry_run, backfill=backfill)
    if as_json:
        emit(run.as_json())
        return
    print_run(run)


@dream_group.command("explain")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def explain_cmd(key: str, as_json: bool) -> None:
    """Show one candidate's signals: where it was written, its recalls, its score now."""
    from .explain import explain

    data = explain(get_host(), key)
    if as_json:
        emit(data)
        return
    say(f"{data['key']}: {data['text']}")
    say(f"  status {data['status']}" + (f" ({data['status_reason']})" if data["status_reason"] else ""))
    if data["superseded_by"]:
        say(f"  superseded by {data['superseded_by']}")
    for o in data["occurrences"]:
        say(f"  written {o['day']}  Source: {o['path']}#{o['lines']}")
    for r in data["recalls"]:
        say(f"  recalled {r['day']} [{r['score']:.3f}] ({r['source']}) {r['query']!r}")
    sig = data["signals"]
    s = data["score_now"]
    say(
        f"  recalls {sig['recalls']}, unique queries {sig['unique_queries']}, days {sig['distinct_days']}, "
        f"span {sig['span_days']:.0f} d, last signal {sig['days_since_last']:.1f} d ago"
    )
    say(f"  S={s['total']:.3f} now: {_fmt_components(s)}")
    say("  gates: " + ("pass" if s["passed"] else "; ".join(s["failed_gates"])))


@dream_group.command("rollback")
@click.argument("run_id")
@click.option(
    "--force", is_flag=True, help="Keep later human edits; remove only this run's managed sections."
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def rollback_cmd(run_id: str, force: bool, as_json: bool) -> None:
    """Undo a run: restore every file it wrote exactly (refuses if a human edited one since)."""
    from .rollback import rollback_run

    data = rollback_run(get_host(), run_id, force=force)
    if as_json:
        emit(data)
        return
    for note in data.get("recovered", []):
        say(note)
    if data["interrupted"]:
        say(f"run {run_id} had been interrupted: {data['message']}")
        return
    say(f"{run_id}: {data['message']}")
    for rel in data["restored"]:
        say(f"  restored {rel}{' (edits made since kept)' if rel in data['conflicts'] else ''}")


@dream_group.command("history")
@click.option("--limit", type=int, default=30, show_default=True, help="How many runs, newest first.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def history_cmd(limit: int, as_json: bool) -> None:
    """List past runs, newest first: status, counts, time taken."""
    from .state import history

    rows = history(get_host().store, limit)
    if as_json:
        emit({"version": 1, "runs": rows})
        return
    if not rows:
        say("no dream runs yet")
    for r in rows:
        say(
            f"{r['run_id']}  {r['started_at']}  {r['mode']:<8} {r['status']:<11} promoted {r['promoted']:>2}  "
            f"dropped {r['dropped']}  blocked {r['blocked']}  new {r['new_candidates']}  "
            f"signals {r['signals']}  {r['elapsed_ms'] or 0:.0f} ms"
        )


@dream_group.command("schedule")
def schedule_cmd() -> None:
    """Run the consolidation every night at 03:00 in the workspace time zone (blocking)."""
    from .schedule import serve

    serve(get_host(), echo=say)


@dream_group.command("replay")
@click.argument("script", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the promotions of each night as JSON.")
def replay_cmd(script: Path, as_json: bool) -> None:
    """Replay SCRIPT (YAML: first_day, last_day, hours, searches by date): each day's searches
    through memory_search, a dream each night at 03:00, then MEMORY.md as it is on disk. See
    docs/dreaming.md."""
    from .replay import load_script, replay_script

    replay_script(
        get_host(),
        load_script(script),
        echo=None if as_json else say,
        as_json=as_json,
        show_file=click.echo,  # the user's own file, shown to the user: not screened like a report
    )
