"""Writing one file into the index (in the caller's transaction): its chunks, units and
full-text rows, what must be embedded afterwards, and removing a file's rows. ``index.py`` decides
which files to write (``scan.py`` plans it) and embeds after the transaction (``vector_store.py``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from lifelong.contracts import PluginContext
from lifelong.errors import InputError, LifelongError
from lifelong.markdown import strip_comments
from lifelong.privacy import PRIVATE_CORPUS, is_private
from lifelong.text import fts_text
from lifelong.workspace import Workspace, daily_date, find_regions, read_text_file, split_frontmatter

from .chunking import chunk_markdown, chunk_units, retrieval_units, split_lines
from .scan import FileState
from .scoring import encode_terms
from .vector_store import PendingChunk, PendingUnit, text_hash


def sentence_vectors_on(config: dict[str, Any]) -> bool:
    """Whether units get a vector per sentence as well (``unit_vectors`` and ``sentence_vectors``)."""
    return bool(config["unit_vectors"] and config["sentence_vectors"])


def _managed_line_ranges(text: str) -> list[tuple[int, int]]:
    try:
        regions = find_regions(text)
    except InputError:
        return []
    out = []
    for r in regions:
        out.append((text.count("\n", 0, r.start) + 1, text.count("\n", 0, max(r.start, r.end - 1)) + 1))
    return out


def lexical_only_chunks(
    chunks: list[Any], lines: list[str], *, max_chunks: int, max_line_chars: int
) -> set[int]:
    """Which chunks (by position) are indexed for their words only: every chunk past the first
    ``max_chunks`` of a file, and every chunk after the first that lies inside one line longer than
    ``max_line_chars`` (a pasted blob: 2 MB on one line is a thousand chunks, half an hour of
    embedding on two cores). Pure."""
    out = set(range(max_chunks, len(chunks)))
    seen_long: set[int] = set()
    for n, chunk in enumerate(chunks):
        if chunk.start_line != chunk.end_line or chunk.start_line - 1 >= len(lines):
            continue
        if len(lines[chunk.start_line - 1]) > max_line_chars:
            if chunk.start_line in seen_long:
                out.add(n)
            seen_long.add(chunk.start_line)
    return out


class FileWriter:
    """Writes files into the recall index of one workspace, over one open store."""

    def __init__(self, ctx: PluginContext, config: dict[str, Any]):
        self.ctx = ctx
        self.ws: Workspace = ctx.workspace
        self.store = ctx.store
        self.config = config

    def delete_file(self, rel: str) -> int:
        conn = self.store.conn
        ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE path = ?", (rel,))]
        if ids:
            conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", ((i,) for i in ids))
            conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", ((i,) for i in ids))
            conn.executemany("DELETE FROM chunk_codes WHERE chunk_id = ?", ((i,) for i in ids))
            conn.executemany("INSERT INTO code_log(chunk_id, op) VALUES (?, 0)", ((i,) for i in ids))
            units = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM units WHERE chunk_id IN (SELECT id FROM chunks WHERE path = ?)", (rel,)
                )
            ]
            conn.executemany("DELETE FROM unit_vectors WHERE unit_id = ?", ((u,) for u in units))
            conn.executemany("DELETE FROM units WHERE id = ?", ((u,) for u in units))
            conn.execute("DELETE FROM chunks WHERE path = ?", (rel,))
        conn.execute("DELETE FROM files WHERE path = ?", (rel,))
        return len(ids)

    def source_date(self, rel: str, mtime: float, frontmatter: dict[str, Any]) -> tuple[float | None, bool]:
        tz = self.ws.timezone
        day = daily_date(rel)
        fm_date = frontmatter.get("date")
        if day is None and isinstance(fm_date, dt.date):
            day = fm_date if not isinstance(fm_date, dt.datetime) else fm_date.date()
        if day is not None:
            return dt.datetime(day.year, day.month, day.day, tzinfo=tz).timestamp(), False
        return mtime, True  # MEMORY.md and non-dated files never decay

    def index_file(
        self, rel: str, path: Path, state: FileState
    ) -> tuple[int, list[PendingChunk], list[PendingUnit], str | None, bool]:
        """Chunk, store and full-text-index one file; returns (chunks, chunks to embed, units to
        embed, what to say about the file, whether it was skipped)."""
        conn = self.store.conn
        now = self.ctx.now().timestamp()
        try:
            text = read_text_file(path, max_bytes=self.ws.max_file_bytes, label=rel)
        except LifelongError as exc:
            conn.execute(
                "INSERT OR REPLACE INTO files(path, corpus, sha256, mtime, size, status, error, indexed_at) "
                "VALUES (?, ?, ?, ?, ?, 'skipped', ?, ?)",
                (rel, state.corpus, state.sha256, state.mtime, state.size, str(exc), now),
            )
            self.ctx.log("recall", f"skipped {rel}: {exc}")
            return 0, [], [], str(exc), True
        error = None
        try:
            fm, body, offset = split_frontmatter(text)
        except InputError as exc:
            fm, body, offset = {}, text, 0
            error = f"{exc}; indexed as plain text"
            self.ctx.log("recall", f"{rel}: {error}")
        chunks = chunk_markdown(
            text,
            target_tokens=self.config["chunk_tokens"],
            overlap_tokens=self.config["chunk_overlap"],
            first_line=offset + 1,
            body=body if offset else None,
        )
        units = retrieval_units(
            text, unit_tokens=self.config["unit_tokens"], first_line=offset + 1, body=body if offset else None
        )
        all_lines = split_lines(text)
        # a private note's chunks form their own corpus: only a search in the private scope sees them
        corpus = PRIVATE_CORPUS if state.corpus == "memory" and is_private(rel, fm) else state.corpus
        source_date, evergreen = self.source_date(rel, state.mtime, fm)
        validity_start = None if evergreen else source_date
        managed = _managed_line_ranges(text)
        overrides = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT hash, validity_start, validity_end, superseded_by FROM chunk_validity WHERE path = ?",
                (rel,),
            )
        }
        to_embed: list[PendingChunk] = []
        units_to_embed: list[PendingUnit] = []
        lexical = lexical_only_chunks(
            chunks,
            all_lines,
            max_chunks=self.config["embed_max_chunks_per_file"],
            max_line_chars=self.config["embed_max_line_chars"],
        )
        for n, chunk in enumerate(chunks):
            generated = any(s <= chunk.start_line and chunk.end_line <= e for s, e in managed)
            etext = chunk.embedding_text()
            ehash = text_hash(etext)
            vstart, vend, sup = overrides.get(chunk.sha256, (validity_start, None, None))
            cur = conn.execute(
                "INSERT INTO chunks(path, corpus, start_line, end_line, heading, text, hash, embed_hash, source_date,"
                " evergreen, generated, validity_start, validity_end, ingestion_time, superseded_by, lexical_only)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rel,
                    corpus,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.heading,
                    chunk.text,
                    chunk.sha256,
                    ehash,
                    source_date,
                    int(evergreen),
                    int(generated),
                    vstart if vstart is not None else validity_start,
                    vend,
                    now,
                    sup,
                    int(n in lexical),
                ),
            )
            cid = cur.lastrowid
            conn.execute(
                "INSERT INTO chunks_fts(rowid, text, heading) VALUES (?, ?, ?)",
                (cid, fts_text(strip_comments(chunk.text)), fts_text(chunk.heading)),
            )
            if n not in lexical:
                to_embed.append(PendingChunk(cid, ehash, etext))
            for unit in chunk_units(chunk, units, all_lines, self.config["unit_tokens"]):
                utext = unit.embedding_text()
                uhash = text_hash(utext)
                ucur = conn.execute(
                    "INSERT INTO units(chunk_id, start_line, end_line, heading, text, embed_hash, terms)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        cid,
                        unit.start_line,
                        unit.end_line,
                        unit.heading,
                        unit.text,
                        uhash,
                        encode_terms(unit.text),
                    ),
                )
                if n in lexical:
                    continue
                units_to_embed.append(
                    PendingUnit(
                        ucur.lastrowid,
                        cid,
                        uhash,
                        utext,
                        tuple(unit.sentence_texts()) if sentence_vectors_on(self.config) else None,
                    )
                )
        if lexical:
            note = (
                f"{len(lexical)} of {len(chunks)} chunks indexed for their words only (no vectors): "
                f"over embed_max_chunks_per_file {self.config['embed_max_chunks_per_file']} or inside a line "
                f"longer than embed_max_line_chars {self.config['embed_max_line_chars']}"
            )
            error = f"{error}; {note}" if error else note
            self.ctx.log("recall", f"{rel}: {note}")
        conn.execute(
            "INSERT OR REPLACE INTO files(path, corpus, sha256, mtime, size, status, error, indexed_at) "
            "VALUES (?, ?, ?, ?, ?, 'indexed', ?, ?)",
            (rel, state.corpus, state.sha256, state.mtime, state.size, error, now),
        )
        return len(chunks), to_embed, units_to_embed, error, False

    # vectors (see vector_store.py) ----------------------------------------------------------
