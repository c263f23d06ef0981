"""The fleet's task: one workspace's night, on Dramatiq over Redis.

``run_night`` is the whole task (testable without a broker): ``Ledger.begin`` decides whether this
delivery runs the night (not when it is done, parked, or running under another worker's live
lease; parked instead when the night has used ``max_attempts`` attempts, however they ended:
exception, SIGKILL, time limit). The attempt holds a *lease* in the ledger, renewed by a thread
while the dream runs; then the worker opens the workspace with every installed plugin, calls the
dreaming plugin's ``dream_night`` service (idempotent per night; it runs light, REM, deep and the
``after_consolidation`` steps, the wiki compile and the concept refresh, exactly as ``lifelong
dream`` does), and records the outcome.

A failure (any ``BaseException``, Dramatiq's ``TimeLimitExceeded`` included) is recorded as
``retrying`` with its error and re-raised: Dramatiq's ``Retries`` retries it with exponential
backoff; when its retries are exhausted Dramatiq dead-letters the message and sends it to the
``on_retry_exhausted`` actor, which parks the night with its last error.

What Dramatiq cannot see is covered by the lease: a worker killed mid-run (its message is also
redelivered by Dramatiq's heartbeat maintenance), an outcome that could not be written because
Redis was down (Dramatiq's own retry enqueue fails then too, and the message is lost), a lost
``on_retry_exhausted`` message. A night whose lease expired is re-sent, or parked when out of
attempts, by the next ``fleet schedule`` pass (``sweep``).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from lifelong.errors import LifelongError

from .ledger import Ledger, worker_label

ENV = "LIFELONG_FLEET_"
ACTOR = "lifelong_dream_night"
PARK_ACTOR = "lifelong_night_retries_exhausted"
NAMESPACE = "lifelong-dramatiq"
REDELIVERY_SLACK = 3  # attempts beyond max_retries + 1 a night may take when workers keep dying


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
    lease_ms: int = 120_000  # a running night's lease, renewed every quarter of it
    max_attempts: int = 0  # 0: max_retries + 1 + REDELIVERY_SLACK
    retention_days: int = 30  # the ledger of a night expires this long after its last write
    sweep_grace_ms: int = 60_000  # a queued night without its message is re-sent after this

    @property
    def attempts_cap(self) -> int:
        return self.max_attempts or self.max_retries + 1 + REDELIVERY_SLACK

    @property
    def queue_key(self) -> str:
        return f"{NAMESPACE}:{self.queue}"

    @property
    def retrying_lease_s(self) -> float:
        """How long a ``retrying`` night may wait for its retry: the longest backoff plus a
        lease."""
        return (self.max_backoff_ms + self.lease_ms) / 1000

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


def make_ledger(settings: FleetSettings, client: Any = None) -> Ledger:
    return Ledger(client or redis_client(settings), retention_s=settings.retention_days * 86400)


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


def _error_text(exc: BaseException, settings: FleetSettings) -> str:
    if type(exc).__name__ == "TimeLimitExceeded":
        return f"TimeLimitExceeded: the night ran past the time limit ({settings.time_limit_ms / 1000:g} s)"
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:500]


def run_night(
    ledger: Ledger,
    workspace: str,
    night: str,
    settings: FleetSettings,
    *,
    dream: Callable[[str, str], dict[str, Any]] = dream_in,
) -> tuple[str, dict[str, Any]]:
    """The task: run one workspace's night under a lease and record its outcome; returns
    ``Ledger.begin``'s decision and the entry. Raises on failure (after recording
    ``retrying``), so that Dramatiq retries it."""
    token = uuid.uuid4().hex
    lease_s = settings.lease_ms / 1000
    decision, entry = ledger.begin(
        workspace,
        night,
        token=token,
        worker=worker_label(),
        lease_s=lease_s,
        max_attempts=settings.attempts_cap,
    )
    if decision != "run":
        return decision, entry  # done, parked, running elsewhere, or parked now (out of attempts)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(lease_s / 4):
            with contextlib.suppress(Exception):  # Redis down: the lease lapses, the sweep re-sends
                if not ledger.renew(workspace, night, token=token, lease_s=lease_s):
                    return

    renewer = threading.Thread(target=renew, name="lifelong-fleet-lease", daemon=True)
    renewer.start()
    cpu0 = time.process_time()
    try:
        result = dream(workspace, night)
    except BaseException as exc:  # TimeLimitExceeded and other interrupts too
        stop.set()
        with contextlib.suppress(Exception):  # Redis down: the lease lapses, the sweep re-sends
            ledger.finish(
                workspace,
                night,
                "retrying",
                token=token,
                lease_s=settings.retrying_lease_s,
                error=_error_text(exc, settings),
            )
        raise
    stop.set()
    return decision, ledger.finish(
        workspace,
        night,
        "done",
        token=token,
        error=None,
        status=result.get("status"),
        run_id=result.get("run_id"),
        promoted=result.get("promoted", 0),
        elapsed_ms=result.get("elapsed_ms"),
        cpu_ms=round((time.process_time() - cpu0) * 1000, 1),  # this process's CPU (one thread a process)
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
        namespace=NAMESPACE,
        heartbeat_timeout=settings.heartbeat_ms,
        maintenance_chance=settings.maintenance_chance,
    )
    broker.add_middleware(CurrentMessage())
    return broker


def declare_actor(broker: Any, settings: FleetSettings) -> Any:
    """The Dramatiq actor for one (workspace, night) on ``broker``, and the actor its exhausted
    retries go to (it parks the night; the message itself is dead-lettered by Dramatiq)."""
    import dramatiq
    from dramatiq.middleware import CurrentMessage

    ledger = make_ledger(settings)

    def dream_night_task(workspace: str, night: str) -> None:
        decision, entry = run_night(ledger, workspace, night, settings)
        if decision == "held":
            # another worker holds a live lease on this night (this is a duplicate, or a
            # redelivery of a dead worker's message before its lease lapsed): look again once
            # the lease would have lapsed; then the night is done, or this delivery takes it over
            message = CurrentMessage.get_current_message()
            wait_ms = int(max(0.0, float(entry.get("lease_until") or 0) - ledger.now()) * 1000) + 500
            if message is not None:
                broker.enqueue(message.copy(), delay=wait_ms)

    def night_retries_exhausted(message: dict[str, Any], info: dict[str, Any]) -> None:
        workspace, night = message["args"][:2]
        entry = ledger.get(workspace, night) or {}
        ledger.finish(
            workspace,
            night,
            "parked",
            error=f"retries exhausted ({info.get('retries')} of {info.get('max_retries')}), "
            f"message dead-lettered: {entry.get('error') or 'no error recorded'}",
        )

    dramatiq.actor(
        actor_name=PARK_ACTOR,
        broker=broker,
        queue_name=settings.queue,
        max_retries=10,
    )(night_retries_exhausted)
    return dramatiq.actor(
        actor_name=ACTOR,
        broker=broker,
        queue_name=settings.queue,
        max_retries=settings.max_retries,
        min_backoff=settings.min_backoff_ms,
        max_backoff=settings.max_backoff_ms,
        time_limit=settings.time_limit_ms,
        on_retry_exhausted=PARK_ACTOR,
    )(dream_night_task)


def night_message(actor: Any, workspace: str, night: str) -> tuple[str, str]:
    """A Dramatiq message for (workspace, night), as the Redis broker stores it: (redis message
    id, encoded message). ``Ledger.claim_and_send`` and ``sweep_one`` push it in the same Lua
    script that writes the ledger, which is what makes claim-and-send atomic (the broker's own
    ``enqueue`` is an HSET on ``<queue>.msgs`` and an RPUSH on ``<queue>``; tests pin that)."""
    message = actor.message(workspace, night)
    redis_id = str(uuid.uuid4())
    message = message.copy(options={"redis_message_id": redis_id})
    return redis_id, message.encode().decode("utf-8")


def claim_and_send(ledger: Ledger, actor: Any, settings: FleetSettings, workspace: str, night: str) -> bool:
    return ledger.claim_and_send(
        workspace, night, queue_key=settings.queue_key, message=night_message(actor, workspace, night)
    )


def sweep(ledger: Ledger, actor: Any, settings: FleetSettings, nights: int = 3) -> dict[str, int]:
    """Re-send or park every night of the latest ``nights`` whose lease expired or whose queued
    message is gone (see ``Ledger.sweep_one``)."""
    counts = {"resent": 0, "parked_by_sweep": 0}
    now = ledger.now()
    for night in ledger.nights(nights):
        for workspace, e in ledger.night(night).items():
            state = e.get("state")
            if state not in ("queued", "running", "retrying"):
                continue
            if state != "queued" and float(e.get("lease_until") or 0) > now:
                continue
            decision, _ = ledger.sweep_one(
                workspace,
                night,
                queue_key=settings.queue_key,
                message=night_message(actor, workspace, night),
                max_attempts=settings.attempts_cap,
                retry_attempts=settings.max_retries + 1,
                grace_s=settings.sweep_grace_ms / 1000,
            )
            if decision == "resent":
                counts["resent"] += 1
            elif decision == "parked":
                counts["parked_by_sweep"] += 1
    return counts
