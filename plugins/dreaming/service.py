"""``dream_night``: the nightly run as a service other plugins call (``ctx.call_tool``), e.g. the
fleet's task queue. It is never offered to a model (registered with ``agent=False``).

Idempotent per night: the first run that completes for a night (status ok or nothing) is recorded
under ``night:YYYY-MM-DD`` in ``dream_meta``; a later call for the same night returns that run
instead of dreaming again. A run killed mid-way is undone from its journal by the next call (it is
on record as ``running`` from before its first write) and the night is simply run again: the
candidate pool keys every promotion, so a second run over the same material promotes nothing twice.
"""

from __future__ import annotations

import datetime as dt

from lifelong.contracts import DREAM_NIGHT, JSONObject, PluginContext
from lifelong.errors import InputError, LockedError

from .run import run_dream
from .state import read_meta, write_meta

PARAMETERS: JSONObject = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "night": {
            "type": "string",
            "description": "The night (YYYY-MM-DD, the date of its 03:00 in the workspace's zone).",
        }
    },
    "required": ["night"],
}


def dream_night(ctx: PluginContext, night: str) -> JSONObject:
    try:
        day = dt.date.fromisoformat(night)
    except ValueError as exc:
        raise InputError(f"dream_night: night must be YYYY-MM-DD, got {night!r}") from exc
    key = f"night:{day.isoformat()}"
    done = read_meta(ctx.store, key)
    if done:
        return {"night": day.isoformat(), "status": "already_done", "run_id": done, "promoted": 0}
    try:
        run = run_dream(ctx.host)
    except LockedError as exc:
        return {"night": day.isoformat(), "status": "locked", "error": str(exc)}
    if run.status in ("ok", "nothing"):
        write_meta(ctx.store, key, run.run_id)
    return {
        "night": day.isoformat(),
        "status": run.status,
        "run_id": run.run_id,
        "promoted": len(run.promoted),
        "elapsed_ms": round(run.elapsed_ms, 1),
    }


def register(register_tool) -> None:  # noqa: ANN001 - the host's ToolRegistrar
    register_tool(
        DREAM_NIGHT,
        "Run the nightly consolidation for one night, once (a second call for the night returns the first run).",
        PARAMETERS,
        dream_night,
        "dreaming",
        {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
        agent=False,
    )
