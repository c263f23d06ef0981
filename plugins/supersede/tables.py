"""The supersede plugin's tables (a sqlite-utils Migrations set) in the index database.

``supersede_facts`` holds one row per fact the gate has seen (a write candidate, or an existing
fact it was compared with): its bi-temporal interval (``validity_start``/``validity_end``, the
time the fact held in the world) and ``ingestion_time`` (when the gate first saw it; set once,
never updated). A closed interval is never reopened and no row is ever deleted.
``supersede_events`` is the timeline ``lifelong history`` prints."""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

migrations = Migrations("lifelong.supersede")


@migrations()
def m001_facts(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS supersede_facts (
            id TEXT PRIMARY KEY,             -- sha256(path + normalised text)[:16]
            path TEXT NOT NULL,              -- workspace-relative file the fact lives in
            start_line INTEGER,              -- NULL until known (a candidate not yet written)
            end_line INTEGER,
            key TEXT,                        -- a promoted MEMORY.md item's key
            text TEXT NOT NULL,
            text_hash TEXT NOT NULL,         -- sha256 of the normalised text (see ledger.normalise)
            subject TEXT NOT NULL DEFAULT '',  -- ' stem stem ' (padded for LIKE)
            source TEXT NOT NULL DEFAULT '',
            strength INTEGER NOT NULL DEFAULT 2,
            event_time REAL,                 -- when the fact became true (stated date, else note date, else ingestion)
            validity_start REAL,
            validity_end REAL,               -- NULL: still valid
            superseded_by TEXT,              -- a fact id, or 'expired'
            supersedes TEXT NOT NULL DEFAULT '[]',
            contested INTEGER NOT NULL DEFAULT 0,
            review INTEGER NOT NULL DEFAULT 0,
            review_reason TEXT,
            depends_on TEXT NOT NULL DEFAULT '[]',
            ingestion_time REAL NOT NULL
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS supersede_facts_hash ON supersede_facts(text_hash)")
    db.execute("CREATE INDEX IF NOT EXISTS supersede_facts_path ON supersede_facts(path)")
    db.execute("CREATE INDEX IF NOT EXISTS supersede_facts_end ON supersede_facts(validity_end)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS supersede_events (
            id INTEGER PRIMARY KEY,
            ts REAL NOT NULL,
            fact_id TEXT NOT NULL,
            event TEXT NOT NULL,             -- seen | superseded | supersedes | contested | stale | expired | review
            other_id TEXT,
            detail TEXT NOT NULL DEFAULT ''
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS supersede_events_fact ON supersede_events(fact_id)")
