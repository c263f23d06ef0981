"""Search benchmark on synthetic workspaces of 10k, 100k and 1M chunks (issue 3's performance
figures). ``python -m evals.bench_search [--sizes 10000,100000] [--queries N] [--reps R]`` prints
them; the ``latency`` suite runs it and plots them.

The corpus (seeded, reproducible, cached under ``evals/.cache/bench/``, rebuilt when the recall
schema gains a migration):

- **text**: Zipf-Mandelbrot word frequencies (exponent 1.05) over a 50k vocabulary whose 150 most
  frequent words are English stopwords and the rest pronounceable pseudo-words; chunks of 40-160
  words, one paragraph each, 100 chunks per daily file ``memory/YYYY-MM-DD.md`` (one file per
  day going back from the pinned "today"), 5% of chunks with a closed validity interval;
- **vectors**: 384-d, clustered in two levels, as e5 embeddings are: a shared direction (every
  pair of texts has cosine ~0.6), topics (~2,000 chunks each, cosine ~0.8 inside) and sub-topics
  (~24 chunks, cosine ~0.9 inside), plus noise; L2-normalised;
- **queries**: 2-4 mid-frequency words of a random chunk ("what did we say about ..."), with that
  chunk's vector plus noise as the query vector (cosine ~0.9 to its source).

The index rows are bulk-inserted straight into the recall plugin's tables in one transaction
(``chunks``, FTS5 ``chunks_fts``, ``units`` and ``unit_vectors`` (one paragraph per chunk is one
retrieval unit, its vector the chunk's, with three synthetic sentence vectors near it, as
``sentence_vectors`` stores them), ``chunk_vectors``, ``chunk_codes`` with the codes computed by
the plugin's own ``pack_codes`` around the centroid of the first 20,000 vectors, ``files`` with the
real checksums of the files written to disk, ``index_meta`` keys ``embedder``,
``vector_centroid`` and ``generation``). The files on disk hold the same text, so the sync's scan
and checksum paths are real; they are never re-chunked during the benchmark (one chunk per
paragraph is what is inserted, not what the chunker would pack). Today's daily is a small real
file indexed by the real sync.

Measured (clock pinned to "today" 18:00 UTC; each figure over ``queries x reps`` samples):

- ``hybrid``: ``Searcher.search`` with the plugin's configured max_results and min_score, mode current,
  and the query vector given (``SearchRequest.query_vector``), so query embedding is excluded; its
  legs' own times (``fts_ms``, ``vector_ms``; the lexical leg runs in parallel on a second
  connection, so they overlap) come from the search outcome. Over all repetitions;
  ``hybrid_first_pass`` / ``hybrid_warm`` split off the first pass over the queries, which reads
  vectors and postings into the OS page cache; the verdict judges the targets over all
  repetitions and, apart (``*_warm``), over the warm ones. How cold the first pass is depends on
  what the machine kept cached; ``--drop-caches`` empties the page cache first (Linux, root);
- ``source_in_results``: the share of queries whose source chunk is among the results (a quality
  guard on the speed settings; ~5% of sources are superseded and cannot appear in mode current);
- ``speaker_probe``: ``Searcher.named_speakers`` per query (the FTS probes that decide whether
  a query word names a transcript's speaker, ``speaker_pronoun``); it runs before the query is
  embedded, so ``hybrid`` (query vector given) leaves it out;
- ``fts_only``: the same on a host with embedding provider ``none``;
- ``fts_leg_plain_or`` / ``fts_leg_source_in_pool``: the lexical leg with ``fts_max_postings`` 0
  (every kept term OR-ed) against the default (a quorum of term pairs when the postings exceed
  the budget), time and how often the source chunk is in the leg's candidate pool;
- ``validity``: hybrid with mode ``all`` (no validity predicate) vs ``current``;
- ``auto_sync_check``: ``needs_sync()`` (scandir + stat of every source file), paid by every
  ``memory_search`` tool call before the search itself;
- ``vector_recall@10``: the vector leg (binary coarse pass + exact re-rank) against exact brute
  force cosine over every stored vector;
- ``reindex``: append one line to today's daily and run the sync (``lifelong index``), the
  embedding model already loaded, with the embedding share reported apart; then the first
  search after it (it patches the in-memory code matrix from ``code_log``);
- ``cold_first_search_ms``: the first search of a process (loads every code from SQLite);
- a cProfile of the hybrid searches of the largest size: the functions that dominate.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import hashlib
import io
import json
import os
import pstats
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BENCH_VERSION = 1
DIM = 384
BLOCK = 20_000  # chunks generated per block (a multiple of CHUNKS_PER_FILE)
CHUNKS_PER_FILE = 100
VOCAB_SIZE = 50_000
ZIPF_S = 1.05
ZIPF_Q = 2.7
STOPWORD_RANKS = 150
SUPERSEDED_FRACTION = 0.05
TODAY = dt.date(2026, 3, 1)
NOW = dt.datetime(2026, 3, 1, 18, 0, tzinfo=dt.UTC)
CENTROID_SAMPLE = 20_000
REINDEX_REPS = 20  # appends per size: today's daily grows from 8 to 48 lines, past one chunk
TARGETS = {
    "p95_ms_at_100k": 20.0,
    "p95_ms_at_1m": 100.0,
    "vector_recall_at_10": 0.98,
    "reindex_ms": 300.0,
}
TODAY_LINES = [
    "- 08:40 standup: the TW-418 migration is blocked on the staging certificate",
    "- 09:15 Priya asked for the quarterly numbers by Thursday",
    "- 10:02 booked the Lisbon offsite venue (Casa do Rio), deposit paid",
    "- 11:30 lunch with Marco: he is moving to the Berlin office in May",
    "- 13:45 decided: the pitch deck leads with the retention chart",
    "- 14:20 dentist moved to March 12, 9:00",
    "- 15:10 reminder: renew the domain before it lapses on March 20",
    "- 16:00 reviewed the hiring plan; two backend roles approved",
]


# ---------------------------------------------------------------------------------------------
# Generators (pure, seeded)


def pseudo_words(count: int, seed: int) -> list[str]:
    """``count`` distinct pronounceable pseudo-words (deterministic)."""
    rng = np.random.default_rng([seed, 1])
    onsets = [
        "b",
        "d",
        "f",
        "g",
        "k",
        "l",
        "m",
        "n",
        "p",
        "r",
        "s",
        "t",
        "v",
        "z",
        "br",
        "tr",
        "st",
        "pl",
        "gr",
        "sh",
    ]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ea"]
    codas = ["", "", "", "n", "r", "s", "l", "m", "k"]
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        n = int(rng.integers(2, 4))
        w = "".join(
            onsets[rng.integers(len(onsets))]
            + vowels[rng.integers(len(vowels))]
            + codas[rng.integers(len(codas))]
            for _ in range(n)
        )
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


class ZipfText:
    """Zipf-Mandelbrot text over stopwords + pseudo-words."""

    def __init__(self, seed: int, vocab_size: int = VOCAB_SIZE):
        from lifelong_plugins.recall.scoring import STOPWORDS

        stop = sorted(w for w in STOPWORDS if "'" not in w)[:STOPWORD_RANKS]
        rng = np.random.default_rng([seed, 0])
        stop = [stop[i] for i in rng.permutation(len(stop))]
        self.vocab = np.array(stop + pseudo_words(vocab_size - len(stop), seed), dtype=object)
        ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
        p = 1.0 / (ranks + ZIPF_Q) ** ZIPF_S
        self.cdf = np.cumsum(p / p.sum())
        self.n_stop = len(stop)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rng.random(n)), len(self.vocab) - 1)

    def chunk_words(self, rng: np.random.Generator, count: int) -> list[np.ndarray]:
        """Word ids of ``count`` chunks of 40-160 words."""
        lengths = rng.integers(40, 161, size=count)
        idx = self.sample(rng, int(lengths.sum()))
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        return [idx[bounds[i] : bounds[i + 1]] for i in range(count)]

    def chunks(self, rng: np.random.Generator, count: int) -> tuple[list[str], list[np.ndarray]]:
        words = self.chunk_words(rng, count)
        return [" ".join(self.vocab[w].tolist()) for w in words], words

    def query_text(self, rng: np.random.Generator, words: np.ndarray) -> str:
        content = [int(w) for w in dict.fromkeys(words.tolist()) if w >= STOPWORD_RANKS + 50]
        if not content:
            content = [int(w) for w in words.tolist()]
        k = min(len(content), int(rng.integers(2, 5)))
        pick = rng.choice(len(content), size=k, replace=False)
        return "what did we say about " + " ".join(self.vocab[content[i]] for i in sorted(pick))


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


class ClusteredVectors:
    """Two-level clustered unit vectors around a shared direction (see the module docstring)."""

    COMMON, TOPIC = 1.0, 0.55

    def __init__(self, n: int, seed: int, dim: int = DIM, *, sub: float = 0.45, noise: float = 0.35):
        rng = np.random.default_rng([seed, 2])
        self.n, self.seed, self.dim = n, seed, dim
        self.SUB, self.NOISE = sub, noise
        self.common = _unit(rng.standard_normal(dim))
        self.n_topics = max(8, n // 2000)
        self.n_subs = max(self.n_topics, n // 24)
        self.topics = _unit(rng.standard_normal((self.n_topics, dim)))
        self.subs = _unit(rng.standard_normal((self.n_subs, dim)))
        self.sub_topic = rng.integers(0, self.n_topics, size=self.n_subs)

    def block(self, start: int, stop: int) -> np.ndarray:
        """Vectors of chunks [start, stop): regenerated identically on every call."""
        rng = np.random.default_rng([self.seed, 3, start])
        count = stop - start
        sub = rng.integers(0, self.n_subs, size=count)
        noise = rng.standard_normal((count, self.dim)).astype(np.float32) / np.sqrt(self.dim)
        rows = (
            self.COMMON * self.common
            + self.TOPIC * self.topics[self.sub_topic[sub]]
            + self.SUB * self.subs[sub]
            + self.NOISE * noise
        )
        return _unit(rows)

    def query(self, rng: np.random.Generator, source: np.ndarray) -> np.ndarray:
        noise = rng.standard_normal(self.dim).astype(np.float32) / np.sqrt(self.dim)
        return _unit(source + self.NOISE * noise)


# ---------------------------------------------------------------------------------------------
# Building


@dataclass
class Corpus:
    root: Path
    n: int
    seed: int
    queries: list[tuple[str, np.ndarray, int]]  # (text, vector, source chunk id)
    build_s: float
    reused: bool
    db_bytes: int
    files: int


def _spec(n: int, seed: int) -> dict[str, Any]:
    from lifelong_plugins.recall.tables import migration_names

    return {
        "version": BENCH_VERSION,
        # the rows are bulk-inserted, so a migration that re-chunks every file (m010, m011) would
        # have the next sync re-embed the whole synthetic corpus with the real model (hours at
        # 100k): a schema the cache was not built under means a rebuild
        "schema": migration_names(),
        "n": n,
        "seed": seed,
        "dim": DIM,
        "vocab": VOCAB_SIZE,
        "per_file": CHUNKS_PER_FILE,
    }


def _file_day(file_no: int) -> dt.date:
    return TODAY - dt.timedelta(days=1 + file_no)


def _workspace_config() -> str:
    return "timezone: UTC\nembedding: {provider: local}\nplugins:\n  recall: {record_events: false}\n"


def build_corpus(root: Path, n: int, seed: int, n_queries: int, log: Callable[[str], None]) -> Corpus:
    """Build (or reuse) the synthetic workspace of ``n`` chunks at ``root``."""
    from lifelong import clock

    spec = _spec(n, seed)
    marker = root / ".lifelong" / "bench-spec.json"
    started = time.monotonic()
    reused = marker.exists() and json.loads(marker.read_text()) == spec
    if not reused:
        if root.exists():
            shutil.rmtree(root)
        (root / "memory").mkdir(parents=True)
        (root / "lifelong.yaml").write_text(_workspace_config())
        with clock.pinned(NOW):
            _bulk_build(root, n, seed, log)
        marker.write_text(json.dumps(spec))
    with clock.pinned(NOW):
        _fill_units(root, log)
        _fill_terms(root, log)
        _fill_sentences(root, seed, log)
        _reset_today(root)
    queries = make_queries(n, seed, n_queries)
    db = root / ".lifelong" / "index.sqlite"
    return Corpus(
        root,
        n,
        seed,
        queries,
        time.monotonic() - started,
        reused,
        db.stat().st_size,
        n // CHUNKS_PER_FILE + 1,
    )


def _host(root: Path, overrides: dict[str, Any] | None = None):  # noqa: ANN202 - a Host
    from lifelong.host import Host

    from .suite_retrieval import variant_workspace

    return Host(
        variant_workspace(root, overrides or {}), builtins=("embeddings", "recall"), entry_points=False
    )


def _bulk_build(root: Path, n: int, seed: int, log: Callable[[str], None]) -> None:
    from lifelong_plugins.recall import service
    from lifelong_plugins.recall.vectors import CENTROID_KEY, pack_codes

    text = ZipfText(seed)
    vectors = ClusteredVectors(n, seed)
    host = _host(root)
    try:
        idx = service.index_for(host.ctx)
        conn = host.store.conn
        now = NOW.timestamp()
        rng = np.random.default_rng([seed, 4])
        centroid: np.ndarray | None = None
        file_rows = []
        conn.execute("PRAGMA cache_size = -262144")
        conn.execute("BEGIN IMMEDIATE")
        t0 = time.monotonic()
        for start in range(0, n, BLOCK):
            stop = min(n, start + BLOCK)
            texts, _ = text.chunks(np.random.default_rng([seed, 5, start]), stop - start)
            vecs = vectors.block(start, stop)
            if centroid is None:
                centroid = vecs[:CENTROID_SAMPLE].mean(axis=0).astype(np.float32)
            superseded = rng.random(stop - start) < SUPERSEDED_FRACTION
            rows = []
            for j, body in enumerate(texts):
                i = start + j
                file_no = i // CHUNKS_PER_FILE
                day = _file_day(file_no)
                heading = day.isoformat()
                line = 3 + 2 * (i % CHUNKS_PER_FILE)
                src = dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()
                rows.append(
                    (
                        i + 1,
                        f"memory/{heading}.md",
                        "memory",
                        line,
                        line,
                        heading,
                        body,
                        hashlib.sha256(body.encode()).hexdigest(),
                        hashlib.sha256(f"{heading}\n{body}".encode()).hexdigest(),
                        src,
                        0,
                        0,
                        src,
                        src + 86400.0 if superseded[j] else None,
                        now,
                        "bench:superseded" if superseded[j] else None,
                    )
                )
            conn.executemany(
                "INSERT INTO chunks(id, path, corpus, start_line, end_line, heading, text, hash, embed_hash,"
                " source_date, evergreen, generated, validity_start, validity_end, ingestion_time, superseded_by)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.executemany(
                "INSERT INTO chunk_vectors(chunk_id, embedding) VALUES (?, ?)",
                ((start + j + 1, vecs[j].tobytes()) for j in range(stop - start)),
            )
            codes = pack_codes(vecs, centroid)
            conn.executemany(
                "INSERT INTO chunk_codes(chunk_id, code) VALUES (?, ?)",
                ((start + j + 1, codes[j].tobytes()) for j in range(stop - start)),
            )
            for f0 in range(start, stop, CHUNKS_PER_FILE):
                file_no = f0 // CHUNKS_PER_FILE
                day = _file_day(file_no)
                body = "\n\n".join(texts[f0 - start : min(stop, f0 + CHUNKS_PER_FILE) - start])
                data = f"# {day.isoformat()}\n\n{body}\n".encode()
                path = root / "memory" / f"{day.isoformat()}.md"
                path.write_bytes(data)
                st = path.stat()
                file_rows.append(
                    (
                        f"memory/{day.isoformat()}.md",
                        "memory",
                        hashlib.sha256(data).hexdigest(),
                        st.st_mtime,
                        st.st_size,
                        now,
                    )
                )
            if stop == n or (stop // BLOCK) % 10 == 0:
                log(f"    {stop:,}/{n:,} chunks ({time.monotonic() - t0:.0f} s)")
        conn.executemany(
            "INSERT INTO files(path, corpus, sha256, mtime, size, status, error, indexed_at)"
            " VALUES (?, ?, ?, ?, ?, 'indexed', NULL, ?)",
            file_rows,
        )
        t1 = time.monotonic()
        conn.execute("INSERT INTO chunks_fts(rowid, text, heading) SELECT id, text, heading FROM chunks")
        log(f"    FTS5 index built in {time.monotonic() - t1:.0f} s")
        # one paragraph per chunk is one retrieval unit per chunk (what the real indexer makes of
        # it), with the chunk's vector as its own
        conn.execute(
            "INSERT INTO units(id, chunk_id, start_line, end_line, heading, text, embed_hash)"
            " SELECT id, id, start_line, end_line, heading, text, embed_hash FROM chunks"
        )
        conn.execute(
            "INSERT INTO unit_vectors(unit_id, embedding) SELECT chunk_id, embedding FROM chunk_vectors"
        )
        idx.set_meta("embedder", idx.embedder_id(host.ctx.embedder))
        assert centroid is not None
        idx.set_meta(CENTROID_KEY, centroid.tobytes().hex())
        idx.set_meta("generation", uuid.uuid4().hex)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("ANALYZE")
    finally:
        host.close()


def _fill_units(root: Path, log: Callable[[str], None]) -> None:
    """A corpus built before retrieval units existed gets its units (one per chunk, the chunk's
    vector as its own) so searches read unit vectors as on a real index."""
    host = _host(root)
    try:
        conn = host.store.conn
        missing = conn.execute(
            "SELECT count(*) FROM chunks WHERE id NOT IN (SELECT chunk_id FROM units)"
        ).fetchone()[0]
        if not missing:
            return
        with host.store.lock:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO units(chunk_id, start_line, end_line, heading, text, embed_hash)"
                " SELECT id, start_line, end_line, heading, text, embed_hash FROM chunks"
                " WHERE id NOT IN (SELECT chunk_id FROM units)"
            )
            conn.execute(
                "INSERT INTO unit_vectors(unit_id, embedding) SELECT u.id, v.embedding FROM units u"
                " JOIN chunk_vectors v ON v.chunk_id = u.chunk_id"
                " WHERE u.id NOT IN (SELECT unit_id FROM unit_vectors)"
            )
            conn.execute("COMMIT")
        log(f"    added {missing:,} retrieval units to a corpus built before they existed")
    finally:
        host.close()


SENTENCES_PER_UNIT = 3  # LoCoMo's turns average 3.4 embedded sentences (units of one sentence: 0)


def _fill_sentences(root: Path, seed: int, log: Callable[[str], None]) -> None:
    """Units without sentence vectors get ``SENTENCES_PER_UNIT`` of them (their own vector plus
    noise, cosine ~0.9 to it, stored as float16 as the indexer stores them), so a search reads
    and scores sentence vectors as on a real index; the index is marked as holding them, so the
    benchmark's syncs never embed a million units' sentences."""
    from lifelong_plugins.recall.index import SENTENCES_KEY

    host = _host(root)
    try:
        conn = host.store.conn
        ids = [r[0] for r in conn.execute("SELECT unit_id FROM unit_vectors WHERE sentences IS NULL")]
        rng = np.random.default_rng(seed + 7)
        with host.store.write():
            for i in range(0, len(ids), 20000):
                part = ids[i : i + 20000]
                rows = conn.execute(
                    "SELECT unit_id, embedding FROM unit_vectors WHERE unit_id IN (SELECT value FROM json_each(?))",
                    [json.dumps(part)],
                ).fetchall()
                vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                dim = vecs.shape[1]
                noisy = vecs[:, None, :] + rng.normal(
                    0, 0.5 / np.sqrt(dim), (len(rows), SENTENCES_PER_UNIT, dim)
                )
                noisy /= np.linalg.norm(noisy, axis=2, keepdims=True)
                blobs = noisy.astype(np.float16)
                conn.executemany(
                    "UPDATE unit_vectors SET sentences = ? WHERE unit_id = ?",
                    [(blobs[j].tobytes(), rows[j][0]) for j in range(len(rows))],
                )
            conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, '1')", (SENTENCES_KEY,))
        if ids:
            log(f"    gave {len(ids):,} units {SENTENCES_PER_UNIT} sentence vectors each")
    finally:
        host.close()


def _fill_terms(root: Path, log: Callable[[str], None]) -> None:
    """Units without their stored terms (``scoring.encode_terms``) get them, as the indexer
    writes them."""
    from lifelong_plugins.recall.scoring import encode_terms

    host = _host(root)
    try:
        conn = host.store.conn
        rows = conn.execute("SELECT id, text FROM units WHERE terms IS NULL").fetchall()
        if not rows:
            return
        with host.store.lock:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "UPDATE units SET terms = ? WHERE id = ?", [(encode_terms(t), i) for i, t in rows]
            )
            conn.execute("COMMIT")
        log(f"    stored the terms of {len(rows):,} units")
    finally:
        host.close()


def _today_path(root: Path) -> Path:
    return root / "memory" / f"{TODAY.isoformat()}.md"


def _reset_today(root: Path) -> None:
    """Today's daily back to its initial content, synced by the real pipeline."""
    from lifelong_plugins.recall import service

    text = f"# {TODAY.isoformat()}\n\n" + "\n".join(TODAY_LINES) + "\n"
    path = _today_path(root)
    if not path.exists() or path.read_text("utf-8") != text:
        path.write_text(text, encoding="utf-8")
    host = _host(root)
    try:
        service.index_for(host.ctx).sync()
    finally:
        host.close()


def drop_page_cache(log: Callable[[str], None]) -> bool:
    """Write back and drop the OS page cache (Linux, as root); False when that is not allowed."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
        return True
    except OSError as exc:
        log(f"    page cache not dropped ({exc.strerror or exc}); the first pass reads what is cached")
        return False


def make_queries(n: int, seed: int, count: int) -> list[tuple[str, np.ndarray, int]]:
    """``count`` queries drawn from random chunks (regenerating only the blocks they fall in)."""
    rng = np.random.default_rng([seed, 6])
    text = ZipfText(seed)
    vectors = ClusteredVectors(n, seed)
    sources = sorted(int(x) for x in rng.choice(n, size=min(count, n), replace=False))
    by_block: dict[int, list[int]] = {}
    for s in sources:
        by_block.setdefault(s - s % BLOCK, []).append(s)
    out = []
    for start, members in sorted(by_block.items()):
        stop = min(n, start + BLOCK)
        words = text.chunk_words(np.random.default_rng([seed, 5, start]), stop - start)
        vecs = vectors.block(start, stop)
        for s in members:
            qrng = np.random.default_rng([seed, 7, s])
            out.append((text.query_text(qrng, words[s - start]), vectors.query(qrng, vecs[s - start]), s + 1))
    order = np.random.default_rng([seed, 8]).permutation(len(out))
    return [out[i] for i in order]


# ---------------------------------------------------------------------------------------------
# Measuring


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "n": 0}
    arr = np.asarray(values, dtype=np.float64)
    return {
        "p50": round(float(np.percentile(arr, 50)), 2),
        "p95": round(float(np.percentile(arr, 95)), 2),
        "mean": round(float(arr.mean()), 2),
        "n": len(values),
    }


def exact_top_k(corpus_n: int, seed: int, queries: np.ndarray, k: int = 10) -> np.ndarray:
    """Exact cosine top-k chunk ids (1-based) over every vector, streaming the blocks."""
    vectors = ClusteredVectors(corpus_n, seed)
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, corpus_n, BLOCK):
        stop = min(corpus_n, start + BLOCK)
        sims = vectors.block(start, stop) @ queries.T  # (b, q)
        kk = min(k, stop - start)
        part = np.argpartition(-sims, kk - 1, axis=0)[:kk]  # (kk, q)
        cand_s = np.take_along_axis(sims, part, axis=0).T
        cand_i = part.T + start + 1
        all_s = np.concatenate([best_s, cand_s], axis=1)
        all_i = np.concatenate([best_i, cand_i], axis=1)
        top = np.argsort(-all_s, axis=1)[:, :k]
        best_s = np.take_along_axis(all_s, top, axis=1)
        best_i = np.take_along_axis(all_i, top, axis=1)
    return best_i


def stress_vector_recall(
    n: int,
    seed: int,
    n_queries: int,
    pools: Sequence[int],
    shortlists: Sequence[tuple[int, int]] = (),
    *,
    noise: float = 0.45,
) -> dict[str, Any]:
    """The vector leg's algorithm (the plugin's ``pack_codes`` + ``CodeMatrix.nearest`` coarse
    pass, exact re-rank of the pool) on a harder distribution: flat topics of ~2,000 chunks with
    no sub-topic structure, so the true top 10 differ from the rest of their topic only by noise.
    In memory, no index: recall@10 against exact search for each Hamming ``pool`` size, and for
    each (coarse, pool) of ``shortlists`` (the plugin's ``CodeMatrix.shortlist``)."""
    from lifelong_plugins.recall.vectors import CodeMatrix, pack_codes

    gen = ClusteredVectors(n, seed + 1, sub=0.0, noise=noise)
    vecs = np.vstack([gen.block(s, min(n, s + BLOCK)) for s in range(0, n, BLOCK)])
    centroid = vecs[:CENTROID_SAMPLE].mean(axis=0).astype(np.float32)
    codes = pack_codes(vecs, centroid)
    matrix = CodeMatrix("stress", 0, np.arange(n, dtype=np.int64), np.ascontiguousarray(codes.T))
    del codes
    rng = np.random.default_rng([seed, 9])
    sources = rng.choice(n, size=min(n_queries, n), replace=False)
    queries = np.stack([gen.query(rng, vecs[s]) for s in sources])
    exact = []
    for q0 in range(0, len(queries), 50):
        sims = vecs @ queries[q0 : q0 + 50].T
        exact.extend(set(np.argpartition(-sims[:, j], 10)[:10].tolist()) for j in range(sims.shape[1]))
        del sims
    out: dict[str, Any] = {
        "distribution": f"flat topics, noise {noise}",
        "queries": len(queries),
        "recall@10_by_pool": {},
    }

    def recall(shortlist: Callable[[np.ndarray], np.ndarray]) -> float:
        recalls = []
        for q, ex in zip(queries, exact, strict=True):
            ids = shortlist(q)
            top = ids[np.argsort(-(vecs[ids] @ q))[:10]]
            recalls.append(len(ex & set(top.tolist())) / 10)
        return round(float(np.mean(recalls)), 4)

    for pool in pools:  # Hamming alone, then exact re-rank of the pool
        out["recall@10_by_pool"][str(pool)] = recall(
            lambda q, pool=pool: matrix.nearest(pack_codes(q[None, :], centroid)[0], pool)
        )
    out["recall@10_shortlist"] = {}
    for coarse, pool in shortlists:  # Hamming coarse pool, asymmetric score, exact re-rank of pool
        out["recall@10_shortlist"][f"{coarse}->{pool}"] = recall(
            lambda q, coarse=coarse, pool=pool: matrix.shortlist(
                pack_codes(q[None, :], centroid)[0], q - centroid, coarse, pool
            )
        )
    return out


def _time_searches(searcher: Any, requests: list[Any], reps: int) -> tuple[list[float], list[dict[str, Any]]]:
    times, legs = [], []
    for _ in range(reps):
        for req in requests:
            t0 = time.perf_counter()
            outcome = searcher.search(req)
            times.append((time.perf_counter() - t0) * 1000)
            legs.append({**outcome.legs, "result_ids": [c.chunk_id for c in outcome.results]})
    return times, legs


def _legs_ms(lg: dict[str, Any]) -> float:
    """Time spent in the two legs: the slower of them when they ran in parallel, else the sum."""
    vector = lg.get("vector_ms", 0.0) + lg.get("embed_ms", 0.0)
    return max(lg["fts_ms"], vector) if lg.get("parallel_legs") else lg["fts_ms"] + vector


def _source_rate(queries: list[tuple[str, np.ndarray, int]], legs: list[dict[str, Any]]) -> float:
    """Share of queries whose source chunk is among the results (a quality guard for the speed
    settings: a faster leg that loses the answer shows here). Sources with a closed validity
    interval (5%) cannot appear in mode current, so the ceiling is about 0.95."""
    hits = [src in lg["result_ids"] for (_, _, src), lg in zip(queries, legs, strict=False)]
    return round(float(np.mean(hits)), 4) if hits else float("nan")


def _leg_source_rate(searcher: Any, queries: list[tuple[str, np.ndarray, int]]) -> float:
    """Share of queries whose source chunk is in the lexical leg's candidate pool (the
    ``max(candidate_pool, max_results)`` best by bm25, mode all)."""
    cfg = searcher.config
    pool = max(cfg["candidate_pool"], cfg["max_results"])
    from lifelong.contracts import SearchRequest

    hits = []
    for q, _, src in queries:
        req = SearchRequest(q)
        hits.append(src in searcher.fts_leg(req, "1", [], pool))
    return round(float(np.mean(hits)), 4) if hits else float("nan")


def _profile_top(searcher: Any, requests: list[Any], limit: int = 10) -> list[dict[str, Any]]:
    prof = cProfile.Profile()
    prof.enable()
    for req in requests:
        searcher.search(req)
    prof.disable()
    stats = pstats.Stats(prof, stream=io.StringIO())
    rows = []
    total = sum(v[3] for k, v in stats.stats.items() if k[2] == "search" and "recall" in k[0]) or None  # type: ignore[attr-defined]
    for (file, line, func), (_cc, nc, tt, ct, _callers) in sorted(
        stats.stats.items(),  # type: ignore[attr-defined]
        key=lambda kv: -kv[1][3],
    ):
        if "plugins/recall" not in file and "lifelong_plugins" not in file and "{" not in func:
            continue
        rows.append(
            {
                "function": f"{Path(file).name}:{line}({func})",
                "calls": nc,
                "cumulative_ms_per_search": round(ct * 1000 / len(requests), 2),
                "own_ms_per_search": round(tt * 1000 / len(requests), 2),
                "share_of_search": round(ct / total, 3) if total else None,
            }
        )
        if len(rows) >= limit:
            break
    return rows


def measure(
    corpus: Corpus,
    *,
    reps: int,
    log: Callable[[str], None],
    profile: bool = False,
    reindex_reps: int = REINDEX_REPS,
    drop_caches: bool = False,
) -> dict[str, Any]:
    from lifelong_plugins.recall import service
    from lifelong_plugins.recall.search import Searcher

    from lifelong import clock
    from lifelong.contracts import SearchRequest

    out: dict[str, Any] = {
        "chunks": corpus.n,
        "files": corpus.files,
        "db_mb": round(corpus.db_bytes / 2**20, 1),
        "build_s": round(corpus.build_s, 1),
        "reused_cache": corpus.reused,
    }
    queries = corpus.queries
    with clock.pinned(NOW):
        # hybrid, mode current ---------------------------------------------------------------
        host = _host(corpus.root)
        try:
            idx = service.index_for(host.ctx)
            searcher = Searcher(idx)
            cfg = host.ctx.config("recall")  # the plugin's defaults, as the memory_search tool uses them
            shape = {"max_results": cfg["max_results"], "min_score": cfg["min_score"], "record": False}
            requests = [SearchRequest(q, query_vector=v, **shape) for q, v, _ in queries]
            if drop_caches:
                out["page_cache_dropped"] = drop_page_cache(log)
            t0 = time.perf_counter()
            searcher.search(requests[0])
            out["cold_first_search_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            times, legs = _time_searches(searcher, requests, reps)
            out["hybrid"] = percentiles(times)
            if reps > 1:  # the first pass reads vectors and postings from disk into the page cache
                out["hybrid_warm"] = percentiles(times[len(requests) :])
                out["hybrid_first_pass"] = percentiles(times[: len(requests)])
            out["fts_leg"] = percentiles([lg["fts_ms"] for lg in legs])
            out["vector_leg"] = percentiles([lg["vector_ms"] for lg in legs if "vector_ms" in lg])
            out["rest_of_pipeline"] = percentiles(
                [t - _legs_ms(lg) for t, lg in zip(times, legs, strict=True)]
            )
            out["candidates"] = percentiles([lg["fts_hits"] + lg["vector_hits"] for lg in legs])
            out["source_in_results"] = _source_rate(queries, legs)
            # the speaker probe (speaker_pronoun) runs before the query is embedded, so the searches
            # above (query vector given) skip it: timed here on its own, per query
            probe = []
            for q, _v, _ in queries * reps:
                t0 = time.perf_counter()
                searcher.named_speakers(q)
                probe.append((time.perf_counter() - t0) * 1000)
            out["speaker_probe"] = percentiles(probe)
            log(f"    hybrid p50 {out['hybrid']['p50']} ms p95 {out['hybrid']['p95']} ms")
            # validity filter: mode all (no predicate) vs current ---------------------------------
            all_requests = [SearchRequest(q, query_vector=v, mode="all", **shape) for q, v, _ in queries]
            t_all, legs_all = _time_searches(searcher, all_requests, reps)
            out["validity"] = {
                "current": out["hybrid"],
                "all": percentiles(t_all),
                "overhead_p50_ms": round(out["hybrid"]["p50"] - percentiles(t_all)["p50"], 2),
                "overhead_p95_ms": round(out["hybrid"]["p95"] - percentiles(t_all)["p95"], 2),
                "legs_current_p50_ms": round(
                    float(np.median([lg["fts_ms"] + lg.get("vector_ms", 0.0) for lg in legs])), 2
                ),
                "legs_all_p50_ms": round(
                    float(np.median([lg["fts_ms"] + lg.get("vector_ms", 0.0) for lg in legs_all])), 2
                ),
                "superseded_fraction": SUPERSEDED_FRACTION,
            }
            # vector recall@10 vs exact -------------------------------------------------------
            qv = np.stack([v for _, v, _ in queries])
            exact = exact_top_k(corpus.n, corpus.seed, qv, 10)
            got = []
            for v in qv:
                leg = searcher.vector_leg(v, "1", [], 10)
                got.append(set(leg))
            recalls = [len(g & {int(x) for x in e}) / 10 for g, e in zip(got, exact, strict=True)]
            out["vector_recall@10"] = round(float(np.mean(recalls)), 4)
            out["vector_recall@10_min"] = round(float(np.min(recalls)), 2)
            # auto-sync check -------------------------------------------------------------------
            checks = []
            for _ in range(max(5, reps * 5)):
                t0 = time.perf_counter()
                idx.needs_sync()
                checks.append((time.perf_counter() - t0) * 1000)
            out["auto_sync_check"] = percentiles(checks)
            rcfg = host.ctx.config("recall")
            out["vector_recall_stress"] = stress_vector_recall(
                corpus.n,
                corpus.seed,
                min(100, len(queries)),
                sorted({rcfg["vector_pool"], 400, 1000, 2000}),
                sorted({(rcfg["coarse_pool"], rcfg["vector_pool"]), (4000, 400), (8000, 1000)}),
            )
            log(
                f"    vector recall@10 {out['vector_recall@10']}; stress {out['vector_recall_stress']['recall@10_by_pool']}"
                f" shortlist {out['vector_recall_stress']['recall@10_shortlist']}"
            )
            if profile:
                out["profile_hybrid"] = _profile_top(searcher, requests[: min(50, len(requests))])
        finally:
            host.close()
        # FTS only ------------------------------------------------------------------------------
        host = _host(corpus.root, {"embedding": {"provider": "none"}})
        try:
            searcher = Searcher(service.index_for(host.ctx))
            requests = [SearchRequest(q, **shape) for q, _, _ in queries]
            t_fts, legs_fts = _time_searches(searcher, requests, reps)
            out["fts_only"] = percentiles(t_fts)
            out["fts_only_source_in_results"] = _source_rate(queries, legs_fts)
            out["fts_leg_source_in_pool"] = _leg_source_rate(searcher, queries)
        finally:
            host.close()
        # the lexical leg without the quorum (plain OR of every kept term), for comparison ------
        host = _host(
            corpus.root, {"embedding": {"provider": "none"}, "plugins": {"recall": {"fts_max_postings": 0}}}
        )
        try:
            searcher = Searcher(service.index_for(host.ctx))
            _, legs_or = _time_searches(searcher, requests, reps)
            out["fts_leg_plain_or"] = percentiles([lg["fts_ms"] for lg in legs_or])
            out["fts_leg_plain_or_source_in_pool"] = _leg_source_rate(searcher, queries)
        finally:
            host.close()
        out["reindex"] = measure_reindex(corpus, reps=reindex_reps, log=log)
    return out


def measure_reindex(corpus: Corpus, *, reps: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Append one line to today's daily, sync (as ``lifelong index``), then search once."""
    from lifelong_plugins.recall import service

    from lifelong.contracts import SearchRequest

    host = _host(corpus.root)
    sync_ms, embed_ms, embedded, first_search_ms, tool_ms = [], [], [], [], []
    try:
        idx = service.index_for(host.ctx)
        embedder = host.ctx.embedder
        embedder.embed_query("warm up the model")  # model load and first passage call are excluded
        embedder.embed_passages(["\n".join(TODAY_LINES * 2)])
        plain_embed = embedder.embed_passages
        spent: list[float] = []

        def timed_embed(texts: list[str]) -> Any:  # measures the embedding share of a sync
            t = time.perf_counter()
            try:
                return plain_embed(texts)
            finally:
                spent.append((time.perf_counter() - t) * 1000)

        embedder.embed_passages = timed_embed
        q, v, _ = corpus.queries[0]
        service.run_search(host.ctx, SearchRequest(q, query_vector=v, record=False))
        path = _today_path(corpus.root)
        nonce = uuid.uuid4().hex[:6]  # new text every run: each sync really embeds (no cache hit)
        for i in range(reps):
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"- 17:{i:02d} appended note {i} ({nonce}): call the venue about the projector\n")
            spent.clear()
            t0 = time.perf_counter()
            report = idx.sync()
            sync_ms.append((time.perf_counter() - t0) * 1000)
            embed_ms.append(sum(spent))
            embedded.append(report.embedded)
            t0 = time.perf_counter()
            service.run_search(host.ctx, SearchRequest(q, query_vector=v, record=False), sync=False)
            first_search_ms.append((time.perf_counter() - t0) * 1000)
            # the tool path: auto-sync (stat check + sync) then search, after another append
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"- 17:{i:02d} second note {i} ({nonce}): the projector needs HDMI\n")
            t0 = time.perf_counter()
            service.run_search(host.ctx, SearchRequest(q, query_vector=v, record=False))
            tool_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        host.close()
        _reset_today(corpus.root)
    out = {
        "sync_after_append": percentiles(sync_ms),
        "embedding_share": percentiles(embed_ms),
        "sync_without_embedding": percentiles([a - b for a, b in zip(sync_ms, embed_ms, strict=True)]),
        "embedded_chunks_per_sync": sorted(set(embedded)),
        "first_search_after_sync": percentiles(first_search_ms),
        "append_then_tool_search": percentiles(tool_ms),
    }
    log(
        f"    reindex after one appended line: p50 {out['sync_after_append']['p50']} ms; "
        f"first search after it p50 {out['first_search_after_sync']['p50']} ms"
    )
    return out


def run_bench(
    sizes: Sequence[int],
    *,
    cache_dir: Path,
    seed: int,
    n_queries: int,
    reps: int,
    reindex_reps: int = REINDEX_REPS,
    drop_caches: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    results: dict[str, Any] = {
        "sizes": list(sizes),
        "seed": seed,
        "queries": n_queries,
        "reps": reps,
        "reindex_reps": reindex_reps,
        "drop_caches": drop_caches,
        "targets": TARGETS,
        "by_size": {},
    }
    for n in sizes:
        log(f"  corpus of {n:,} chunks")
        corpus = build_corpus(cache_dir / "bench" / f"n{n}-s{seed}", n, seed, n_queries, log)
        log(
            f"    {'reused' if corpus.reused else 'built'} in {corpus.build_s:.0f} s ({corpus.db_bytes / 2**20:.0f} MB)"
        )
        results["by_size"][str(n)] = measure(
            corpus,
            reps=reps,
            log=log,
            profile=(n == max(sizes)),
            reindex_reps=reindex_reps,
            drop_caches=drop_caches,
        )
    results["verdict"] = verdict(results)
    return results


def verdict(results: dict[str, Any]) -> dict[str, Any]:
    by = results["by_size"]
    out: dict[str, Any] = {}
    # the targets over every repetition (the first pass reads a cold OS page cache), and apart
    # over the warm repetitions alone: which one a deployment sees depends on whether its page
    # cache keeps the index (a VM that reclaims idle cache shows the first)
    for size, name in (("100000", "p95_ms_at_100k"), ("1000000", "p95_ms_at_1m")):
        if size in by:
            out[name] = {"value": by[size]["hybrid"]["p95"], "target": TARGETS[name]}
            if "hybrid_warm" in by[size]:
                out[f"{name}_warm"] = {"value": by[size]["hybrid_warm"]["p95"], "target": TARGETS[name]}
    out["vector_recall_at_10"] = {
        "value": min(v["vector_recall@10"] for v in by.values()),
        "target": TARGETS["vector_recall_at_10"],
        "higher_is_better": True,
    }
    out["reindex_ms"] = {
        "value": max(v["reindex"]["sync_after_append"]["p95"] for v in by.values()),
        "target": TARGETS["reindex_ms"],
    }
    for v in out.values():
        v["met"] = v["value"] >= v["target"] if v.get("higher_is_better") else v["value"] <= v["target"]
    return out


def print_results(results: dict[str, Any]) -> None:
    print(
        f"{'chunks':>9} {'hybrid p50/p95':>16} {'fts-only p50/p95':>18} {'vector leg p50/p95':>20} "
        f"{'fts leg p50/p95':>17} {'validity +p50':>14} {'recall@10':>10} {'reindex p50/p95':>17} "
        f"{'speaker probe p50/p95':>22}"
    )
    for n, r in results["by_size"].items():
        print(
            f"{int(n):>9,} {r['hybrid']['p50']:>7.1f}/{r['hybrid']['p95']:<8.1f} "
            f"{r['fts_only']['p50']:>8.1f}/{r['fts_only']['p95']:<9.1f} "
            f"{r['vector_leg']['p50']:>9.1f}/{r['vector_leg']['p95']:<10.1f} "
            f"{r['fts_leg']['p50']:>8.1f}/{r['fts_leg']['p95']:<8.1f} "
            f"{r['validity']['overhead_p50_ms']:>14.2f} {r['vector_recall@10']:>10.3f} "
            f"{r['reindex']['sync_after_append']['p50']:>8.1f}/{r['reindex']['sync_after_append']['p95']:<8.1f} "
            f"{r['speaker_probe']['p50']:>11.2f}/{r['speaker_probe']['p95']:<10.2f}"
        )
    for name, v in results["verdict"].items():
        print(f"  {name}: {v['value']} (target {v['target']}) {'met' if v['met'] else 'MISSED'}")


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    from .harness import DEFAULT_CACHE, SEED

    parser = argparse.ArgumentParser(
        prog="python -m evals.bench_search", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated chunk counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--reindex-reps", type=int, default=REINDEX_REPS, help="appends measured per size (each one synced)"
    )
    parser.add_argument(
        "--drop-caches",
        action="store_true",
        help="empty the OS page cache before each size's first pass, so it is read cold (Linux, root)",
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s]
    results = run_bench(
        sizes,
        cache_dir=args.cache,
        seed=args.seed,
        n_queries=args.queries,
        reps=args.reps,
        reindex_reps=args.reindex_reps,
        drop_caches=args.drop_caches,
    )
    print_results(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
