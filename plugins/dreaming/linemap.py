"""Recall events keep pointing at the lines they found, even when lines move before 03:00.

A recall event names lines by number (``path``, ``start_line``, ``end_line``) as the file was when
the search ran. If someone inserts lines above before the nightly run, those numbers point at
other text. So whenever a sync sees a daily change (``on_files_changed``), the plugin records
the content hash of every line of it with the time (``dream_line_maps``). At night, an event is
read against the last snapshot taken at or before it: its lines' hashes are found in the file as
it is now (a line-level diff), and the event is attributed to where those lines are now. Lines
that are gone are not guessed at: the event is left unattributed.

Snapshots older than ``keep_days`` are pruned when a newer one exists for the same daily.
"""

from __future__ import annotations

import bisect
import difflib
import hashlib
import json
from collections import defaultdict
from typing import Any

from lifelong.contracts import PluginContext
from lifelong.workspace import daily_date


def line_hashes(text: str) -> list[str]:
    return [hashlib.sha256(line.rstrip().encode("utf-8")).hexdigest()[:12] for line in text.split("\n")]


def is_daily(rel: str) -> bool:
    return (
        rel.startswith("memory/") and not rel.startswith("memory/dreaming/") and daily_date(rel) is not None
    )


def record_snapshots(ctx: PluginContext, paths: list[str], *, keep_days: float = 14.0) -> int:
    """Store the line hashes of ``paths`` (dailies only) as of now, when they changed."""
    store = ctx.store
    now = ctx.now().timestamp()
    rows = []
    for rel in paths:
        if not is_daily(rel):
            continue
        try:
            text = ctx.workspace.read_text(rel)
        except Exception:  # unreadable now: the nightly run reports it
            continue
        hashes = json.dumps(line_hashes(text))
        last = store.conn.execute(
            "SELECT hashes FROM dream_line_maps WHERE path = ? ORDER BY ts DESC LIMIT 1", (rel,)
        ).fetchone()
        if last is None or last[0] != hashes:
            rows.append((rel, now, hashes))
    if rows:
        with store.lock:
            store.conn.executemany(
                "INSERT OR REPLACE INTO dream_line_maps(path, ts, hashes) VALUES (?, ?, ?)", rows
            )
            store.conn.execute(
                "DELETE FROM dream_line_maps WHERE ts < ? AND ts < (SELECT max(ts) FROM dream_line_maps m"
                " WHERE m.path = dream_line_maps.path)",
                (now - keep_days * 86400.0,),
            )
            store.conn.commit()
    return len(rows)


def remap(old: list[str], new: list[str]) -> dict[int, int]:
    """1-based line numbers of ``old`` -> where the same line is in ``new`` (unchanged lines only)."""
    out: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for i in range(size):
            out[a + i + 1] = b + i + 1
    return out


class LineMaps:
    """Snapshots of the dailies the night's events point at, and their line moves to now."""

    def __init__(self, store: Any, paths: set[str], current: dict[str, list[str]]):
        self.snapshots: dict[str, list[tuple[float, list[str]]]] = defaultdict(list)
        self.current = current
        self.maps: dict[tuple[str, float], dict[int, int] | None] = {}
        if paths:
            for path, ts, hashes in store.conn.execute(
                "SELECT path, ts, hashes FROM dream_line_maps WHERE path IN (SELECT value FROM json_each(?))"
                " ORDER BY path, ts",
                (json.dumps(sorted(paths)),),
            ):
                self.snapshots[path].append((ts, json.loads(hashes)))
        self.moved = 0
        self.lost = 0

    def locate(self, path: str, start: int, end: int, ts: float) -> tuple[int, int] | None:
        """Where the lines an event at ``ts`` named are now; the same range when nothing is
        known or nothing moved; None when they are gone."""
        snaps = self.snapshots.get(path)
        now = self.current.get(path)
        if not snaps or now is None:
            return start, end
        i = bisect.bisect_right([t for t, _ in snaps], ts) - 1
        if i < 0:
            return start, end
        ts_snap, old = snaps[i]
        if old == now:
            return start, end
        key = (path, ts_snap)
        if key not in self.maps:
            self.maps[key] = remap(old, now)
        mapping = self.maps[key] or {}
        lines = [mapping[n] for n in range(start, end + 1) if n in mapping]
        if not lines:
            self.lost += 1
            return None
        found = (min(lines), max(lines))
        if found != (start, end):
            self.moved += 1
        return found
