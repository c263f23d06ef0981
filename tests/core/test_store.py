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
        store = None
        try:
            store = Store(path)
            start.wait(timeout=60)
            store.migrate([_slow_set(calls)])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            start.abort()  # the other opener stops waiting for this one
            errors.append(exc)
        finally:
            if store is not None:
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


def test_openers_of_a_new_index_at_the_same_moment_all_open_it(tmp_path: Path) -> None:
    # each asks for WAL mode; SQLite answered one of four "database is locked" at once in about
    # one round in eight (no busy wait for that request): the gate and a search starting together
    # on a fresh workspace, and one of them crashed
    failed: list[BaseException] = []
    for round_ in range(50):
        path = tmp_path / f"index-{round_}.db"
        start = threading.Barrier(4)

        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            try:
                start.wait(timeout=60)
                Store(path).close()
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                failed.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failed == []


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


PLUGIN_SOURCE = """
from lifelong.hookspecs import hookimpl
from sqlite_utils.migrations import Migrations

PLUGIN_MANIFEST = {{
    "id": "tmpmig",
    "description": "a plugin with migrations, for the test",
    "hooks": ["register_migrations"],
    "config_schema": {{"type": "object", "properties": {{}}}},
}}
CALLS = []
migrations = Migrations("tmpmig")


@migrations()
def m001_a(db):
    db.execute("create table tmp_a (x integer)")
{more}

@hookimpl
def register_migrations(register):
    CALLS.append(1)
    register(migrations)
"""
M002 = """

@migrations()
def m002_b(db):
    db.execute("create table tmp_b (x integer)")
"""


def _plugin(path: Path, more: str, n: int):  # noqa: ANN202 - a module
    import importlib.util
    import os

    path.write_text(PLUGIN_SOURCE.format(more=more), "utf-8")
    os.utime(path, ns=(n * 10**9, n * 10**9))  # a new time for each version of the file
    spec = importlib.util.spec_from_file_location(f"tmpmig_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tables(host) -> set[str]:  # noqa: ANN001
    return {r[0] for r in host.store.conn.execute("select name from sqlite_master where type = 'table'")}


def test_an_index_marked_up_to_date_opens_without_importing_the_migrations(
    tmp_path: Path, make_workspace
) -> None:  # noqa: ANN001
    """The host checks the migrations once, marks the index with what decides them (the plugin
    files), and the next host opening it does not call register_migrations; a changed plugin
    file, or an applied migration undone, makes the next open check (and apply) them again."""
    from lifelong.host import Host

    ws = make_workspace()
    path = tmp_path / "tmpmig.py"

    def open_host(module):  # noqa: ANN001, ANN202
        host = Host(ws, builtins=[], entry_points=False, extra_plugins=[module])
        tables = _tables(host)
        host.close()
        return tables

    v1 = _plugin(path, "", 1)
    assert "tmp_a" in open_host(v1) and v1.CALLS == [1]
    assert "tmp_a" in open_host(v1) and v1.CALLS == [1]  # marked: not asked again
    v2 = _plugin(path, M002, 2)  # the plugin's file changed: a new migration
    assert "tmp_b" in open_host(v2) and v2.CALLS == [1]
    assert open_host(v2) and v2.CALLS == [1]
    store = Store(ws.index_path)
    store.conn.execute("drop table tmp_b")
    store.conn.execute("delete from _sqlite_migrations where name = 'm002_b'")
    store.conn.commit()
    store.close()
    assert "tmp_b" in open_host(v2) and v2.CALLS == [1, 1]  # undone: checked and applied again
