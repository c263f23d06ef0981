"""The recall index tables, as a sqlite-utils Migrations set.

The vec0 table is not here: its dimension depends on the embedding model, so the index creates
(and re-creates) it when it knows the model (see ``vectors.py``)."""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

migrations = Migrations("lifelong.recall")


def migration_names() -> list[str]:
    """The names of every migration in the set, in order (what an index built today has applied)."""
    return [m.name for m in migrations._migrations]  # noqa: SLF001 - sqlite-utils keeps no public list


@migrations()
def m001_core_tables(db):  # noqa: ANN001 - sqlite-utils passes the Database
    db.execute("""
        CREATE TABLE IF NOT EXISTS files (
            path TEXT PRIMARY KEY,
            corpus TEXT NOT NULL,
            sha256 TEXT,
            mtime REAL NOT NULL,
            size INTEGER NOT NULL,
            status TEXT NOT NULL DEFAULT 'indexed',   -- indexed | skipped
            error TEXT,
            indexed_at REAL
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS chunks (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL,
            corpus TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            hash TEXT NOT NULL,            -- sha256 of text
            embed_hash TEXT NOT NULL,      -- sha256 of the embedded text (heading + text)
            source_date REAL,              -- epoch seconds: daily date, else file mtime
            evergreen INTEGER NOT NULL DEFAULT 0,
            generated INTEGER NOT NULL DEFAULT 0,   -- inside a lifelong-managed region
            validity_start REAL,
            validity_end REAL,
            ingestion_time REAL NOT NULL,
            superseded_by TEXT
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path)")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_validity_end ON chunks(validity_end)")
    db.execute("CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash)")
    db.execute("""
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
            text, heading, tokenize = 'unicode61 remove_diacritics 2'
        )""")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, row)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS chunk_vectors (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            embedding BLOB NOT NULL
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS chunk_codes (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            code BLOB NOT NULL             -- sign bits of (embedding - centroid), see vectors.py
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS embedding_cache (
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            embedding BLOB NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (provider, model, hash)
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS chunk_validity (
            path TEXT NOT NULL,
            hash TEXT NOT NULL,
            validity_start REAL,
            validity_end REAL,
            superseded_by TEXT,
            PRIMARY KEY (path, hash)
        )""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS recall_events (
            id INTEGER PRIMARY KEY,
            ts REAL NOT NULL,
            day TEXT NOT NULL,             -- YYYY-MM-DD in the workspace time zone
            query_hash TEXT NOT NULL,
            query TEXT NOT NULL,
            chunk_key TEXT NOT NULL,       -- path:start:end
            claim_hash TEXT NOT NULL,      -- sha256 of the normalised snippet
            path TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            corpus TEXT NOT NULL,
            score REAL NOT NULL,           -- the hit's relevance before temporal decay
            source TEXT NOT NULL           -- tool | gate | cli | eval
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS recall_events_day ON recall_events(day)")
    db.execute("CREATE INDEX IF NOT EXISTS recall_events_path ON recall_events(path)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS index_meta (
            key TEXT PRIMARY KEY,
            value TEXT
        )""")


@migrations()
def m002_fts_rank(db):  # noqa: ANN001
    """Make FTS5's rank column bm25 with the heading column at half weight, so searches can use
    FTS5's fast ORDER BY rank LIMIT path."""
    db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5)')")


@migrations()
def m003_code_log(db):  # noqa: ANN001
    """A log of chunk codes added and removed by each sync, so a searching process patches the
    code matrix it holds in memory instead of reloading every code (see ``vectors.py``)."""
    db.execute("""
        CREATE TABLE IF NOT EXISTS code_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            chunk_id INTEGER NOT NULL,
            op INTEGER NOT NULL            -- 1: code added or replaced, 0: removed
        )""")


@migrations()
def m004_units(db):  # noqa: ANN001
    """Retrieval units (the blocks of each chunk, see ``chunking.retrieval_units``) and their
    vectors. Every file's checksum is forgotten, so the next sync re-chunks it (chunk
    embeddings come from the embedding cache; the units' are new)."""
    db.execute("""
        CREATE TABLE IF NOT EXISTS units (
            id INTEGER PRIMARY KEY,
            chunk_id INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',   -- the unit's own heading path
            text TEXT NOT NULL,
            embed_hash TEXT NOT NULL       -- sha256 of the embedded text (heading + text)
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS units_chunk ON units(chunk_id)")
    db.execute("""
        CREATE TABLE IF NOT EXISTS unit_vectors (
            unit_id INTEGER PRIMARY KEY,
            embedding BLOB NOT NULL
        )""")
    db.execute("UPDATE files SET sha256 = NULL")


@migrations()
def m005_unit_heading(db):  # noqa: ANN001
    """Indexes that got an early form of m004 (without the units' own heading) gain the column."""
    if "heading" not in {c.name for c in db["units"].columns}:
        db.execute("ALTER TABLE units ADD COLUMN heading TEXT NOT NULL DEFAULT ''")


@migrations()
def m006_unit_terms(db):  # noqa: ANN001
    """Each unit's length and stems, stored so a search does not tokenise its candidates
    (``scoring.encode_terms``), filled here for the units an index already holds."""
    from .scoring import encode_terms

    if "terms" not in {c.name for c in db["units"].columns}:
        db.execute("ALTER TABLE units ADD COLUMN terms TEXT")
    rows = db.execute("SELECT id, text FROM units WHERE terms IS NULL").fetchall()
    for i in range(0, len(rows), 5000):
        db.conn.executemany(
            "UPDATE units SET terms = ? WHERE id = ?",
            [(encode_terms(t), uid) for uid, t in rows[i : i + 5000]],
        )


def fts_tokenizer() -> str:
    """unicode61 without diacritics, keeping the marks inside words (Thai, Devanagari... vowel
    signs) as word characters: unicode61 alone cut "किताब" into "क", "त", "ब"."""
    from lifelong.text import word_marks

    return f"unicode61 remove_diacritics 2 tokenchars '{word_marks()}'"


@migrations()
def m007_fts_text(db):  # noqa: ANN001
    """The full-text table holds ``lifelong.text.fts_text`` of each chunk (NFKC, runs of
    Chinese, Japanese or Thai as character bigrams) and keeps marks inside words; it is made
    again and every file's checksum forgotten, so the next sync re-chunks and refills it
    (embeddings come from the cache)."""
    db.execute("DROP TABLE IF EXISTS chunks_vocab")
    db.execute("DROP TABLE IF EXISTS chunks_fts")
    db.execute(f'CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading, tokenize = "{fts_tokenizer()}")')
    db.execute("CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row)")
    db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5)')")
    db.execute("UPDATE files SET sha256 = NULL, mtime = -1")  # -1: the cheap check sees a change


@migrations()
def m008_sentence_vectors(db):  # noqa: ANN001
    """Each unit's sentence vectors (``chunking.sentence_texts``), concatenated float16 beside
    its own vector: NULL until embedded, empty for a unit of one sentence. The next full sync
    (``lifelong index``, the watcher) embeds them for the units an index already holds."""
    if "sentences" not in {c.name for c in db["unit_vectors"].columns}:
        db.execute("ALTER TABLE unit_vectors ADD COLUMN sentences BLOB")


@migrations()
def m009_files_version(db):  # noqa: ANN001
    """A counter that every change to the files table moves (triggers), so the index keeps the
    table's stats in memory between syncs and reads them again only when someone else changed
    it (``RecallIndex._indexed_stats``)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS files_version (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)"
    )
    db.execute("INSERT OR IGNORE INTO files_version(id, n) VALUES (1, 0)")
    for event in ("INSERT", "UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER IF NOT EXISTS files_version_{event.lower()} AFTER {event} ON files "
            "BEGIN UPDATE files_version SET n = n + 1 WHERE id = 1; END"
        )


@migrations()
def m010_statement_lines(db):  # noqa: ANN001
    """A paragraph written a statement per line is now a unit per line
    (``lifelong.markdown.line_groups``): every file's checksum is forgotten, so the next sync
    re-chunks it (the embeddings of unchanged text come from the cache)."""
    db.execute("UPDATE files SET sha256 = NULL")


@migrations()
def m011_time_lines_and_table_rows(db):  # noqa: ANN001
    """A line opening with a time of day ("09:40 call w/ Sofia") now starts a unit of its own
    (``lifelong.markdown.line_groups``), and a table is a unit per body row: re-chunk every file
    once, as ``m010`` did."""
    db.execute("UPDATE files SET sha256 = NULL")


@migrations()
def m012_comments_left_out(db):  # noqa: ANN001
    """HTML comments (the key and sources after each promoted MEMORY.md item) are no longer
    indexed, embedded or compared (``lifelong.markdown.strip_comments``): re-chunk the files
    whose chunks hold one."""
    db.execute(
        "UPDATE files SET sha256 = NULL WHERE path IN (SELECT DISTINCT path FROM chunks WHERE instr(text, '<!--') > 0)"
    )


@migrations()
def m013_abbreviations(db):  # noqa: ANN001
    """An abbreviation of ``lifelong.text.ABBREVIATIONS`` ("Dr.", "appt", "bday") is indexed and
    matched as its word ("doctor"): re-chunk the files whose chunks hold one (their full-text rows
    and units' stems change; embeddings come from the cache)."""
    db.execute(
        "UPDATE files SET sha256 = NULL WHERE path IN (SELECT DISTINCT c.path FROM chunks_fts f"
        " JOIN chunks c ON c.id = f.rowid WHERE chunks_fts MATCH 'dr OR appt OR appts OR bday')"
    )


@migrations()
def m014_day_titles(db):  # noqa: ANN001
    """A paragraph opening with a day's title ("Tue 8 Sep — lab log") no longer makes the title a
    unit of its own: it is the context of the units under it (``lifelong.markdown.title_line``).
    Re-chunk every file once, as ``m010`` did (embeddings of unchanged text come from the cache)."""
    db.execute("UPDATE files SET sha256 = NULL")


@migrations()
def m015_lexical_only_chunks(db):  # noqa: ANN001
    """A chunk may be indexed for its words only (``lexical_only``): past a file's embedding budget
    (``embed_max_chunks_per_file``) or inside one enormous line (``embed_max_line_chars``), so one
    pasted blob does not hold up every other file's vectors for half an hour. Re-chunk the files
    with a line or a chunk count over the defaults (the rest keep their rows)."""
    db.execute("ALTER TABLE chunks ADD COLUMN lexical_only INTEGER NOT NULL DEFAULT 0")
    db.execute(
        "UPDATE files SET sha256 = NULL WHERE path IN (SELECT path FROM chunks GROUP BY path"
        " HAVING count(*) > 2000 OR max(length(text)) > 20000)"
    )


@migrations()
def m016_identifier_parts(db):  # noqa: ANN001
    """A word joined by ``_ - . / :`` ("err_lock_77", "safe-cron-merge") counts whole and by its
    parts in a unit's terms (``scoring.term_counts``), as the FTS5 tokenizer splits it: re-encode
    the units holding one."""
    from .scoring import encode_terms

    rows = db.execute(
        "SELECT id, text FROM units WHERE text GLOB '*[A-Za-z0-9][-_./:][A-Za-z0-9]*'"
    ).fetchall()
    for i in range(0, len(rows), 5000):
        db.conn.executemany(
            "UPDATE units SET terms = ? WHERE id = ?",
            [(encode_terms(t), uid) for uid, t in rows[i : i + 5000]],
        )


@migrations()
def m017_chat_stamps(db):  # noqa: ANN001
    """A line opening with a chat export's message stamp ("[14/03/27 21:04] Mum: …") now starts
    a unit of its own (``lifelong.markdown.line_groups``): re-chunk the files with such a line."""
    db.execute(
        "UPDATE files SET sha256 = NULL WHERE path IN (SELECT DISTINCT path FROM chunks WHERE "
        "text GLOB '*[0-9][./-][0-9]*[./-][0-9][0-9]*[0-9]:[0-5][0-9]*')"
    )


@migrations()
def m018_day_titles_in_any_language(db):  # noqa: ANN001
    """A day's title is read in every language babel's CLDR data names weekdays and months in,
    in digits of any script and order ("5 Şubat Pzt", "4月16日(月) 晴れ", "pon. 7.06"), not in
    English alone (``lifelong.markdown.title_line``): re-chunk every file once, as ``m014`` did
    (embeddings of unchanged text come from the cache)."""
    db.execute("UPDATE files SET sha256 = NULL")
