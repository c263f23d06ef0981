"""The reversible sub-threshold tier: messages too small to capture are not thrown away but kept,
gzip-compressed, in ``.lifelong/cache/compaction/<session>/<when>-<n>.jsonl.gz`` (one file per
compaction; one JSON line per message with its id, role, time and exact content). Never indexed;
restored byte for byte by ``lifelong capture restore``; files older than the retention are pruned by
the nightly run (or ``lifelong capture prune``)."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lifelong.errors import InputError
from lifelong.workspace import Workspace, atomic_write

from .capture import CachedMessage

TIER_DIR = "cache/compaction"
_STAMP = "%Y%m%dT%H%M%S"


def session_folder(ws: Workspace, session_id: str) -> Path:
    """The tier folder of one session: a readable slug plus a hash of the exact id."""
    slug = re.sub(r"[^\w.-]+", "-", session_id).strip("-.")[:40] or "session"
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:8]
    return ws.state_dir / TIER_DIR / f"{slug}-{digest}"


def write_batch(
    ws: Workspace, session_id: str, cached: list[CachedMessage], now: dt.datetime, count: int
) -> Path | None:
    """Store one compaction's trivial messages; returns the file (None when there were none)."""
    if not cached:
        return None
    lines = [
        json.dumps(
            {
                "id": c.message_id,
                "role": c.role,
                "ts": c.when.isoformat(),
                "content": c.content,
                "session": session_id,
            },
            ensure_ascii=False,
        )
        for c in cached
    ]
    path = session_folder(ws, session_id) / f"{now.astimezone(dt.UTC).strftime(_STAMP)}-{count}.jsonl.gz"
    atomic_write(path, gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0))
    return path


@dataclass(frozen=True)
class RestoredMessage:
    id: str
    role: str
    ts: str
    content: str


def restore(
    ws: Workspace, session_id: str, *, since: dt.datetime | None = None, until: dt.datetime | None = None
) -> list[RestoredMessage]:
    """The session's cached messages (optionally within [since, until]), oldest first, exactly as
    they were received."""
    folder = session_folder(ws, session_id)
    if not folder.is_dir():
        raise InputError(f"no compaction cache for session {session_id!r} (see `lifelong capture list`)")
    out: list[RestoredMessage] = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        try:
            raw = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise InputError(f"{path.name}: damaged compaction cache file ({exc})") from exc
        for line in raw.splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            when = dt.datetime.fromisoformat(item["ts"])
            if (since and when < since) or (until and when > until):
                continue
            out.append(RestoredMessage(item["id"], item["role"], item["ts"], item["content"]))
    return sorted(out, key=lambda m: m.ts)


def cached_ids(ws: Workspace, session_id: str) -> frozenset[str]:
    """The ids of the messages this session's tier already holds."""
    try:
        return frozenset(m.id for m in restore(ws, session_id))
    except InputError:
        return frozenset()


def sessions(ws: Workspace) -> list[dict[str, Any]]:
    """Every session in the tier: its id, files and message count."""
    root = ws.state_dir / TIER_DIR
    found = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []:
        files = sorted(folder.glob("*.jsonl.gz"))
        session_id, count = "", 0
        for path in files:
            for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
                if line.strip():
                    count += 1
                    session_id = session_id or json.loads(line).get("session", "")
        found.append({"session": session_id or folder.name, "files": len(files), "messages": count})
    return found


def prune(ws: Workspace, now: dt.datetime, retention_days: int) -> list[str]:
    """Delete tier files cached more than ``retention_days`` before ``now``; returns their names."""
    root = ws.state_dir / TIER_DIR
    cutoff = now.astimezone(dt.UTC) - dt.timedelta(days=retention_days)
    removed = []
    for path in sorted(root.glob("*/*.jsonl.gz")) if root.is_dir() else []:
        try:
            stamp = dt.datetime.strptime(path.name.split("-", 1)[0], _STAMP).replace(tzinfo=dt.UTC)
        except ValueError:
            continue
        if stamp < cutoff:
            path.unlink()
            removed.append(f"{path.parent.name}/{path.name}")
    for folder in root.glob("*") if root.is_dir() else []:
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return removed
