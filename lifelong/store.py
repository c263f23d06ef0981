"""The SQLite index: opened through sqlean (a current SQLite, 3.50, with FTS5 and JSON1 on every
machine regardless of the Python build's own library), in WAL mode.

Everything in the store is derived from the markdown files and can be rebuilt with
``lifelong index --force``. Plugins bring their tables as sqlite-utils ``Migrations`` sets
(hook ``register_migrations``); :meth:`Store.migrate` applies all of them.

Vectors are searched in memory by the recall plugin (binary codes, then an exact re-rank);
sqlite-vec is not loaded: ``python -m evals.vec_backends`` measures why.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlean

if TYPE_CHECKING:
    import sqlite_utils
    from sqlite_utils.migrations import Migrations

# 64 MB of page cache per connection (allocated as used): FTS5 ranking reads a docsize row per
# match, and the default 2 MB made a 100k-chunk lexical query ~30% slower
CACHE_PRAGMA = "PRAGMA cache_size = -65536"
# the key of the code whose migrations were last found all applied (see Store.migrated)
MIGRATED_TABLE = "_lifelong_migrated"


def _wal(conn: Any, wait_s: float = 30.0) -> None:
    """Put a file database in WAL mode. Two processes opening a new index at the same moment both
    ask for it; SQLite then answers one of them "database is locked" at once, without waiting
    (the busy timeout does not cover this, to avoid a deadlock), so that one retries."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlean.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Store:
    """One open index database."""

    def __init__(self, path: Path | str):
        self.path = Path(path) if str(path) != ":memory:" else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlean.connect(str(path), check_same_thread=False, timeout=30.0)
        self.conn.execute("PRAGMA busy_timeout = 30000")
        if self.path is not None:
            _wal(self.conn)
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute(CACHE_PRAGMA)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.lock = threading.RLock()
        self._reader: Any = None
        self.reader_lock = threading.Lock()  # one statement at a time on the reader

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """The connection as a sqlite-utils ``Database`` (made on first use: sqlite-utils imports
        numpy when it is installed, which a search over an up-to-date index never needs)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    @property
    def sqlite_version(self) -> str:
        version: str = self.conn.execute("select sqlite_version()").fetchone()[0]
        return version

    def _migrated_key(self, code_key: str) -> str | None:
        """``code_key`` (what decides which migrations exist) with every migration applied."""
        try:
            applied = self.conn.execute(
                "SELECT migration_set, name FROM _sqlite_migrations ORDER BY migration_set, name"
            ).fetchall()
        except sqlean.OperationalError:  # no migration applied yet
            return None
        return hashlib.sha256(repr((code_key, applied)).encode()).hexdigest()

    def migrated(self, code_key: str) -> bool:
        """Whether :meth:`migrate` found nothing pending for the code ``code_key`` names (see
        ``Host.migrations_key``) and no applied migration was undone since: then opening the
        index imports no plugin's migrations, nor sqlite-utils."""
        key = self._migrated_key(code_key) if self.path is not None else None
        if key is None:
            return False
        try:
            row = self.conn.execute(f"SELECT 1 FROM {MIGRATED_TABLE} WHERE key = ?", (key,)).fetchone()
        except sqlean.OperationalError:  # an index no process has marked yet
            return False
        return row is not None

    def mark_migrated(self, code_key: str) -> None:
        """Record that every migration the code ``code_key`` names is applied (after
        :meth:`migrate`). Skipped, not waited for, when another process is writing: the next
        open checks the migrations again."""
        key = self._migrated_key(code_key) if self.path is not None else None
        if key is None:
            return
        with self.lock:
            try:
                self.conn.execute("PRAGMA busy_timeout = 0")
                with self.write() as conn:
                    conn.execute(f"CREATE TABLE IF NOT EXISTS {MIGRATED_TABLE} (key TEXT PRIMARY KEY)")
                    conn.execute(f"DELETE FROM {MIGRATED_TABLE}")
                    conn.execute(f"INSERT INTO {MIGRATED_TABLE} (key) VALUES (?)", (key,))
            except sqlean.OperationalError:  # busy or read-only: nothing is recorded
                pass
            finally:
                self.conn.execute("PRAGMA busy_timeout = 30000")

    def migrate(self, migration_sets: list[Migrations]) -> None:
        """Apply every pending migration. Processes opening a new or older index at the same
        moment take turns on a lock file beside it: sqlite-utils reads what is pending before
        its own transaction, so two of them would otherwise both apply the same migration."""
        if not any(m.pending(self.db) for m in migration_sets):
            return
        if self.path is None:
            for migrations in migration_sets:
                migrations.apply(self.db)
            return
        import filelock

        with filelock.FileLock(str(self.path) + ".migrate.lock", timeout=600):
            for migrations in migration_sets:
                migrations.apply(self.db)  # re-reads what is pending, now under the lock

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction taken at once (``BEGIN IMMEDIATE``) under the store's lock: the
        block's statements are committed together at its end, or rolled back on any error."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.conn.execute(sql, params)

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]

    def table_counts(self) -> dict[str, int]:
        out = {}
        for name in self.db.table_names():
            if name.startswith("_") or "_fts_" in name or name.endswith(("_chunks", "_rowids", "_info")):
                continue
            try:
                out[name] = self.conn.execute(f"select count(*) from [{name}]").fetchone()[0]
            except Exception:  # virtual tables of an extension that is not loaded
                continue
        return out

    def reader(self) -> Any:
        """A second connection to the same file, for reads that run beside this one in another
        thread (WAL lets readers run concurrently; it sees committed data only). None for an
        in-memory store. Use it under ``reader_lock``."""
        if self.path is None:
            return None
        with self.lock:
            if self._reader is None:
                conn = sqlean.connect(str(self.path), check_same_thread=False, timeout=30.0)
                conn.execute("PRAGMA busy_timeout = 30000")
                conn.execute(CACHE_PRAGMA)
                self._reader = conn
            return self._reader

    def close(self) -> None:
        with self.lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        self.conn.close()
