"""The index store: migrations applied by processes that open a new index at the same moment."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sqlite_utils.migrations import Migrations

from lifelong.store import Store


def _slow_set(calls: list[str]) -> Migrations:
    migrations = Migrations("test_store")

    @migrations()
    def m001_table(db) -> None:
        calls.append("m001")
        time.sleep(0.3)  # wide enough that a second opener reads "pending" before this commits
        db.execute("create table t (x integer)")

    return migrations


def test_two_openers_of_a_new_index_apply_each_migration_once(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    calls: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def open_and_migrate() -> None:
        store = Store(path)
        try:
            start.wait()
            store.migrate([_slow_set(calls)])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=open_and_migrate) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert calls == ["m001"]
    store = Store(path)
    rows = store.query("select name from _sqlite_migrations where migration_set = 'test_store'")
    store.close()
    assert rows == [{"name": "m001_table"}]


def test_an_up_to_date_index_takes_no_lock(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    store = Store(path)
    store.migrate([_slow_set([])])
    store.close()
    lock = Path(str(path) + ".migrate.lock")
    lock.unlink(missing_ok=True)
    store = Store(path)
    store.migrate([_slow_set([])])
    store.close()
    assert not lock.exists()
