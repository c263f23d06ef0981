"""The fleet's task: one workspace's night, on Dramatiq over Redis.

``run_night`` is the whole task (testable without a broker): skip a night already done, mark it
running, open the workspace with every installed plugin, call the dreaming plugin's
``dream_night`` service (idempotent per night; it runs light, REM, deep and the
``after_consolidation`` steps, the wiki compile and the concept refresh, exactly as ``lifelong
dream`` does), record the outcome. A failure is retried with exponential backoff (Dramatiq's
``Retries``); the last failure, or a night that has been attempted too often (a worker killed
every time), is *parked* with its error and acknowledged, so it never blocks the queue.

A worker killed mid-run (``kill -9``) loses nothing: its message is still unacknowledged in
Redis, and when its heartbeat is older than ``heartbeat_timeout`` another worker's maintenance
puts it back on the queue. The dream's own lock is a file lock the kernel releases with the
process; the dreaming plugin finishes or undoes an interrupted run (the reliability issue's
crash safety), and ``dream_night`` never promotes a night twice.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from lifelong import clock
from lifelong.errors import LifelongError

from .ledger import Ledger, worker_label

ENV = "LIFELONG_FLEET_"
ACTOR = "lifelong_dream_night"
REDELIVERY_SLACK = 3  # attempts beyond max_retries a night may take when workers keep dying


class FleetTaskError(LifelongError):
    """A night that could not be run (retried, then parked)."""


@dataclass(frozen=True)
class FleetSettings:
    """Everything a scheduler or worker needs; passed to worker processes as LIFELONG_FLEET_*
    environment variables."""

    redis: str = "redis://127.0.0.1:6379/0"
    queue: str = "lifelong-nightly"
    max_retries: int = 3
    min_backoff_ms: int = 15_000
    max_backoff_ms: int = 600_000
    heartbeat_ms: int = 60_000
    maintenance_chance: int = 100_000  # per million broker commands: dead workers are noticed fast
    time_limit_ms: int = 3_600_000

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> FleetSettings:
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = int(raw) if f.type in (int, "int") else raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def to_env(self) -> dict[str, str]:
        return {ENV + f.name.upper(): str(getattr(self, f.name)) for f in fields(self)}


def redis_client(settings: FleetSettings) -> Any:
    _require_dramatiq()
    import redis

    return redis.Redis.from_url(settings.redis)


def dream_in(workspace: str, night: str) -> dict[str, Any]:
    """Run ``dream_night`` in ``workspace`` through a fresh host (its config re-read)."""
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    host = Host(Workspace(workspace))
    try:
        if "dream_night" not in host.tools:
            raise FleetTaskError("the dreaming plugin is not installed or is disabled in this workspace")
        result = host.call_tool("dream_night", {"night": night})
    finally:
        host.close()
    if "error" in result:
        raise FleetTaskError(str(result["error"]))
    if result.get("status") == "locked":
        raise FleetTaskError(str(result.get("error") or "the workspace's dream lock is held"))
    return result


def run_night(
    ledger: Ledger,
    workspace: str,
    night: str,
    *,
    retries: int,
    max_retries: int,
    dream: Callable[[str, str], dict[str, Any]] = dream_in,
) -> dict[str, Any]:
    """The task. ``retries``: how many times Dramatiq has retried this message so far."""
    entry = ledger.get(workspace, night) or {}
    if entry.get("state") in ("done", "parked"):
        return entry  # a duplicated or redelivered message: the night already has its outcome
    attempts = int(entry.get("attempts") or 0) + 1
    ledger.update(workspace, night, clock.now(), state="running", attempts=attempts, worker=worker_label())
    try:
        result = dream(workspace, night)
    except Exception as exc:  # every failure is recorded; the last one parks the night
        error = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        if retries >= max_retries or attempts > max_retries + REDELIVERY_SLACK:
            return ledger.update(workspace, night, clock.now(), state="parked", error=error)
        ledger.update(workspace, night, clock.now(), state="retrying", error=error)
        raise
    return ledger.update(
        workspace,
        night,
        clock.now(),
        state="done",
        error=None,
        status=result.get("status"),
        run_id=result.get("run_id"),
        promoted=result.get("promoted", 0),
        elapsed_ms=result.get("elapsed_ms"),
    )


def _require_dramatiq() -> None:
    try:
        import dramatiq  # noqa: F401
        import redis  # noqa: F401
    except ImportError as exc:
        raise LifelongError(
            f"fleet mode needs Dramatiq and redis: pip install 'lifelong[fleet]' ({exc})"
        ) from exc


def make_broker(settings: FleetSettings) -> Any:
    _require_dramatiq()
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.middleware import CurrentMessage

    broker = RedisBroker(
        url=settings.redis,
        namespace="lifelong-dramatiq",
        heartbeat_timeout=settings.heartbeat_ms,
        maintenance_chance=settings.maintenance_chance,
    )
    broker.add_middleware(CurrentMessage())
    return broker


def declare_actor(broker: Any, settings: FleetSettings) -> Any:
    """The Dramatiq actor for one (workspace, night) on ``broker``."""
    import dramatiq
    from dramatiq.middleware import CurrentMessage

    ledger = Ledger(redis_client(settings))

    def dream_night_task(workspace: str, night: str) -> None:
        message = CurrentMessage.get_current_message()
        retries = int(message.options.get("retries", 0)) if message is not None else 0
        run_night(ledger, workspace, night, retries=retries, max_retries=settings.max_retries)

    return dramatiq.actor(
        dream_night_task,
        actor_name=ACTOR,
        broker=broker,
        queue_name=settings.queue,
        max_retries=settings.max_retries,
        min_backoff=settings.min_backoff_ms,
        max_backoff=settings.max_backoff_ms,
        time_limit=settings.time_limit_ms,
    )


def enqueue(actor: Any, workspace: str, night: dt.date | str) -> None:
    actor.send(workspace, night.isoformat() if isinstance(night, dt.date) else night)
