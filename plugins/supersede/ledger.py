"""The executor of the gate's decisions: the fact table, the recall index's validity columns,
MEMORY.md marking, the cascade and the contradictions log.

Every statement here is an INSERT or an UPDATE: no row is ever deleted. An interval is closed
only while open (``validity_end IS NULL``) and never reopened; ``ingestion_time`` is written by
the first INSERT and never updated."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lifelong.contracts import RecallStore
from lifelong.errors import LockedError
from lifelong.markdown import parse_blocks, split_lines, strip_comments
from lifelong.text import fold
from lifelong.workspace import Workspace, find_regions

from .decide import Fact

if TYPE_CHECKING:
    from lifelong.journal import Journal

_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_POINTER = re.compile(r"\s*\((?:superseded|contested) by .*\)\s*$")
_ITEM_LINE = re.compile(r"^(?P<lead>\s*(?:[-*+]|\d+[.)])\s+)(?P<body>.*?)(?P<tail>\s*<!--.*-->)?\s*$")
SKIPPED_BLOCKS = ("heading", "hr")


def clean(text: str) -> str:
    """The statement itself: comments, list markers, strike-through marks and the suite's own
    "(superseded by …)" and "(contested by …)" pointers removed, whitespace collapsed (case kept: names are capitals)."""
    text = strip_comments(text)
    text = "\n".join(_MARKER.sub("", line) for line in text.splitlines())
    text = _POINTER.sub("", text.replace("~~", ""))
    return " ".join(text.split())


def normalise(text: str) -> str:
    """The form facts are matched on: :func:`clean`, NFKC case-folded."""
    return fold(clean(text))


def fact_id(path: str, text: str) -> str:
    return hashlib.sha256(f"{path}\n{normalise(text)}".encode()).hexdigest()[:16]


def text_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).encode()).hexdigest()[:32]


def has_table(conn: Any, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


# ---------------------------------------------------------------------------------------------
# The fact table


def event(conn: Any, now: float, fid: str, name: str, other: str | None = None, detail: str = "") -> None:
    conn.execute(
        "INSERT INTO supersede_events(ts, fact_id, event, other_id, detail) VALUES (?, ?, ?, ?, ?)",
        (now, fid, name, other, detail),
    )


def register(
    conn: Any,
    fact: Fact,
    *,
    now: float,
    subject: frozenset[str],
    source: str,
    validity_start: float | None,
    depends_on: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Insert the fact once (its ingestion time is now, for good); later sightings only fill in
    line numbers and a key it did not have. Returns the row."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO supersede_facts(id, path, start_line, end_line, key, text, text_hash, subject,"
        " source, strength, event_time, validity_start, depends_on, ingestion_time)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            fact.id,
            fact.path,
            fact.start_line,
            fact.end_line,
            fact.key,
            fact.text,
            text_hash(fact.text),
            " " + " ".join(sorted(subject)) + " ",
            source,
            fact.strength,
            fact.time,
            validity_start,
            json.dumps(list(depends_on)),
            now,
        ),
    )
    if cur.rowcount:
        event(conn, now, fact.id, "seen", None, f"{source}: {fact.citation}")
    else:
        conn.execute(
            "UPDATE supersede_facts SET start_line = COALESCE(?, start_line), end_line = COALESCE(?, end_line),"
            " key = COALESCE(key, ?) WHERE id = ?",
            (fact.start_line, fact.end_line, fact.key, fact.id),
        )
    return row(conn, fact.id) or {}


def row(conn: Any, fid: str) -> dict[str, Any] | None:
    cur = conn.execute("SELECT * FROM supersede_facts WHERE id = ?", (fid,))
    found = cur.fetchone()
    if found is None:
        return None
    return dict(zip([c[0] for c in cur.description], found, strict=True))


def close(conn: Any, fid: str, end: float, by: str, now: float, reason: str = "") -> bool:
    """Close the fact's interval at ``end`` (never before it opened), stamped ``superseded_by``;
    False when it was already closed (a closed interval is never moved or reopened)."""
    cur = conn.execute(
        "UPDATE supersede_facts SET validity_end = MAX(?, COALESCE(validity_start, ?)), superseded_by = ?"
        " WHERE id = ? AND validity_end IS NULL",
        (end, end, by, fid),
    )
    if cur.rowcount:
        event(conn, now, fid, "expired" if by == "expired" else "superseded", by, reason)
        if by != "expired":
            event(conn, now, by, "supersedes", fid, reason)
            sup = json.loads(
                (
                    conn.execute("SELECT supersedes FROM supersede_facts WHERE id = ?", (by,)).fetchone()
                    or ["[]"]
                )[0]
            )
            if fid not in sup:
                conn.execute(
                    "UPDATE supersede_facts SET supersedes = ? WHERE id = ?", (json.dumps([*sup, fid]), by)
                )
    return bool(cur.rowcount)


def contest(conn: Any, ids: list[str], now: float, reason: str) -> None:
    for fid in ids:
        conn.execute("UPDATE supersede_facts SET contested = 1 WHERE id = ?", (fid,))
        for other in ids:
            if other != fid:
                event(conn, now, fid, "contested", other, reason)


def cascade(conn: Any, root: str, now: float) -> list[str]:
    """Mark every fact that depends on ``root`` (by id or key), directly or through others, for
    review. A visited set stops it on cycles; each fact is marked once."""
    visited = {root}
    frontier = [root]
    marked: list[str] = []
    while frontier:
        fid = frontier.pop()
        key = (conn.execute("SELECT key FROM supersede_facts WHERE id = ?", (fid,)).fetchone() or [None])[0]
        names = [fid] + ([key] if key else [])
        q = ",".join("?" * len(names))
        dependants = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT f.id FROM supersede_facts f, json_each(f.depends_on) d"
                f" WHERE d.value IN ({q}) ORDER BY f.id",
                names,
            )
        ]
        for dep in dependants:
            if dep in visited:
                continue
            visited.add(dep)
            conn.execute(
                "UPDATE supersede_facts SET review = 1, review_reason = ? WHERE id = ?",
                (f"depends on {fid}, which was superseded", dep),
            )
            event(conn, now, dep, "review", fid, "a fact it depends on was superseded")
            marked.append(dep)
            frontier.append(dep)
    return marked


# ---------------------------------------------------------------------------------------------
# The recall index's validity columns


def content_blocks(text: str, first_line: int = 1) -> list[tuple[int, int, str]]:
    """(start, end, text) of every block that states something (headings and rules left out)."""
    lines = split_lines(text)
    out = []
    for b in parse_blocks(text, first_line):
        if b.kind in SKIPPED_BLOCKS:
            continue
        body = "\n".join(lines[b.start - first_line : b.end - first_line + 1])
        if normalise(body):
            out.append((b.start, b.end, body))
    return out


def closed_facts(conn: Any, ids: list[str]) -> dict[str, tuple[float, str | None]]:
    """Of these fact ids, the closed ones: id -> (validity_end, superseded_by)."""
    if not ids:
        return {}
    q = ",".join("?" * len(ids))
    return {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            f"SELECT id, validity_end, superseded_by FROM supersede_facts WHERE id IN ({q})"
            " AND validity_end IS NOT NULL",
            ids,
        )
    }


def sync_chunks(conn: Any, recall: RecallStore | None, paths: list[str]) -> int:
    """Close the open chunks of ``paths`` whose every content block is a closed fact (a chunk that
    still states something current stays open; search filters its closed facts one by one),
    through recall's index (``ctx.recall``; None: no index, nothing to close), which keeps the
    closing across a re-index. Returns how many chunks were closed."""
    if not paths or recall is None:
        return 0
    closed = 0
    for chunk in recall.chunks(paths=paths, open_only=True):
        ids = [fact_id(chunk.path, body) for _, _, body in content_blocks(chunk.text, chunk.start_line)]
        done = closed_facts(conn, ids)
        if not ids or len(done) < len(set(ids)):
            continue
        end, by = max(done.values(), key=lambda v: v[0])
        closed += recall.close_chunk(chunk, end, by)
    return closed


# ---------------------------------------------------------------------------------------------
# MEMORY.md


def strike_line(line: str, pointer: str) -> str | None:
    """``- ~~old~~ (superseded by POINTER) <!-- key… -->``; None when the line is no list item
    or is already struck."""
    m = _ITEM_LINE.match(line)
    if not m or not m.group("body").strip() or m.group("body").startswith("~~"):
        return None
    return f"{m.group('lead')}~~{m.group('body').strip()}~~ (superseded by {pointer}){m.group('tail') or ''}"


def strike_memory_item(
    ws: Workspace, relpath: str, text_of_fact: str, line_no: int | None, pointer: str, journal: Journal
) -> bool:
    """Strike the fact's line through in place, inside a managed section only (a line a human
    wrote outside the fences is never touched). Found by line number, else by its text.
    Journaled, so ``lifelong dream rollback``/journal rollback restores the exact bytes."""
    path = ws.resolve(relpath)
    if not path.is_file():
        return False
    data = path.read_bytes().decode("utf-8")
    regions = find_regions(data)
    lines = data.split("\n")
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    want = normalise(text_of_fact)
    numbers = [line_no] if line_no and 1 <= line_no <= len(lines) else []
    numbers += [i + 1 for i, line in enumerate(lines) if normalise(line) == want and i + 1 not in numbers]
    for n in numbers:
        line = lines[n - 1]
        if normalise(line) != want:
            continue
        if not any(r.body_start <= offsets[n - 1] < r.body_end for r in regions):
            continue
        struck = strike_line(line.rstrip("\r"), pointer)
        if struck is None:
            continue
        lines[n - 1] = struck + ("\r" if line.endswith("\r") else "")
        journal.write(path, "\n".join(lines), action="supersede")
        return True
    return False


def with_write_lock(ws: Workspace, fn: Any, timeout: float = 0.5) -> bool:
    """Run ``fn`` under the workspace write lock; False (nothing done) when another job holds it
    (the caller may hold it itself: flush decides under it)."""
    try:
        with ws.lock("write", timeout=timeout):
            fn()
        return True
    except LockedError:
        return False


# ---------------------------------------------------------------------------------------------
# The log


def log_path(ws: Workspace) -> Path:
    return ws.state_dir / "contradictions.jsonl"


def append_log(ws: Workspace, entry: dict[str, Any]) -> None:
    ws.ensure_state()
    with open(log_path(ws), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")


def read_log(ws: Workspace) -> tuple[list[dict[str, Any]], int]:
    """The logged decisions, oldest first, and how many lines could not be read."""
    path = log_path(ws)
    if not path.exists():
        return [], 0
    entries, bad = [], 0
    for line in path.read_text("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(item, dict):
            entries.append(item)
        else:
            bad += 1
    return entries, bad


def iso(ts: float | None, tz: dt.tzinfo) -> str | None:
    return None if ts is None else dt.datetime.fromtimestamp(ts, tz).isoformat(timespec="seconds")
