"""The concept index's tables (derived: rebuilt from the recall index by `lifelong concepts
rebuild` or the nightly run)."""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

from .extract import compact_key

migrations = Migrations("lifelong.concepts")


@migrations()
def m001_concept_tables(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS concept_occurrences (
            key TEXT NOT NULL,             -- normalised term (see extract.normalise_concept)
            chunk_id INTEGER NOT NULL,     -- recall's chunks.id
            path TEXT NOT NULL,
            day TEXT NOT NULL,             -- YYYY-MM-DD of the chunk's source date
            count INTEGER NOT NULL,        -- how often the chunk names it (heading counts double)
            display TEXT NOT NULL,
            script TEXT NOT NULL,
            kind TEXT NOT NULL,            -- term | name | heading
            PRIMARY KEY (key, chunk_id)
        ) WITHOUT ROWID""")
    db.execute("CREATE INDEX IF NOT EXISTS concept_occurrences_path ON concept_occurrences(path)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS concepts (
            key TEXT PRIMARY KEY,
            display TEXT NOT NULL,
            script TEXT NOT NULL,
            kind TEXT NOT NULL,            -- term | name | heading | wiki
            frequency INTEGER NOT NULL,
            days INTEGER NOT NULL,
            doc_freq INTEGER NOT NULL,
            last_seen TEXT NOT NULL,       -- YYYY-MM-DD
            importance REAL NOT NULL
        ) WITHOUT ROWID""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS concept_aliases (
            alias TEXT PRIMARY KEY,
            key TEXT NOT NULL
        ) WITHOUT ROWID""")


@migrations()
def m002_lean_occurrences(db):  # noqa: ANN001
    """Occurrences shrink to (key, chunk_id, day, count): the display form, script and kind move to
    one row per concept (concept_forms), the path to one row per chunk (concept_chunks, which also
    lists the chunk's keys so a changed file's rows are deleted by primary key). About a third of
    the size at 1M chunks. The tables are derived: the next sync or `concepts rebuild` refills them."""
    db.execute("DROP TABLE IF EXISTS concept_occurrences")
    db.execute("""
        CREATE TABLE concept_occurrences (
            key TEXT NOT NULL,             -- normalised term (see extract.normalise_concept)
            chunk_id INTEGER NOT NULL,     -- recall's chunks.id
            day INTEGER NOT NULL,          -- proleptic ordinal of the chunk's source date
            count INTEGER NOT NULL,        -- how often the chunk names it (heading counts double)
            PRIMARY KEY (key, chunk_id)
        ) WITHOUT ROWID""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS concept_chunks (
            chunk_id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            keys TEXT NOT NULL             -- JSON list of the keys this chunk names
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS concept_chunks_path ON concept_chunks(path)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS concept_forms (
            key TEXT PRIMARY KEY,
            display TEXT NOT NULL,         -- as first written
            script TEXT NOT NULL,
            kind INTEGER NOT NULL          -- 0 term, 1 name, 2 heading (the strongest seen)
        ) WITHOUT ROWID""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS concept_meta (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID""")
    db.execute("DELETE FROM concepts")


@migrations()
def m003_compact_keys(db):  # noqa: ANN001
    """Each concept's key without case, spaces or separators (``err_lock_77``: ``errlock77``),
    indexed: a query that is exactly a known identifier, however it is typed ("ERR LOCK 77"),
    finds it with one probe (see ``ConceptIndex.exact``)."""
    db.execute("ALTER TABLE concepts ADD COLUMN compact TEXT NOT NULL DEFAULT ''")
    keys = [r[0] for r in db.execute("SELECT key FROM concepts").fetchall()]
    db.conn.executemany("UPDATE concepts SET compact = ? WHERE key = ?", [(compact_key(k), k) for k in keys])
    db.execute("CREATE INDEX IF NOT EXISTS concepts_compact ON concepts(compact)")
