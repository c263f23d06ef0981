"""Helpers for the dreaming tests: real hosts (recall + dreaming), real files, real SQLite.

Recall events are produced by real ``memory_search`` calls, or — where a test needs exact control
over how often and by which queries a line was recalled — inserted as the recall plugin inserts
them (the ``recall_events`` table is the contract between the two plugins)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from lifelong import clock
from lifelong.host import Host

BERLIN = ZoneInfo("Europe/Berlin")
PLUGINS = ("embeddings", "recall", "dreaming")


def at(day: str, hour: int = 3, minute: int = 0) -> dt.datetime:
    d = dt.date.fromisoformat(day)
    return dt.datetime(d.year, d.month, d.day, hour, minute, tzinfo=BERLIN)


def record_event(
    host: Host,
    path: str,
    start: int,
    end: int,
    query: str,
    when: dt.datetime,
    score: float = 0.7,
    source: str = "tool",
) -> None:
    """One recall event row, exactly as the recall plugin writes it."""
    norm = " ".join(query.lower().split())
    qhash = hashlib.sha256(norm.encode()).hexdigest()[:32]
    host.store.conn.execute(
        "INSERT INTO recall_events(ts, day, query_hash, query, chunk_key, claim_hash, path, start_line, end_line,"
        " corpus, score, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'memory', ?, ?)",
        (
            when.timestamp(),
            when.astimezone(BERLIN).date().isoformat(),
            qhash,
            query,
            f"{path}:{start}:{end}",
            "x" * 32,
            path,
            start,
            end,
            score,
            source,
        ),
    )
    host.store.conn.commit()


def search(host: Host, query: str, when: dt.datetime, **kw: Any) -> dict[str, Any]:
    with clock.pinned(when):
        result = host.ctx.call_tool("memory_search", query=query, source=kw.pop("source", "tool"), **kw)
    assert "error" not in result, result
    return result


def dream(host: Host, when: dt.datetime, **kw: Any) -> Any:
    from lifelong_plugins.dreaming.run import run_dream

    with clock.pinned(when):
        return run_dream(host, **kw)


def snapshot(root: Path, *, skip_index: bool = True) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            rel = path.relative_to(root).as_posix()
            if skip_index and (
                rel.startswith(".lifelong/index.sqlite") or rel.startswith(".lifelong/locks/")
            ):
                continue
            out[rel] = path.read_bytes()
    return out


@pytest.fixture
def dream_host(make_host: Callable[..., Host]) -> Iterator[Callable[..., Host]]:
    def make(files: dict[str, str] | None = None, config: dict[str, Any] | None = None, **kw: Any) -> Host:
        cfg = {"embedding": {"provider": "none"}}
        cfg.update(config or {})
        kw.setdefault("builtins", PLUGINS)
        kw.setdefault("entry_points", False)
        return make_host(files or {}, cfg, **kw)

    yield make
