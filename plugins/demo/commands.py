"""``lifelong demo``: create the example workspace and run the suite's commands on it, printing
each command exactly as a user would type it (quoted, so it can be pasted)."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path

import click

from lifelong import clock
from lifelong.errors import InputError

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
        command = next(a for a in args[4:] if not a.startswith("-"))
        if group.get_command(ctx, command) is None:
            click.echo(f"\n== {title}: skipped (command {command!r} is not installed)")
            continue
        click.echo(f"\n== {title}\n$ lifelong {shlex.join(args)}")
        try:
            group.main(args=args, prog_name="lifelong", standalone_mode=False)
        except SystemExit as exc:
            if exc.code:
                raise click.ClickException(f"demo step failed: lifelong {shlex.join(args)}") from exc
        finally:
            clock.set_now(None)
    click.echo(f"\nDemo workspace left at {root}")
