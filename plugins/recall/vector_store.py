"""The index's vectors: embedding what lacks a vector, outside any write transaction, and storing
the results (with their sign codes) in short batches.

``RecallIndex.sync`` writes the text side (chunks, units, FTS rows) and then hands the chunk and
unit ids that still lack a vector to :meth:`VectorStore.embed_pending`. That runs the model with
no transaction open and no lock held, then stores each batch of vectors in its own short
``BEGIN IMMEDIATE``: a search's recall-event write, a dream or another index waits at most one
batch, never a whole reindex. A sync that is killed keeps every batch it committed; the
``vectors_pending`` mark (set in the same transaction as the chunks that lack vectors) makes the
next sync find the rest and carry on. The codes, the centroid and the per-process code matrix
live here too.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lifelong import clock
from lifelong.contracts import Embedder, EmbeddingUnavailable
from lifelong.lazy import numpy as np

from .chunking import sentence_texts
from .vectors import (
    CENTROID_KEY,
    CENTROID_MIN_VECTORS,
    CODES,
    CodeDelta,
    CodeMatrix,
    codes_from_rows,
    pack_codes,
    to_blob,
)

EPOCH_KEY = "vector_epoch"
PENDING_KEY = "vectors_pending"  # set while some chunk or unit lacks its vector (a token, see below)
EMBED_MAX_CHARS = 8192  # text past this is never embedded: the model reads 512 tokens of it at most
BATCH_TEXTS = 64  # texts embedded between two commits


@dataclass(frozen=True)
class PendingChunk:
    id: int
    embed_hash: str
    text: str  # what is embedded (heading path + text)


@dataclass(frozen=True)
class PendingUnit:
    id: int
    chunk_id: int
    embed_hash: str
    text: str
    # what is embedded for each of its sentences (``chunking.sentence_texts``; () for a unit of
    # one sentence); None when sentence vectors are off
    sentences: tuple[str, ...] | None = None

    @cached_property
    def sentence_hashes(self) -> list[str]:
        return [text_hash(t) for t in self.sentences or ()]


@dataclass
class EmbedOutcome:
    """What one embedding pass did; merged into the sync's report."""

    embedded: int = 0  # chunk texts embedded
    units_embedded: int = 0  # unit texts embedded
    sentences_embedded: int = 0  # sentence texts embedded
    cache_hits: int = 0  # chunk texts found in the embedding cache
    stored: int = 0  # chunk vectors stored
    left: int = 0  # chunks still without a vector (budget spent, or the model failed)
    units_left: int = 0  # units still without their own or their sentences' vectors
    seconds: dict[str, float] = field(default_factory=dict)  # time in the model, by pass
    failed: str | None = None  # the model's error, when it failed
    warnings: list[str] = field(default_factory=list)


def embed_text(text: str) -> str:
    """The text given to the model: at most ``EMBED_MAX_CHARS`` characters, so one enormous
    chunk costs what any other costs (its cache key stays the hash of the whole text)."""
    return text if len(text) <= EMBED_MAX_CHARS else text[:EMBED_MAX_CHARS]


SENTENCE_DTYPE = "float16"  # how a unit's sentence vectors are stored (see sentence_blob): a numpy dtype name


def sentence_blob(vectors: list[bytes]) -> bytes:
    """A unit's sentence vectors as stored beside its own (``unit_vectors.sentences``):
    concatenated float16, half the size of float32 at a cosine error under 1e-3; b"" for a unit
    of one sentence (NULL in the table: sentence vectors off or not embedded yet)."""
    if not vectors:
        return b""
    return np.frombuffer(b"".join(vectors), dtype=np.float32).astype(SENTENCE_DTYPE).tobytes()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


Batch = tuple[str, list[PendingChunk], list[PendingUnit]]  # pass, chunks, units


def plan_batches(
    chunks: list[PendingChunk],
    units: list[PendingUnit],
    derived: dict[int, list[int]],
    cached: dict[str, bytes] | set[str],
) -> list[Batch]:
    """The batches of an embedding pass, in order (pure): ``chunks`` (every chunk whose vector is
    an embedding of its text), then ``units`` (each unit's own vector; a chunk whose vector is its
    units' mean goes with its units), then ``sentences`` (the units whose sentence vectors are not
    all cached, each with its unit, whose vector the unit pass stored). About
    :data:`BATCH_TEXTS` texts to embed a batch (cached ones cost nothing and fill no batch)."""
    batches: list[Batch] = []

    def cut(kind: str, items: list[tuple[list[PendingChunk], list[PendingUnit], int]]) -> None:
        cur_c: list[PendingChunk] = []
        cur_u: list[PendingUnit] = []
        size = 0
        for cs, us, cost in items:
            cur_c.extend(cs)
            cur_u.extend(us)
            size += cost
            if size >= BATCH_TEXTS:
                batches.append((kind, cur_c, cur_u))
                cur_c, cur_u, size = [], [], 0
        if cur_c or cur_u:
            batches.append((kind, cur_c, cur_u))

    own = [c for c in chunks if c.id not in derived]
    cut("chunks", [([c], [], int(c.embed_hash not in cached)) for c in own])
    by_chunk: dict[int, list[PendingUnit]] = {}
    for u in units:
        by_chunk.setdefault(u.chunk_id, []).append(u)
    mean_of = {c.id: c for c in chunks if c.id in derived}
    items: list[tuple[list[PendingChunk], list[PendingUnit], int]] = []
    for cid, us in by_chunk.items():
        items.append(
            ([mean_of[cid]] if cid in mean_of else [], us, sum(u.embed_hash not in cached for u in us))
        )
    items.extend(([c], [], 0) for cid, c in mean_of.items() if cid not in by_chunk)
    cut("units", items)
    due = [u for u in units if u.sentences and any(h not in cached for h in u.sentence_hashes)]
    cut("sentences", [([], [u], sum(h not in cached for h in u.sentence_hashes)) for u in due])
    return batches


def _left(batches: list[Batch]) -> tuple[int, int]:
    """(chunks, units) the ``batches`` would have given vectors."""
    return sum(len(b[1]) for b in batches), len({u.id for b in batches for u in b[2]})


class VectorStore:
    """Vectors, codes and centroid of one recall index, over its open store."""

    def __init__(self, store: Any, config: dict[str, Any]):
        self.store = store
        self.config = config
        self._centroid: tuple[str, np.ndarray] | None = None

    # meta -----------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.store.conn.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        conn = self.store.conn
        if value is None:
            conn.execute("DELETE FROM index_meta WHERE key = ?", (key,))
        else:
            conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, ?)", (key, value))

    def mark_pending(self) -> str:
        """Inside the transaction that adds vector-less chunks: a fresh token, so a pass clears
        the mark only if no later sync added work after it looked."""
        token = uuid.uuid4().hex
        self.set_meta(PENDING_KEY, token)
        return token

    def reset(self) -> None:
        """Inside a write transaction: forget every vector, code and the centroid (the model
        changed, or a forced reindex)."""
        conn = self.store.conn
        conn.execute("DELETE FROM chunk_vectors")
        conn.execute("DELETE FROM chunk_codes")
        conn.execute("DELETE FROM unit_vectors")
        self.set_meta(CENTROID_KEY, None)
        self.new_epoch()

    def drop_orphans(self) -> None:
        """Inside a write transaction: vectors and codes whose chunk or unit no longer exists."""
        conn = self.store.conn
        gone = [
            r[0]
            for r in conn.execute(
                "SELECT chunk_id FROM chunk_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)"
            )
        ]
        conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", ((i,) for i in gone))
        conn.executemany("DELETE FROM chunk_codes WHERE chunk_id = ?", ((i,) for i in gone))
        conn.executemany("INSERT INTO code_log(chunk_id, op) VALUES (?, 0)", ((i,) for i in gone))
        conn.execute("DELETE FROM chunk_codes WHERE chunk_id NOT IN (SELECT chunk_id FROM chunk_vectors)")
        conn.execute("DELETE FROM unit_vectors WHERE unit_id NOT IN (SELECT id FROM units)")

    def missing(
        self, with_units: bool, with_sentences: bool = False
    ) -> tuple[list[PendingChunk], list[PendingUnit]]:
        """Every chunk (and unit) without a vector: what a killed or paused pass left.
        ``with_sentences``: a unit whose sentences were never embedded (an index from before
        sentence vectors, or with them off) counts as missing too."""
        conn = self.store.conn
        chunks = [
            PendingChunk(r[0], r[1], f"{r[2]}\n{r[3]}" if r[2] else r[3])
            for r in conn.execute(
                "SELECT c.id, c.embed_hash, c.heading, c.text FROM chunks c"
                " LEFT JOIN chunk_vectors v ON v.chunk_id = c.id WHERE v.chunk_id IS NULL AND NOT c.lexical_only"
                " ORDER BY c.id"
            )
        ]
        lacking = "v.unit_id IS NULL OR v.sentences IS NULL" if with_sentences else "v.unit_id IS NULL"
        units = (
            [
                PendingUnit(
                    r[0],
                    r[1],
                    r[2],
                    f"{r[3]}\n{r[4]}" if r[3] else r[4],
                    tuple(sentence_texts(r[3], r[4])) if with_sentences else None,
                )
                for r in conn.execute(
                    "SELECT u.id, u.chunk_id, u.embed_hash, u.heading, u.text FROM units u"
                    " JOIN chunks c ON c.id = u.chunk_id"
                    f" LEFT JOIN unit_vectors v ON v.unit_id = u.id WHERE ({lacking}) AND NOT c.lexical_only"
                    " ORDER BY u.id"
                )
            ]
            if with_units
            else []
        )
        return chunks, units

    # embedding ------------------------------------------------------------------------------
    def embed_pending(
        self,
        embedder: Embedder,
        chunks: list[PendingChunk],
        units: list[PendingUnit],
        *,
        token: str | None,
        progress: Callable[[str, int, int], None] | None = None,
        budget_s: float | None = None,
        log: Callable[[str], None] | None = None,
    ) -> EmbedOutcome:
        """Embed what the cache lacks and store every vector, batch by batch. Runs the model with
        no transaction open; each batch's rows go in one short write transaction, and only for
        chunks and units that still exist with the same text (another sync may have replaced
        them meanwhile). ``budget_s``: stop after the batch that passes it, leaving the rest
        marked pending. Clears the pending mark when done, if it still holds ``token``.

        The work goes in three passes, the most useful vectors first (a search uses whatever is
        stored; :meth:`plan_batches`): every chunk's vector (the vector leg then covers every
        chunk), then the units' own vectors (a unit without one is scored with its chunk's
        cosine), then the units' sentence vectors (a unit without them scores its own cosine).
        A budget or a kill therefore leaves the least useful work pending."""
        out = EmbedOutcome()
        provider, model = embedder.provider, embedder.model
        started = time.monotonic()
        units_of: dict[int, list[PendingUnit]] = {}
        for u in units:
            units_of.setdefault(u.chunk_id, []).append(u)
        derived = self._derived(chunks, units_of)
        unit_hashes = {u.embed_hash for u in units}
        sentence_hashes = {h for u in units for h in u.sentence_hashes}
        cached = self._cached(provider, model, {c.embed_hash for c in chunks} | unit_hashes | sentence_hashes)
        out.cache_hits = sum(1 for c in chunks if c.id not in derived and c.embed_hash in cached)
        chunk_hashes = {c.embed_hash for c in chunks if c.id not in derived}
        todo = sum(1 for h in chunk_hashes | unit_hashes | sentence_hashes if h not in cached)
        done_texts = 0
        groups = plan_batches(chunks, units, derived, cached)
        for n, (kind, gchunks, gunits) in enumerate(groups):
            need: dict[str, str] = {}
            for c in gchunks:
                if c.id not in derived and c.embed_hash not in cached:
                    need.setdefault(c.embed_hash, c.text)
            for u in gunits:
                if u.embed_hash not in cached:
                    need.setdefault(u.embed_hash, u.text)
                if kind == "sentences":
                    for h, t in zip(u.sentence_hashes, u.sentences or (), strict=True):
                        if h not in cached:
                            need.setdefault(h, t)
            fresh: list[tuple[str, bytes]] = []
            if need:
                began = time.monotonic()
                try:
                    vecs = embedder.embed_passages([embed_text(t) for t in need.values()])
                except EmbeddingUnavailable as exc:
                    out.failed = str(exc)
                    out.left, out.units_left = _left(groups[n:])
                    return out
                out.seconds[kind] = out.seconds.get(kind, 0.0) + time.monotonic() - began
                fresh = [(h, to_blob(v)) for h, v in zip(need, vecs, strict=True)]
                cached.update(fresh)
                out.embedded += sum(1 for h in need if h in chunk_hashes)
                out.units_embedded += sum(1 for h in need if h in unit_hashes and h not in chunk_hashes)
                out.sentences_embedded += sum(
                    1 for h in need if h in sentence_hashes and h not in unit_hashes and h not in chunk_hashes
                )
                done_texts += len(need)
                if progress:
                    progress("embed", min(done_texts, todo), todo)
            out.stored += self._store_batch(provider, model, fresh, gchunks, gunits, cached, derived)
            if budget_s is not None and time.monotonic() - started > budget_s and n + 1 < len(groups):
                out.left, out.units_left = _left(groups[n + 1 :])
                if log:
                    log(
                        f"embedding paused after {time.monotonic() - started:.0f} s with {out.left} chunk(s) "
                        f"and {out.units_left} unit(s) left; searches use BM25 (and chunk cosines) for them "
                        "until `lifelong index` finishes"
                    )
                return out
        with self.store.write():
            if token is not None and self.meta(PENDING_KEY) == token:
                self.set_meta(PENDING_KEY, None)
        return out

    def _derived(
        self, chunks: list[PendingChunk], units_of: dict[int, list[PendingUnit]]
    ) -> dict[int, list[int]]:
        """chunk id -> its unit ids, for chunks whose vector is the mean of their units' (the
        ``chunk_vectors_from_units`` option), when all of them are being embedded now."""
        if not units_of or not self.config.get("chunk_vectors_from_units"):
            return {}
        by_chunk: dict[int, list[int]] = {}
        for uid, cid in self.store.conn.execute(
            "SELECT id, chunk_id FROM units WHERE chunk_id IN (SELECT value FROM json_each(?))",
            [json.dumps([c.id for c in chunks])],
        ):
            by_chunk.setdefault(cid, []).append(uid)
        fresh = {u.id for us in units_of.values() for u in us}
        return {cid: uids for cid, uids in by_chunk.items() if uids and all(u in fresh for u in uids)}

    def _cached(self, provider: str, model: str, hashes: set[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        ordered = sorted(hashes)
        for i in range(0, len(ordered), 500):
            part = ordered[i : i + 500]
            q = ",".join("?" * len(part))
            for h, blob in self.store.conn.execute(
                f"SELECT hash, embedding FROM embedding_cache WHERE provider = ? AND model = ? AND hash IN ({q})",
                [provider, model, *part],
            ):
                found[h] = blob
        return found

    def _store_batch(
        self,
        provider: str,
        model: str,
        fresh: list[tuple[str, bytes]],
        chunks: list[PendingChunk],
        units: list[PendingUnit],
        cached: dict[str, bytes],
        derived: dict[int, list[int]],
    ) -> int:
        """One short write transaction: the new cache rows, then the vectors of the chunks and
        units that still exist with the text that was embedded."""
        with self.store.write() as conn:
            now = clock.now().timestamp()
            conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?, ?, ?)",
                [(provider, model, h, len(b) // 4, b, now) for h, b in fresh],
            )
            alive_chunks = self._alive("chunks", [(c.id, c.embed_hash) for c in chunks])
            alive_units = self._alive("units", [(u.id, u.embed_hash) for u in units])
            unit_blob = {u.id: cached[u.embed_hash] for u in units if u.id in alive_units}
            # a unit's sentence vectors once all of them are at hand (NULL meanwhile: still due)
            unit_sentences = {
                u.id: None
                if u.sentences is None or any(h not in cached for h in u.sentence_hashes)
                else sentence_blob([cached[h] for h in u.sentence_hashes])
                for u in units
                if u.id in alive_units
            }
            rows = []
            for c in chunks:
                if c.id not in alive_chunks:
                    continue
                members = derived.get(c.id)
                if members and all(u in unit_blob for u in members):
                    mean = np.mean([np.frombuffer(unit_blob[u], dtype=np.float32) for u in members], axis=0)
                    rows.append((c.id, to_blob(mean / max(float(np.linalg.norm(mean)), 1e-12))))
                elif c.embed_hash in cached:
                    rows.append((c.id, cached[c.embed_hash]))
            self.store_vectors(rows)
            if unit_blob:
                conn.executemany(
                    "INSERT OR REPLACE INTO unit_vectors(unit_id, embedding, sentences) VALUES (?, ?, ?)",
                    [(uid, blob, unit_sentences[uid]) for uid, blob in unit_blob.items()],
                )
        return len(rows)

    def _alive(self, table: str, pairs: list[tuple[int, str]]) -> set[int]:
        if not pairs:
            return set()
        want = dict(pairs)
        rows = self.store.conn.execute(
            f"SELECT id, embed_hash FROM {table} WHERE id IN (SELECT value FROM json_each(?))",
            [json.dumps(list(want))],
        )
        return {i for i, h in rows if want.get(i) == h}

    # codes and centroid ---------------------------------------------------------------------
    def store_vectors(self, rows: list[tuple[int, bytes]]) -> None:
        """Inside a write transaction: chunk vectors and their codes (logged for the searching
        processes' code matrices); the centroid is fixed once enough vectors exist."""
        if not rows:
            return
        conn = self.store.conn
        centroid = self.centroid()
        vecs = np.frombuffer(b"".join(b for _, b in rows), dtype=np.float32).reshape(len(rows), -1)
        if centroid is None and (len(rows) + self.vector_count()) >= CENTROID_MIN_VECTORS:
            existing = self._all_vectors(limit=20000)
            sample = vecs if existing is None else np.vstack([existing, vecs])
            centroid = sample[:20000].mean(axis=0).astype(np.float32)
            self.set_meta(CENTROID_KEY, centroid.tobytes().hex())
            self._recode_all(centroid)
        codes = pack_codes(vecs, centroid)
        conn.executemany("INSERT OR REPLACE INTO chunk_vectors(chunk_id, embedding) VALUES (?, ?)", rows)
        conn.executemany(
            "INSERT OR REPLACE INTO chunk_codes(chunk_id, code) VALUES (?, ?)",
            [(cid, codes[i].tobytes()) for i, (cid, _) in enumerate(rows)],
        )
        conn.executemany("INSERT INTO code_log(chunk_id, op) VALUES (?, 1)", ((cid,) for cid, _ in rows))

    def new_epoch(self) -> None:
        """Every code changes (new centroid, full re-embed): caches reload instead of patching."""
        self.store.conn.execute("DELETE FROM code_log")
        self.set_meta(EPOCH_KEY, uuid.uuid4().hex)

    def _recode_all(self, centroid: np.ndarray) -> None:
        conn = self.store.conn
        self.new_epoch()
        rows = conn.execute("SELECT chunk_id, embedding FROM chunk_vectors").fetchall()
        if not rows:
            return
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        codes = pack_codes(vecs, centroid)
        conn.executemany(
            "INSERT OR REPLACE INTO chunk_codes(chunk_id, code) VALUES (?, ?)",
            [(r[0], codes[i].tobytes()) for i, r in enumerate(rows)],
        )

    def _all_vectors(self, limit: int) -> np.ndarray | None:
        rows = self.store.conn.execute("SELECT embedding FROM chunk_vectors LIMIT ?", (limit,)).fetchall()
        if not rows:
            return None
        return np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)

    def vector_count(self) -> int:
        return self.store.conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]

    def mean_vector(self) -> np.ndarray | None:
        """The corpus's mean embedding (for cosine centring): the stored centroid, or for an
        index too small to have one yet, the mean of its few vectors."""
        centroid = self.centroid()
        if centroid is not None:
            return centroid
        vecs = self._all_vectors(limit=CENTROID_MIN_VECTORS)
        return None if vecs is None else vecs.mean(axis=0)

    def centroid(self) -> np.ndarray | None:
        """The stored centroid, parsed once per value (every search reads it twice)."""
        raw = self.meta(CENTROID_KEY)
        if not raw:
            return None
        if self._centroid is None or self._centroid[0] != raw:
            self._centroid = (raw, np.frombuffer(bytes.fromhex(raw), dtype=np.float32))
        return self._centroid[1]

    def code_matrix(self) -> CodeMatrix:
        """The code matrix of this index, from the per-process cache: patched with the
        ``code_log`` entries since the cached copy, or loaded whole (first use, new epoch, log
        pruned). Read in one transaction, so a concurrent sync is seen entirely or not at all."""
        with self.store.lock:
            return self._code_matrix(self.store.conn)

    def _code_matrix(self, conn: Any) -> CodeMatrix:
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            epoch = self.meta(EPOCH_KEY) or "0"
            seq = conn.execute("SELECT coalesce(max(seq), 0) FROM code_log").fetchone()[0]

            def load() -> tuple[np.ndarray, np.ndarray]:
                rows = conn.execute("SELECT chunk_id, code FROM chunk_codes ORDER BY chunk_id").fetchall()
                return codes_from_rows(rows, (len(rows[0][1]) // 8) if rows else 6)

            def changes_since(after: int) -> CodeDelta | None:
                first = conn.execute("SELECT min(seq) FROM code_log").fetchone()[0]
                if first is None or first > after + 1:
                    return None  # pruned past what the cache holds
                ops: dict[int, int] = {}
                for cid, op in conn.execute(
                    "SELECT chunk_id, op FROM code_log WHERE seq > ? AND seq <= ? ORDER BY seq", (after, seq)
                ):
                    ops[cid] = op
                added = [cid for cid, op in ops.items() if op == 1]
                rows = conn.execute(
                    "SELECT chunk_id, code FROM chunk_codes WHERE chunk_id IN (SELECT value FROM json_each(?))",
                    [json.dumps(added)],
                ).fetchall()
                words = (len(rows[0][1]) // 8) if rows else 6
                ids, codes = codes_from_rows(sorted(rows), words)
                return np.fromiter(ops, dtype=np.int64, count=len(ops)), ids, codes

            return CODES.get(str(self.store.path), epoch, seq, load, changes_since)
        finally:
            if own:
                conn.execute("COMMIT")
