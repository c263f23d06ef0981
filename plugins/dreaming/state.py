"""Every read and write of the dreaming tables (:mod:`tables`) outside two caches: the candidate
pool, the recall signals, the items written to MEMORY.md, the run records and their history, the
status log a rollback reverts, and the ``dream_meta`` entries. The other modules hold no SQL,
except the two stores that own a table each: the fact-grouping cache (:mod:`facts`) and the line
snapshots of synced dailies (:mod:`linemap`).

Writes that must land together (a run's pool, its watermark and its item hashes; a rollback's
records) are one transaction each, under the store's lock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .candidates import CandidatePool

# ---------------------------------------------------------------------------------------------
# meta


def read_meta(store: Any, key: str) -> str | None:
    row = store.conn.execute("SELECT value FROM dream_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def write_meta(store: Any, key: str, value: str) -> None:
    with store.lock:
        store.conn.execute("INSERT OR REPLACE INTO dream_meta(key, value) VALUES (?, ?)", (key, value))
        store.conn.commit()


# ---------------------------------------------------------------------------------------------
# the candidate pool, its signals and the items written


def load_pool(store: Any, dedupe_threshold: float) -> CandidatePool:
    """The stored candidates and their occurrences, as a pool."""
    candidates = store.conn.execute(
        "SELECT key, text, heading, path, start_line, end_line, day, first_seen, light_hits, light_last,"
        " rem_hits, rem_last, status, status_run, status_reason, superseded_by, last_score, components,"
        " contested"
        " FROM dream_candidates"
    )
    occurrences = store.conn.execute(
        "SELECT snippet_key, path, key, start_line, end_line, day, text FROM dream_occurrences"
    )
    return CandidatePool.from_rows(candidates, occurrences, dedupe_threshold)


def save_pool(
    store: Any,
    pool: CandidatePool,
    run_id: str,
    *,
    meta: dict[str, str] | None = None,
    item_hashes: dict[str, str] | None = None,
) -> None:
    """Write the pool's changes, the ``meta`` entries (the recall-event watermark) and the
    hashes of the items the run wrote to MEMORY.md, in one transaction: a crash keeps all of
    them or none."""
    with store.write() as conn:
        conn.executemany(
            "INSERT OR REPLACE INTO dream_meta(key, value) VALUES (?, ?)", list((meta or {}).items())
        )
        conn.executemany(
            "INSERT OR REPLACE INTO dream_items(key, sha, run_id) VALUES (?, ?, ?)",
            [(k, h, run_id) for k, h in (item_hashes or {}).items()],
        )
        rows = [c.row() for c in pool.candidates.values() if c.dirty or c.is_new]
        if rows:
            cols = list(rows[0])
            conn.executemany(
                f"INSERT OR REPLACE INTO dream_candidates({', '.join(cols)}) "
                f"VALUES ({', '.join('?' * len(cols))})",
                [tuple(r[c] for c in cols) for r in rows],
            )
        occs = [pool.occurrences[k] for k in pool.new_occurrences if k in pool.occurrences]
        conn.executemany(
            "INSERT OR REPLACE INTO dream_occurrences(snippet_key, path, key, start_line, end_line, day, text)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(o.snippet_key, o.path, o.key, o.start_line, o.end_line, o.day, o.text) for o in occs],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO dream_signals(event_id, key, ts, day, query_hash, score, source, overlap)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (s.event_id, s.key, s.ts, s.day, s.query_hash, s.score, s.source, s.overlap)
                for s in pool.new_signals.values()
            ],
        )
        base = conn.execute(
            "SELECT coalesce(max(seq), -1) + 1 FROM dream_status_log WHERE run_id = ?", (run_id,)
        ).fetchone()[0]
        conn.executemany(
            "INSERT INTO dream_status_log(run_id, seq, key, old_status, old_status_run, old_status_reason,"
            " new_status) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(run_id, base + i, *change) for i, change in enumerate(pool.status_changes)],
        )


def stored_signals(store: Any, keys: list[str]) -> Iterable[tuple[str, float, str, str, float, int]]:
    """The stored recall signals of ``keys``: (key, ts, day, query hash, score, event id) rows."""
    return store.conn.execute(
        "SELECT key, ts, day, query_hash, score, event_id FROM dream_signals"
        " WHERE key IN (SELECT value FROM json_each(?))",
        (json.dumps(keys),),
    )


def written_hashes(store: Any) -> dict[str, str]:
    """key -> hash of the text each promoted item had when a run wrote it."""
    return dict(store.conn.execute("SELECT key, sha FROM dream_items").fetchall())


def staged_count(store: Any) -> int:
    return store.conn.execute("SELECT count(*) FROM dream_candidates WHERE status = 'staged'").fetchone()[0]


# what explain reads about one candidate


def candidates_by_prefix(store: Any, prefix: str) -> list[dict[str, Any]]:
    return store.query("SELECT * FROM dream_candidates WHERE key LIKE ? ORDER BY key", (prefix + "%",))


def signals_of(store: Any, key: str) -> list[dict[str, Any]]:
    """The recall signals credited to ``key``, oldest first (``query`` is NULL: recall has it)."""
    return store.query(
        "SELECT s.event_id, s.ts, s.day, s.query_hash, s.score, s.source, s.overlap, NULL AS query"
        " FROM dream_signals s WHERE s.key = ? ORDER BY s.ts",
        (key,),
    )


def status_log_of(store: Any, key: str) -> list[dict[str, Any]]:
    return store.query(
        "SELECT run_id, old_status, new_status FROM dream_status_log WHERE key = ? ORDER BY run_id, seq",
        (key,),
    )


def revert_statuses(store: Any, run_id: str, *, log_as: str | None = None) -> int:
    """Undo the run's status changes. A candidate the run staged stays staged (what was learned
    from the notes and recalls is kept; only the run's decisions are undone). With ``log_as``,
    each change is itself logged under that id (a forced rollback), so it can be undone too."""
    log = store.conn.execute(
        "SELECT key, old_status, old_status_run, old_status_reason FROM dream_status_log WHERE run_id = ?"
        " ORDER BY seq DESC",
        (run_id,),
    ).fetchall()
    fresh_keys = [
        r[0]
        for r in store.conn.execute(
            "SELECT key FROM dream_candidates WHERE status_run = ? AND status != 'staged'", (run_id,)
        )
    ]
    with store.lock:
        if log_as is not None:
            seq = 0
            for key in [k for k, *_ in log] + fresh_keys:
                row = store.conn.execute(
                    "SELECT status, status_run, status_reason FROM dream_candidates WHERE key = ?", (key,)
                ).fetchone()
                if row is None:
                    continue
                store.conn.execute(
                    "INSERT INTO dream_status_log(run_id, seq, key, old_status, old_status_run, old_status_reason,"
                    " new_status) VALUES (?, ?, ?, ?, ?, ?, 'reverted')",
                    (log_as, seq, key, *row),
                )
                seq += 1
        for key, old, old_run, old_reason in log:
            store.conn.execute(
                "UPDATE dream_candidates SET status = ?, status_run = ?, status_reason = ?,"
                " superseded_by = CASE WHEN ? = 'superseded' THEN superseded_by ELSE NULL END,"
                " contested = CASE WHEN ? = 'superseded' THEN contested ELSE 0 END"
                " WHERE key = ?",
                (old or "staged", old_run, old_reason, old or "staged", old or "staged", key),
            )
        # candidates the run created and decided on in the same run have no log row: back to staged
        fresh = store.conn.execute(
            "UPDATE dream_candidates SET status = 'staged', status_run = NULL, status_reason = NULL"
            " WHERE status_run = ? AND status != 'staged'",
            (run_id,),
        ).rowcount
        store.conn.commit()
    return len(log) + max(fresh, 0)


# ---------------------------------------------------------------------------------------------
# run records


RUN_COLUMNS = (
    "run_id started_at finished_at mode status staged new_candidates signals promoted dropped blocked"
    " memory_bytes elapsed_ms message summary"
).split()


def write_run(store: Any, record: dict[str, Any]) -> None:
    """Insert or replace a run's record (``record`` holds every :data:`RUN_COLUMNS` column)."""
    with store.lock:
        store.conn.execute(
            f"INSERT OR REPLACE INTO dream_runs({', '.join(RUN_COLUMNS)})"
            f" VALUES ({', '.join('?' * len(RUN_COLUMNS))})",
            tuple(record[c] for c in RUN_COLUMNS),
        )
        store.conn.commit()


def history(store: Any, limit: int = 50) -> list[dict[str, Any]]:
    rows = store.query("SELECT * FROM dream_runs ORDER BY started_at DESC, run_id DESC LIMIT ?", (limit,))
    for r in rows:
        r["summary"] = json.loads(r["summary"] or "{}")
    return rows


def run_record(store: Any, run_id: str) -> dict[str, Any] | None:
    """The stored record of run ``run_id`` (its summary as stored, JSON text), None if unknown."""
    rows = store.query("SELECT * FROM dream_runs WHERE run_id = ?", (run_id,))
    return rows[0] if rows else None


def runs_with_status(store: Any, status: str, *, newest_first: bool = False) -> list[dict[str, Any]]:
    order = "run_id DESC" if newest_first else "run_id"
    return store.query(f"SELECT * FROM dream_runs WHERE status = ? ORDER BY {order}", (status,))


def set_run_status(store: Any, run_id: str, status: str, message: str, summary: str | None = None) -> None:
    """A run's status and message (and its summary, JSON text, when given)."""
    with store.lock:
        if summary is None:
            store.conn.execute(
                "UPDATE dream_runs SET status = ?, message = ? WHERE run_id = ?", (status, message, run_id)
            )
        else:
            store.conn.execute(
                "UPDATE dream_runs SET status = ?, message = ?, summary = ? WHERE run_id = ?",
                (status, message, summary, run_id),
            )
        store.conn.commit()


def record_rollback(
    store: Any,
    run_id: str,
    message: str,
    summary: dict[str, Any],
    *,
    undo_record: tuple[str, str, str, str, str] | None = None,
    stands_again: tuple[str, str | None, str] | None = None,
) -> None:
    """In one transaction: the record of a forced rollback's own run (``undo_record``: run id,
    started, finished, message, summary JSON; mode ``rollback``, status ``applied``), the run a
    rolled-back forced rollback had undone standing again (``stands_again``: status, message, run
    id), and run ``run_id`` rolled back."""
    with store.lock:
        if undo_record is not None:
            store.conn.execute(
                "INSERT OR REPLACE INTO dream_runs(run_id, started_at, finished_at, mode, status, message, summary)"
                " VALUES (?, ?, ?, 'rollback', 'applied', ?, ?)",
                undo_record,
            )
        if stands_again is not None:
            store.conn.execute("UPDATE dream_runs SET status = ?, message = ? WHERE run_id = ?", stands_again)
        store.conn.execute(
            "UPDATE dream_runs SET status = 'rolled_back', message = ?, summary = ? WHERE run_id = ?",
            (message, json.dumps(summary), run_id),
        )
        store.conn.commit()


def any_runs(store: Any) -> bool:
    return bool(store.conn.execute("SELECT count(*) FROM dream_runs").fetchone()[0])


def last_good_run_start(store: Any) -> str | None:
    """When the last run that ended ``ok`` or ``nothing`` started (ISO text), None before one."""
    row = store.conn.execute(
        "SELECT max(started_at) FROM dream_runs WHERE status IN ('ok', 'nothing')"
    ).fetchone()
    return row[0] if row and row[0] else None


def safety_totals(store: Any) -> dict[str, int]:
    """What every recorded run redacted or refused (rolled-back runs included: it happened)."""
    row = store.conn.execute(
        "SELECT coalesce(sum(json_extract(summary, '$.safety.secrets_redacted')), 0),"
        " coalesce(sum(json_extract(summary, '$.safety.refused')), 0),"
        " coalesce(sum(json_extract(summary, '$.safety.lines_withheld')), 0)"
        " FROM dream_runs WHERE status NOT IN ('running', 'interrupted') AND json_valid(summary)"
    ).fetchone()
    return {"secrets_redacted": int(row[0]), "refused": int(row[1]), "lines_withheld": int(row[2])}
