"""Recall's index as other plugins use it (``ctx.recall``, hook ``provide_recall_store``): real
workspaces, a real SQLite index, the real host. And the rule behind it: no plugin but recall
names one of recall's tables."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import lifelong_plugins
import pytest

from lifelong import clock
from lifelong.contracts import ChunkFilter, RecallStore
from lifelong.errors import InputError

NOTES = {
    "MEMORY.md": "# Memory\n\n- I live in Lisbon.\n",
    "memory/2026-03-02.md": "# Monday\n\n- The deploy of tidewater failed with ERR_LOCK_77.\n",
    "memory/2026-03-09.md": "# Monday\n\n- Tidewater deploys again after the lock fix.\n",
}


def _host(make_host):  # noqa: ANN001, ANN202
    host = make_host(NOTES, {"embedding": {"provider": "none"}})
    clock.set_now(dt.datetime(2026, 3, 10, 12, tzinfo=dt.UTC))
    host.call_tool("memory_index", {})
    return host


def test_recall_provides_its_store_and_nobody_else_does(make_host) -> None:
    host = _host(make_host)
    recall = host.ctx.recall
    methods = [m for m in vars(RecallStore) if not m.startswith("_")]
    assert len(methods) >= 9 and all(callable(getattr(recall, m)) for m in methods)
    assert host.implementers("provide_recall_store") == ["recall"]
    assert host.ctx.recall is recall  # asked once per host
    without = make_host(NOTES, {"embedding": {"provider": "none"}, "plugins": {"recall": {"enabled": False}}})
    assert without.ctx.recall is None


def test_reads_chunks_units_and_words(make_host) -> None:
    recall = _host(make_host).ctx.recall
    assert recall.chunk_count() == len(recall.chunks()) >= 3
    [chunk] = recall.chunks(paths=["memory/2026-03-02.md"])
    assert "ERR_LOCK_77" in chunk.text and chunk.corpus == "memory" and len(chunk.hash) == 64
    assert chunk.source_date is not None and chunk.validity_end is None
    assert recall.chunks(ids=[chunk.id]) == [chunk]
    assert recall.chunk_at(chunk.path, chunk.end_line, chunk.end_line) == chunk.id
    assert recall.chunk_at(chunk.path, 900, 901) is None
    units = recall.units([chunk.id])
    assert any("ERR_LOCK_77" in u.text for u in units[chunk.id])
    assert recall.chunks(where=ChunkFilter(corpus="wiki")) == []
    found = recall.keyword_ids('"tidewater"', 10)
    assert set(found) == {c.id for c in recall.chunks() if "idewater" in c.text}
    assert recall.doc_freqs(["tidewater", "nowhere"]) == {"tidewater": 2}
    with pytest.raises(InputError, match="full-text query"):
        recall.keyword_ids('"unbalanced', 5)


def test_close_chunk_survives_a_reindex(make_host) -> None:
    host = _host(make_host)
    recall = host.ctx.recall
    [chunk] = recall.chunks(paths=["memory/2026-03-02.md"], open_only=True)
    end = dt.datetime(2026, 3, 9, tzinfo=dt.UTC).timestamp()
    with host.store.lock:
        assert recall.close_chunk(chunk, end, "fact-new") is True
        assert recall.close_chunk(chunk, end + 1, "other") is False  # closed already
        host.store.conn.commit()
    assert recall.chunks(paths=[chunk.path], open_only=True) == []
    at_8th = dt.datetime(2026, 3, 8, tzinfo=dt.UTC).timestamp()
    assert [c.id for c in recall.chunks(where=ChunkFilter("valid-at", at_8th))].count(chunk.id) == 1
    assert chunk.id not in [c.id for c in recall.chunks(where=ChunkFilter("current", end + 10))]
    host.call_tool("memory_index", {"force": True})
    [again] = recall.chunks(paths=[chunk.path])
    assert (again.validity_end, again.superseded_by) == (end, "fact-new")


def test_events_and_decay(make_host) -> None:
    host = _host(make_host)
    recall = host.ctx.recall
    host.call_tool("memory_search", {"query": "tidewater deploy"})
    events = recall.events()
    assert events and all(e.query == "tidewater deploy" for e in events)
    assert recall.events(ids=[events[0].id]) == [events[0]]
    assert recall.events(path_prefix="memory/") == [e for e in events if e.path.startswith("memory/")]
    assert recall.events(after=events[-1].ts) == []
    cfg = host.plugin_config("recall")
    assert recall.decay(None) == 1.0
    assert recall.decay(cfg["half_life_days"]) == pytest.approx(
        cfg["decay_floor"] + (1 - cfg["decay_floor"]) / 2
    )


# the tables recall's migrations create: every CREATE TABLE in its sources
def _recall_tables() -> set[str]:
    root = Path(lifelong_plugins.__file__).parent / "recall"
    found: set[str] = set()
    for path in root.rglob("*.py"):
        found |= set(
            re.findall(r"CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(\w+)", path.read_text("utf-8"))
        )
    return found


def _scanner() -> re.Pattern[str]:
    """A recall table named where SQL names a table (FROM, JOIN, INTO, UPDATE, TABLE), or as a
    quoted name (sqlite_master lookups, has_table checks, ``"x" in tables``)."""
    tables = sorted(_recall_tables(), key=len, reverse=True)
    names = "|".join(tables)
    quoted = "|".join(t for t in tables if t != "files")  # r["files"]: many a plugin's own key
    return re.compile(
        rf"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+\[?({names})\b|[\"'`]({quoted})[\"'`]", re.IGNORECASE
    )


def test_no_plugin_but_recall_names_a_recall_table() -> None:
    assert {"chunks", "chunks_fts", "chunk_validity", "units", "recall_events", "files"} <= _recall_tables()
    sql = _scanner()
    root = Path(lifelong_plugins.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "recall":
            continue
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if sql.search(line):
                offenders.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert offenders == [], "use ctx.recall (lifelong.contracts.RecallStore) instead:\n" + "\n".join(
        offenders
    )


def test_the_scan_catches_a_recall_table() -> None:
    """The rule above would fail on the SQL the plugins ran before they used ctx.recall."""
    sql = _scanner()
    assert sql.search('"SELECT id FROM chunks WHERE path = ?"')
    assert sql.search("LEFT JOIN recall_events e ON e.id = s.event_id")
    assert sql.search('has_table(conn, "chunks_fts")')
    assert sql.search("SELECT 1 FROM sqlite_master WHERE name = 'units'")
    assert not sql.search("INSERT INTO concept_meta(name, value) VALUES ('built', ?)")
