"""The recall index as other plugins use it: :class:`lifelong.contracts.RecallStore`, provided
through the hook ``provide_recall_store`` and reached as ``ctx.recall``. This module is the only
place outside recall's own code that its tables' columns are read or written for them: another
plugin never names recall's tables, so their schema can change here without breaking it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lifelong.contracts import ChunkFilter, ChunkRecord, RecallEvent, UnitRecord
from lifelong.decay import decay_factor
from lifelong.errors import InputError
from lifelong.privacy import corpus_predicate

from .settings import PLUGIN

_CHUNK_COLUMNS = (
    "c.id, c.path, c.start_line, c.end_line, c.text, c.heading, c.corpus, c.hash, c.source_date,"
    " c.evergreen, c.generated, c.validity_start, c.validity_end, c.superseded_by"
)


def _chunk(row: Sequence[Any]) -> ChunkRecord:
    return ChunkRecord(
        id=row[0],
        path=row[1],
        start_line=row[2],
        end_line=row[3],
        text=row[4],
        heading=row[5] or "",
        corpus=row[6],
        hash=row[7],
        source_date=row[8],
        evergreen=bool(row[9]),
        generated=bool(row[10]),
        validity_start=row[11],
        validity_end=row[12],
        superseded_by=row[13],
    )


def filter_sql(where: ChunkFilter) -> tuple[str, list[Any]]:
    """SQL over ``chunks c`` for a :class:`ChunkFilter` (validity, then corpus)."""
    parts: list[str] = []
    params: list[Any] = []
    if where.mode == "current" and where.at is not None:
        parts.append("(c.validity_end IS NULL OR c.validity_end > ?)")
        params.append(where.at)
    elif where.mode == "valid-at" and where.at is not None:
        parts.append(
            "(c.validity_start IS NULL OR c.validity_start <= ?) AND (c.validity_end IS NULL OR c.validity_end > ?)"
        )
        params += [where.at, where.at]
    if where.corpus is not None:
        cwhere, cparams = corpus_predicate(where.corpus, where.scope)
        parts.append(cwhere)
        params += cparams
    return " AND ".join(parts) or "1", params


class RecallTables:
    """:class:`lifelong.contracts.RecallStore` over the recall tables of ``ctx.store`` (the same
    connection as the caller's, so a write joins the caller's transaction)."""

    def __init__(self, ctx: Any):
        self.ctx = ctx

    @property
    def conn(self) -> Any:
        return self.ctx.store.conn

    def chunk_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def chunks(
        self,
        *,
        ids: Sequence[int] | None = None,
        paths: Sequence[str] | None = None,
        where: ChunkFilter | None = None,
        open_only: bool = False,
        include_generated: bool = True,
    ) -> list[ChunkRecord]:
        parts: list[str] = []
        params: list[Any] = []
        if ids is not None:
            parts.append("c.id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps([int(i) for i in ids]))
        if paths is not None:
            parts.append("c.path IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(paths)))
        if not include_generated:
            parts.append("c.generated = 0")
        if open_only:
            parts.append("c.validity_end IS NULL")
        if where is not None:
            sql, extra = filter_sql(where)
            parts.append(sql)
            params += extra
        sql = f"SELECT {_CHUNK_COLUMNS} FROM chunks c WHERE {' AND '.join(parts) or '1'}"
        return [_chunk(r) for r in self.conn.execute(sql, params)]

    def chunk_at(self, path: str, start_line: int, end_line: int) -> int | None:
        row = self.conn.execute(
            "SELECT id FROM chunks WHERE path = ? AND start_line <= ? AND end_line >= ?"
            " ORDER BY start_line DESC LIMIT 1",
            (path, start_line, end_line),
        ).fetchone()
        return int(row[0]) if row else None

    def units(self, chunk_ids: Sequence[int]) -> dict[int, list[UnitRecord]]:
        out: dict[int, list[UnitRecord]] = {}
        for chunk_id, start, end, heading, text in self.conn.execute(
            "SELECT chunk_id, start_line, end_line, heading, text FROM units"
            " WHERE chunk_id IN (SELECT value FROM json_each(?)) ORDER BY chunk_id, start_line",
            [json.dumps([int(i) for i in chunk_ids])],
        ):
            out.setdefault(chunk_id, []).append(UnitRecord(chunk_id, start, end, heading, text))
        return out

    def keyword_ids(self, match: str, limit: int) -> list[int]:
        try:
            return [
                r[0]
                for r in self.conn.execute(
                    "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
                    (match, int(limit)),
                )
            ]
        except Exception as exc:  # sqlite's OperationalError: an FTS5 syntax error
            raise InputError(f"full-text query {match[:80]!r}: {exc}") from exc

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        q = ",".join("?" * len(terms))
        return dict(self.conn.execute(f"SELECT term, doc FROM chunks_vocab WHERE term IN ({q})", list(terms)))

    def close_chunk(self, chunk: ChunkRecord, end: float, superseded_by: str) -> bool:
        cur = self.conn.execute(
            "UPDATE chunks SET validity_end = ?, superseded_by = ? WHERE id = ? AND validity_end IS NULL",
            (end, superseded_by, chunk.id),
        )
        # a re-index makes new chunk rows: the closing is kept by (path, text hash)
        self.conn.execute(
            "INSERT INTO chunk_validity(path, hash, validity_start, validity_end, superseded_by)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT(path, hash) DO UPDATE SET"
            " validity_end = excluded.validity_end, superseded_by = excluded.superseded_by"
            " WHERE chunk_validity.validity_end IS NULL",
            (chunk.path, chunk.hash, chunk.validity_start, end, superseded_by),
        )
        return cur.rowcount > 0

    def events(
        self,
        *,
        ids: Sequence[int] | None = None,
        after: float | None = None,
        until: float | None = None,
        path_prefix: str | None = None,
    ) -> list[RecallEvent]:
        parts: list[str] = []
        params: list[Any] = []
        if ids is not None:
            parts.append("id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps([int(i) for i in ids]))
        if after is not None:
            parts.append("ts > ?")
            params.append(after)
        if until is not None:
            parts.append("ts <= ?")
            params.append(until)
        if path_prefix is not None:
            parts.append("substr(path, 1, ?) = ?")
            params += [len(path_prefix), path_prefix]
        rows = self.conn.execute(
            "SELECT id, ts, day, query_hash, query, path, start_line, end_line, score, source"
            f" FROM recall_events WHERE {' AND '.join(parts) or '1'} ORDER BY id",
            params,
        )
        return [RecallEvent(*row) for row in rows]

    def decay(self, age_days: float | None) -> float:
        cfg = self.ctx.config(PLUGIN)
        return decay_factor(age_days, float(cfg["half_life_days"]), float(cfg["decay_floor"]))
