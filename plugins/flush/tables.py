"""The flush plugin's tables: one record per session (what was flushed, to run exactly once per
compaction cycle), the hashes of captured messages, and a log of flushes."""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

migrations = Migrations("lifelong.flush")


@migrations()
def m001_flush_tables(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS flush_sessions (
            session_id TEXT PRIMARY KEY,
            compaction_count INTEGER NOT NULL,   -- the session's count when the flush ran
            total_tokens INTEGER,                -- the token total it reported then
            flushed_at REAL NOT NULL
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS flush_captured (
            hash TEXT PRIMARY KEY,               -- content hash of a captured or cached message
            path TEXT NOT NULL,                  -- the captured note, or cache:<file> for the tier
            session_id TEXT NOT NULL,
            captured_at REAL NOT NULL
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS flush_log (
            run_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            at REAL NOT NULL,
            compaction_count INTEGER NOT NULL,
            path TEXT NOT NULL,                  -- normal | forced | overflow
            facts INTEGER NOT NULL,
            captured INTEGER NOT NULL,
            cached INTEGER NOT NULL,
            secrets_redacted INTEGER NOT NULL,
            pointer TEXT
        )""")
