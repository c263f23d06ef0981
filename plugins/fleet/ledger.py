"""The fleet's record of every (workspace, night) in Redis: what ``lifelong fleet status`` shows
and what makes a duplicated or retried task a no-op.

Keys (prefix ``lifelong:fleet:``, shared by every scheduler and worker on one Redis):

- ``night:YYYY-MM-DD``: a hash, workspace path -> JSON ``{state, attempts, run_id, promoted,
  error, worker, updated}``; ``state`` is queued | running | done | retrying | parked;
- ``nights``: a sorted set of the nights seen (score: the date's ordinal).

A night is enqueued only by the caller that created its entry (``HSETNX``), so two schedulers, or
one restarted, never enqueue a night twice; the task itself skips a night already ``done``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from collections import Counter
from typing import Any

PREFIX = "lifelong:fleet:"
STATES = ("queued", "running", "retrying", "done", "parked")


def worker_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Ledger:
    def __init__(self, client: Any):  # a redis.Redis
        self.client = client

    @staticmethod
    def _key(night: str) -> str:
        return f"{PREFIX}night:{night}"

    def claim(self, workspace: str, night: str, now: dt.datetime) -> bool:
        """Create the (workspace, night) entry as ``queued``; False when it already exists."""
        entry = {"state": "queued", "attempts": 0, "updated": now.isoformat(timespec="seconds")}
        created = bool(self.client.hsetnx(self._key(night), workspace, json.dumps(entry)))
        if created:
            self.client.zadd(f"{PREFIX}nights", {night: dt.date.fromisoformat(night).toordinal()})
        return created

    def get(self, workspace: str, night: str) -> dict[str, Any] | None:
        raw = self.client.hget(self._key(night), workspace)
        return json.loads(raw) if raw else None

    def update(self, workspace: str, night: str, now: dt.datetime, **fields: Any) -> dict[str, Any]:
        entry = self.get(workspace, night) or {"attempts": 0}
        entry.update(fields, updated=now.isoformat(timespec="seconds"))
        self.client.hset(self._key(night), workspace, json.dumps(entry))
        self.client.zadd(f"{PREFIX}nights", {night: dt.date.fromisoformat(night).toordinal()})
        return entry

    def night(self, night: str) -> dict[str, dict[str, Any]]:
        return {
            k.decode() if isinstance(k, bytes) else k: json.loads(v)
            for k, v in self.client.hgetall(self._key(night)).items()
        }

    def nights(self, limit: int = 3) -> list[str]:
        return [
            n.decode() if isinstance(n, bytes) else n
            for n in self.client.zrevrange(f"{PREFIX}nights", 0, limit - 1)
        ]

    def summary(self, night: str) -> dict[str, Any]:
        entries = self.night(night)
        counts = Counter(e.get("state", "?") for e in entries.values())
        return {
            "night": night,
            "workspaces": len(entries),
            "states": {s: counts.get(s, 0) for s in STATES},
            "entries": entries,
        }
