"""``lifelong demo``: create the example workspace and run the suite's commands on it, printing
each command exactly as a user would type it (quoted, so it can be pasted)."""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Any

import click

from lifelong import clock
from lifelong.errors import InputError

from .chart import nightly_chart

DATA = Path(__file__).parent / "data"
WORKSPACE = DATA / "workspace"
REPLAY_SCRIPT = DATA / "replay.yaml"
DEMO_NOW = "2026-03-24T09:00"  # the day after the example's last daily note


def create_demo_workspace(root: Path) -> list[str]:
    """Copy the example workspace into ``root``, which must not exist or be empty (the demo
    never adds its notes to someone's real workspace). Returns the files written."""
    root = Path(root).expanduser()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InputError(
            f"{root} is not empty: the demo builds its own workspace; pass a new folder to --dir"
        )
    written = []
    for path in sorted(WORKSPACE.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(WORKSPACE)
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        written.append(rel.as_posix())
    return written


def demo_steps(root: Path) -> list[tuple[str, list[str]]]:
    w = ["--workspace", str(root), "--now", DEMO_NOW]
    return [
        ("Status", [*w, "status"]),
        ("Index the workspace (BM25 + vectors)", [*w, "index"]),
        ("Search with citations", [*w, "search", "which venue did we book for the offsite?"]),
        ("Pre-reply gate on a casual question", [*w, "gate", "what did we decide about the pitch?"]),
        ("Replay three weeks of recall and dream each night", [*w, "dream", "replay", str(REPLAY_SCRIPT)]),
        ("Compile and lint the belief wiki (claims with evidence)", [*w, "wiki", "compile"]),
        ("A wiki page: each claim with its evidence pointers", [*w, "wiki", "get", "concept.offsite"]),
    ]


# after the nightly table: a changed fact through the contradiction gate in supersede mode
SUPERSEDE_FACT = "Offsite budget is now EUR 7,500 including travel."


def supersede_steps(root: Path) -> list[tuple[str, list[str]]]:
    w = ["--workspace", str(root), "--now", DEMO_NOW]
    return [
        ("Remember a changed fact: the gate supersedes the older ones", [*w, "remember", SUPERSEDE_FACT]),
        ("Its validity timeline (what was true when)", [*w, "history", "offsite budget"]),
        ("What is true now (superseded facts are not returned)", [*w, "search", "offsite budget", "-k", "3"]),
    ]


def run_step(ctx: click.Context, group: click.Group, title: str, args: list[str]) -> bool:
    """Print the command as a user would type it and run it in this process; False when the
    command's plugin is not installed."""
    command = next(a for a in args[4:] if not a.startswith("-"))
    if group.get_command(ctx, command) is None:
        click.echo(f"\n== {title}: skipped (command {command!r} is not installed)")
        return False
    click.echo(f"\n== {title}\n$ lifelong {shlex.join(args)}")
    try:
        group.main(args=args, prog_name="lifelong", standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise click.ClickException(f"demo step failed: lifelong {shlex.join(args)}") from exc
    finally:
        clock.set_now(None)
    return True


def nightly_counts(group: click.Group, root: Path) -> list[tuple[str, int, int]]:
    """(night, items promoted that night, items promoted so far), oldest first, from ``dream
    history --json``; a night is named by its dream's date (it runs at 03:00 after the day)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        group.main(
            args=["--workspace", str(root), "dream", "history", "--json", "--limit", "1000"],
            prog_name="lifelong",
            standalone_mode=False,
        )
    runs: list[dict[str, Any]] = json.loads(out.getvalue())["runs"]
    rows, total = [], 0
    for run in sorted(runs, key=lambda r: str(r["started_at"])):
        total += int(run.get("promoted") or 0)
        rows.append((str(run["started_at"])[:10], int(run.get("promoted") or 0), total))
    return rows


def show_growth(group: click.Group, root: Path) -> Path | None:
    """The table of what was remembered night by night, and the same as a PNG bar chart."""
    rows = nightly_counts(group, root)
    if not rows:
        return None
    click.echo(
        "\n== Things I remember about you, night by night (items promoted into MEMORY.md by each"
        " night's dream, at 03:00 on the date shown)"
    )
    click.echo(f"{'night':<12}{'new':>5}{'so far':>8}")
    for night, new, total in rows:
        click.echo(f"{night:<12}{new:>5}{total:>8}  {'#' * total}")
    chart = root / "remembered-by-night.png"
    png, note = nightly_chart([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
    chart.write_bytes(png)
    click.echo(f"(chart: {chart}{'; ' + note if note else ''})")
    return chart


def use_supersede_mode(root: Path) -> None:
    """The gate warns by default; superseding is opt-in, so the demo switches it on, visibly."""
    config = root / "lifelong.yaml"
    text = config.read_text("utf-8")
    config.write_text(text.rstrip("\n") + "\n  supersede: {mode: supersede}\n", "utf-8")
    click.echo("\n== Switch the contradiction gate from warn (the default) to supersede")
    click.echo(f"$ echo '  supersede: {{mode: supersede}}' >> {config}")


def where_to_look(root: Path, chart: Path | None) -> None:
    click.echo("\n== Where to look")
    for rel, what in (
        ("MEMORY.md", "what the agent loads at every session start; edit it freely"),
        ("DREAMS.md", "the nightly diary"),
        ("wiki/", "claims with evidence pointers; wiki/reports/ holds lint and contradictions"),
        (".lifelong/contradictions.jsonl", "every decision of the contradiction gate"),
        ("memory/", "the daily notes: the truth everything else is derived from"),
    ):
        click.echo(f"  {root / rel}: {what}")
    if chart is not None:
        click.echo(f"  {chart}: the nightly growth as a chart")
    w = f"lifelong --workspace {shlex.quote(str(root))}"
    click.echo("Try:")
    for line in (
        f"{w} search 'what did we decide about the pitch?' --explain",
        f"{w} why KEY          # a MEMORY.md item's key: its sources, recalls and dream run",
        f"{w} dream history    # then: dream rollback RUN",
        f"{w} chat             # the reference agent, offline without a model",
    ):
        click.echo(f"  {line}")


@click.command("demo")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Build the demo workspace here (a new or empty folder; default: a new temporary folder).",
)
@click.pass_context
def demo_cmd(ctx: click.Context, directory: Path | None) -> None:
    """Walk through the suite on an example workspace, offline, with no API key."""
    root = directory or Path(tempfile.mkdtemp(prefix="lifelong-demo-"))
    group = ctx.find_root().command
    assert isinstance(group, click.Group)
    written = create_demo_workspace(root)
    click.echo(f"== Example workspace: {len(written)} files (three weeks of a founder's notes) in {root}")
    for title, args in demo_steps(root):
        run_step(ctx, group, title, args)
    chart = show_growth(group, root) if group.get_command(ctx, "dream") is not None else None
    if group.get_command(ctx, "remember") is not None:
        use_supersede_mode(root)
        for title, args in supersede_steps(root):
            run_step(ctx, group, title, args)
    where_to_look(root, chart)
    click.echo(f"\nDemo workspace left at {root}")
