"""The dreaming plugin's tables, as a sqlite-utils Migrations set.

Everything here is derived state (the markdown files and recall events are the truth), but it
carries what consolidation has learned between nights: staged candidates, where each was seen,
the recall events attributed to it, what each run changed (so a rollback can undo it) and the run
history."""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

migrations = Migrations("lifelong.dreaming")


@migrations()
def m001_dreaming_tables(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_candidates (
            key TEXT PRIMARY KEY,          -- sha256 of the normalised text, 12 hex
            text TEXT NOT NULL,            -- the text as last seen live in a daily
            heading TEXT NOT NULL DEFAULT '',
            path TEXT NOT NULL,            -- latest occurrence
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            day TEXT NOT NULL,             -- date of the first occurrence (YYYY-MM-DD)
            first_seen REAL NOT NULL,      -- epoch of the run that staged it
            light_hits INTEGER NOT NULL DEFAULT 0,
            light_last REAL,
            rem_hits INTEGER NOT NULL DEFAULT 0,
            rem_last REAL,
            status TEXT NOT NULL DEFAULT 'staged',  -- staged | promoted | dropped | blocked | evicted
            status_run TEXT,
            status_reason TEXT,
            superseded_by TEXT,            -- key of a later correction (REM)
            last_score REAL,
            components TEXT                -- JSON of the last score components
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS dream_candidates_status ON dream_candidates(status)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_occurrences (
            snippet_key TEXT NOT NULL,     -- key of this exact text (may differ from the candidate: near-duplicate)
            path TEXT NOT NULL,
            key TEXT NOT NULL,             -- the candidate it belongs to
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            day TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (snippet_key, path)
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS dream_occurrences_key ON dream_occurrences(key)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_signals (
            event_id INTEGER NOT NULL,     -- recall_events.id
            key TEXT NOT NULL,
            ts REAL NOT NULL,
            day TEXT NOT NULL,
            query_hash TEXT NOT NULL,
            score REAL NOT NULL,
            source TEXT NOT NULL,
            overlap REAL NOT NULL,         -- weighted query-token overlap that won the attribution
            PRIMARY KEY (event_id, key)
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS dream_signals_key ON dream_signals(key)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_status_log (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            key TEXT NOT NULL,
            old_status TEXT,               -- NULL: the run created the candidate
            old_status_run TEXT,
            old_status_reason TEXT,
            new_status TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_runs (
            run_id TEXT PRIMARY KEY,
            started_at TEXT NOT NULL,      -- ISO, workspace time zone (the run's 'now')
            finished_at TEXT,
            mode TEXT NOT NULL,            -- nightly | backfill
            status TEXT NOT NULL,          -- ok | nothing | failed | rolled_back
            staged INTEGER NOT NULL DEFAULT 0,
            new_candidates INTEGER NOT NULL DEFAULT 0,
            signals INTEGER NOT NULL DEFAULT 0,
            promoted INTEGER NOT NULL DEFAULT 0,
            dropped INTEGER NOT NULL DEFAULT 0,
            blocked INTEGER NOT NULL DEFAULT 0,
            memory_bytes INTEGER,
            elapsed_ms REAL,
            message TEXT,
            summary TEXT                   -- JSON: promoted keys, decisions, compaction, reports
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_meta (
            key TEXT PRIMARY KEY,
            value TEXT
        )""")


@migrations()
def m002_fact_vectors_and_line_maps(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_vectors (
            key TEXT PRIMARY KEY,          -- candidate key (its text's hash)
            model TEXT NOT NULL,           -- provider:model of the embedder
            vec BLOB NOT NULL              -- float32 unit vector
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_line_maps (
            path TEXT NOT NULL,            -- a daily, workspace-relative
            ts REAL NOT NULL,              -- when a sync saw this content
            hashes TEXT NOT NULL,          -- JSON list: 12-hex hash of every line, in order
            PRIMARY KEY (path, ts)
        )""")


@migrations()
def m003_item_hashes(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_items (
            key TEXT PRIMARY KEY,          -- a promoted item's key
            sha TEXT NOT NULL,             -- hash of its text as the run wrote it (memory_file.item_hash)
            run_id TEXT NOT NULL
        )""")


@migrations()
def m004_fact_pairs(db):  # noqa: ANN001 - sqlite-utils passes the Database
    # the last fact grouping's inputs and results, so a night compares only new or changed lines
    # (facts.group_facts_known); a cache: dropping both tables only makes the next night slower
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_fact_views (
            key TEXT PRIMARY KEY,          -- a live candidate when the grouping ran
            fp TEXT NOT NULL               -- facts.view_fingerprint: its text and the names seen in it
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS dream_fact_pairs (
            a TEXT NOT NULL,               -- candidate keys, a < b
            b TEXT NOT NULL,
            strength REAL NOT NULL,        -- facts.pair_strength of a pair that states one fact
            PRIMARY KEY (a, b)
        )""")


@migrations()
def m005_contested(db):  # noqa: ANN001 - sqlite-utils passes the Database
    # REM's correction of a promoted item was no sure update: marked contested, not struck
    db.execute("ALTER TABLE dream_candidates ADD COLUMN contested INTEGER NOT NULL DEFAULT 0")
