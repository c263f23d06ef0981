"""The fleet's record of every (workspace, night) in Redis: what ``lifelong fleet status`` shows,
what makes a duplicated or retried task a no-op, and what lets a lost night be found and re-sent.

Keys (prefix ``lifelong:fleet:``, shared by every scheduler and worker on one Redis):

- ``night:YYYY-MM-DD``: a hash, workspace path -> JSON ``{state, attempts, since, at,
  lease_until, msg, worker, token, error, run_id, promoted, ...}``; ``state`` is queued | running |
  retrying | done | parked. Times are Redis server time (epoch seconds): one clock for every
  machine, and independent of a pinned ``--now``. The hash expires ``retention`` seconds after
  its last write (30 days by default), so the ledger stays bounded;
- ``nights``: a sorted set of the nights seen (score: the date's ordinal), trimmed to the same
  retention.

Every change of an entry is one Lua script (atomic in Redis):

- ``claim_and_send``: create the entry as ``queued`` *and* push the Dramatiq message onto the
  queue, or do neither (the entry exists already). A scheduler killed at any point leaves either a
  night claimed and queued, or nothing, never a claim without its message;
- ``begin``: a worker takes a night: skip it when it is done, parked or running under another
  worker's live lease; park it when it has had ``max_attempts`` attempts already (whatever ended
  them: an exception, SIGKILL, a time limit); else count the attempt and take a lease;
- ``renew``: the worker running a night extends its lease while the dream runs;
- ``finish``: record done / retrying (a failure Dramatiq will retry) / parked;
- ``sweep_one``: a night whose lease expired (its worker died, or its outcome could not be written
  because Redis was down) or whose queued message is gone from the queue is re-sent, or parked
  when it has used its attempts.
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
ACTIVE = ("queued", "running", "retrying")

_NOW = "local t = redis.call('TIME'); local now = tonumber(t[1]) + tonumber(t[2]) / 1000000\n"

# KEYS: night hash, nights zset, queue list, queue messages hash
# ARGV: workspace, night, ordinal, entry json, message id ('' = none), message data, retention s
CLAIM_AND_SEND = (
    _NOW
    + """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local e = cjson.decode(ARGV[4])
e.since = now; e.at = now
if ARGV[5] ~= '' then e.msg = ARGV[5] end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[3]) - math.ceil(tonumber(ARGV[7]) / 86400))
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[5], ARGV[6])
  redis.call('RPUSH', KEYS[3], ARGV[5])
end
return 1
"""
)

# KEYS: night hash, nights zset. ARGV: workspace, token, worker, lease s, max attempts,
# retention s, night, ordinal
BEGIN = (
    _NOW
    + """
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[7])
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local e = {attempts = 0}
if raw then e = cjson.decode(raw) end
if e.state == 'done' or e.state == 'parked' then return {'skip', raw} end
if e.state == 'running' and (tonumber(e.lease_until) or 0) > now then return {'held', raw} end
local attempts = tonumber(e.attempts) or 0
if e.state == 'running' then
  e.error = 'attempt ' .. attempts .. ' did not finish: its worker (' .. tostring(e.worker) ..
    ') died, was killed or lost Redis before recording an outcome'
end
if attempts >= tonumber(ARGV[5]) then
  e.state = 'parked'; e.since = now; e.at = now; e.lease_until = nil; e.token = nil
  e.error = 'parked after ' .. attempts .. ' attempts: ' .. tostring(e.error or 'no outcome recorded')
  local out = cjson.encode(e)
  redis.call('HSET', KEYS[1], ARGV[1], out); redis.call('EXPIRE', KEYS[1], ARGV[6])
  return {'parked', out}
end
e.attempts = attempts + 1; e.state = 'running'; e.token = ARGV[2]; e.worker = ARGV[3]
e.lease_until = now + tonumber(ARGV[4]); e.since = now; e.at = now
local out = cjson.encode(e)
redis.call('HSET', KEYS[1], ARGV[1], out); redis.call('EXPIRE', KEYS[1], ARGV[6])
return {'run', out}
"""
)

# KEYS: night hash. ARGV: workspace, token, lease s
RENEW = (
    _NOW
    + """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local e = cjson.decode(raw)
if e.state ~= 'running' or e.token ~= ARGV[2] then return 0 end
e.lease_until = now + tonumber(ARGV[3]); e.at = now
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return 1
"""
)

# KEYS: night hash, nights zset. ARGV: workspace, token ('' = any), state, fields json, lease s,
# retention s, night, ordinal
# done is written whatever attempt holds the night (the dream is idempotent per night); retrying
# only by the attempt that holds it; a final outcome (done, parked) is never overwritten.
FINISH = (
    _NOW
    + """
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[7])
local raw = redis.call('HGET', KEYS[1], ARGV[1])
local e = {attempts = 0}
if raw then e = cjson.decode(raw) end
if e.state == 'done' or e.state == 'parked' then return raw end
if ARGV[3] == 'retrying' and ARGV[2] ~= '' and e.token ~= ARGV[2] then return raw end
for k, v in pairs(cjson.decode(ARGV[4])) do e[k] = v end
e.state = ARGV[3]; e.since = now; e.at = now; e.token = nil; e.lease_until = nil
if ARGV[3] == 'retrying' then e.lease_until = now + tonumber(ARGV[5]) end
local out = cjson.encode(e)
redis.call('HSET', KEYS[1], ARGV[1], out); redis.call('EXPIRE', KEYS[1], ARGV[6])
return out
"""
)

# KEYS: night hash, queue list, queue messages hash
# ARGV: workspace, message id, message data, max attempts, retry attempts (max_retries + 1),
#       retention s, grace s (a queued entry younger than this is left alone)
SWEEP_ONE = (
    _NOW
    + """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {'gone', ''} end
local e = cjson.decode(raw)
local attempts = tonumber(e.attempts) or 0
if e.state == 'queued' then
  if e.msg and redis.call('HEXISTS', KEYS[3], e.msg) == 1 then return {'live', raw} end
  if now - (tonumber(e.since) or 0) < tonumber(ARGV[7]) then return {'live', raw} end
  e.error = 'its queued message was lost (a scheduler that died between claim and send, or Redis data loss)'
elseif e.state == 'running' or e.state == 'retrying' then
  if (tonumber(e.lease_until) or 0) > now then return {'live', raw} end
  if e.state == 'running' then
    e.error = 'attempt ' .. attempts .. ' did not finish: its worker (' .. tostring(e.worker) ..
      ') died, was killed or lost Redis before recording an outcome'
  end
else
  return {'final', raw}
end
local out
if attempts >= tonumber(ARGV[4]) or (e.state == 'retrying' and attempts >= tonumber(ARGV[5])) then
  e.state = 'parked'; e.since = now; e.at = now; e.lease_until = nil; e.token = nil
  e.error = 'parked after ' .. attempts .. ' attempts: ' .. tostring(e.error or 'no outcome recorded')
  out = cjson.encode(e)
  redis.call('HSET', KEYS[1], ARGV[1], out); redis.call('EXPIRE', KEYS[1], ARGV[6])
  return {'parked', out}
end
e.resent = (tonumber(e.resent) or 0) + 1
e.note = 'lease expired or message lost in state ' .. e.state .. '; re-sent'
e.state = 'queued'; e.since = now; e.at = now; e.lease_until = nil; e.token = nil; e.msg = ARGV[2]
out = cjson.encode(e)
redis.call('HSET', KEYS[1], ARGV[1], out); redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('RPUSH', KEYS[2], ARGV[2])
return {'resent', out}
"""
)


def worker_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _ordinal(night: str) -> int:
    return dt.date.fromisoformat(night).toordinal()


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value


class Ledger:
    """The ledger on one Redis. ``queue``: the Dramatiq queue's list and messages-hash keys
    (``namespace:queue``), which ``claim_and_send`` and ``sweep_one`` push messages onto."""

    def __init__(self, client: Any, *, retention_s: int = 30 * 86400):  # a redis.Redis
        self.client = client
        self.retention_s = retention_s
        self._claim = client.register_script(CLAIM_AND_SEND)
        self._begin = client.register_script(BEGIN)
        self._renew = client.register_script(RENEW)
        self._finish = client.register_script(FINISH)
        self._sweep = client.register_script(SWEEP_ONE)

    @staticmethod
    def _key(night: str) -> str:
        return f"{PREFIX}night:{night}"

    def now(self) -> float:
        sec, usec = self.client.time()
        return sec + usec / 1e6

    def claim_and_send(
        self,
        workspace: str,
        night: str,
        *,
        queue_key: str = "",
        message: tuple[str, str] | None = None,
        state: str = "queued",
        error: str | None = None,
    ) -> bool:
        """Create the (workspace, night) entry and push ``message`` (redis id, encoded data) onto
        ``queue_key``, atomically; False (and nothing sent) when the entry already exists."""
        entry: dict[str, Any] = {"state": state, "attempts": 0}
        if error:
            entry["error"] = error
        msg_id, data = message or ("", "")
        keys = [
            self._key(night),
            f"{PREFIX}nights",
            queue_key or "-",
            f"{queue_key}.msgs" if queue_key else "-",
        ]
        args = [workspace, night, _ordinal(night), json.dumps(entry), msg_id, data, self.retention_s]
        return bool(self._claim(keys=keys, args=args))

    def begin(
        self, workspace: str, night: str, *, token: str, worker: str, lease_s: float, max_attempts: int
    ) -> tuple[str, dict[str, Any]]:
        """``run`` (the caller holds the lease), ``skip`` (done or parked), ``held`` (another
        worker's lease is live) or ``parked`` (out of attempts), with the entry."""
        decision, raw = self._begin(
            keys=[self._key(night), f"{PREFIX}nights"],
            args=[workspace, token, worker, lease_s, max_attempts, self.retention_s, night, _ordinal(night)],
        )
        return _s(decision), json.loads(raw) if raw else {}

    def renew(self, workspace: str, night: str, *, token: str, lease_s: float) -> bool:
        return bool(self._renew(keys=[self._key(night)], args=[workspace, token, lease_s]))

    def finish(
        self, workspace: str, night: str, state: str, *, token: str = "", lease_s: float = 0, **fields: Any
    ) -> dict[str, Any]:
        fields = {k: ("" if v is None else v) for k, v in fields.items()}  # cjson: no nulls
        raw = self._finish(
            keys=[self._key(night), f"{PREFIX}nights"],
            args=[
                workspace,
                token,
                state,
                json.dumps(fields),
                lease_s,
                self.retention_s,
                night,
                _ordinal(night),
            ],
        )
        return json.loads(raw) if raw else {}

    def sweep_one(
        self,
        workspace: str,
        night: str,
        *,
        queue_key: str,
        message: tuple[str, str],
        max_attempts: int,
        retry_attempts: int,
        grace_s: float,
    ) -> tuple[str, dict[str, Any]]:
        decision, raw = self._sweep(
            keys=[self._key(night), queue_key, f"{queue_key}.msgs"],
            args=[workspace, *message, max_attempts, retry_attempts, self.retention_s, grace_s],
        )
        return _s(decision), json.loads(raw) if raw else {}

    def get(self, workspace: str, night: str) -> dict[str, Any] | None:
        raw = self.client.hget(self._key(night), workspace)
        return json.loads(raw) if raw else None

    def night(self, night: str) -> dict[str, dict[str, Any]]:
        return {_s(k): json.loads(v) for k, v in self.client.hgetall(self._key(night)).items()}

    def nights(self, limit: int = 3) -> list[str]:
        return [_s(n) for n in self.client.zrevrange(f"{PREFIX}nights", 0, limit - 1)]

    def summary(self, night: str, now: float | None = None) -> dict[str, Any]:
        """Counts per state, and every entry with its age (``age_s``: time in its state) and,
        for a night in flight, whether it is ``stuck`` (its lease expired: the next scheduler
        pass re-sends or parks it)."""
        now = self.now() if now is None else now
        entries = self.night(night)
        for e in entries.values():
            e["age_s"] = round(now - float(e.get("since") or now), 1)
            lease = e.get("lease_until")
            e["stuck"] = e.get("state") in ("running", "retrying") and lease is not None and lease < now
        counts = Counter(e.get("state", "?") for e in entries.values())
        return {
            "night": night,
            "workspaces": len(entries),
            "states": {s: counts.get(s, 0) for s in STATES},
            "stuck": sum(1 for e in entries.values() if e["stuck"]),
            "entries": entries,
        }
