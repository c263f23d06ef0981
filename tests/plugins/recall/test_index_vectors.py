"""The index embeds outside its write transaction, stores vectors in batches, resumes a killed
sync, and bounds the work one enormous chunk can cost (issue 11 item 4, issue 14 items 5-6)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import sqlean
from lifelong_plugins.recall import service, vector_store
from lifelong_plugins.recall.vector_store import EMBED_MAX_CHARS, PENDING_KEY

from lifelong import clock

NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=clock.zone("Europe/Berlin"))


def dailies(n: int, lines: int = 3) -> dict[str, str]:
    files = {"MEMORY.md": "# MEMORY\n\n- Maya founded Tidewater Labs.\n"}
    for d in range(n):
        day = dt.date(2026, 1, 1) + dt.timedelta(days=d)
        body = "".join(
            f"- Note {d}.{i}: the {['harbour', 'kiln', 'orchard'][i % 3]} plan item {d * 7 + i}.\n"
            for i in range(lines)
        )
        files[f"memory/{day.isoformat()}.md"] = f"# {day.isoformat()}\n\n{body}"
    return files


@dataclass
class Instrumented:
    """The real embedder, watched: on each call it records whether another connection can take
    the write lock at once, and can stop the process (a kill) after some calls."""

    inner: Any
    db_path: str
    stop_after: int | None = None
    calls: int = 0
    writable: list[bool] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dim(self) -> int:
        return self.inner.dim

    def status_warning(self) -> str | None:
        return None

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            raise KeyboardInterrupt("killed mid-index")
        other = sqlean.connect(self.db_path, timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            self.writable.append(True)
        except sqlean.OperationalError:
            self.writable.append(False)
        finally:
            other.close()
        self.lengths.extend(len(t) for t in texts)
        return self.inner.embed_passages(texts)


def watch(host: Any, **kw: Any) -> Instrumented:
    inst = Instrumented(host.embedder, str(host.store.path), **kw)
    host._embedder, host._embedder_made = inst, True
    return inst


def counts(host: Any) -> tuple[int, int, int]:
    conn = host.store.conn
    return (
        conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
        conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0],
        conn.execute(
            "SELECT count(*) FROM units WHERE id NOT IN (SELECT unit_id FROM unit_vectors)"
        ).fetchone()[0],
    )


def test_the_model_runs_with_no_write_transaction_open(make_host) -> None:
    host = make_host(dailies(24))
    emb = watch(host)
    with clock.pinned(NOW):
        report = service.index_for(host.ctx).sync()
    assert emb.calls >= 2 and all(emb.writable), emb.writable
    chunks, vectors, units_without = counts(host)
    assert report.vectors == "ok" and chunks == vectors and units_without == 0
    assert service.index_for(host.ctx).meta(PENDING_KEY) is None


def test_a_killed_sync_keeps_its_batches_and_the_next_one_finishes(make_host, monkeypatch) -> None:
    monkeypatch.setattr(vector_store, "BATCH_TEXTS", 16)  # the 41 chunks take three batches
    host = make_host(dailies(40))
    emb = watch(host, stop_after=1)
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW), pytest.raises(KeyboardInterrupt):
        idx.sync()
    chunks, vectors, _ = counts(host)
    assert 0 < vectors < chunks  # one batch committed, the rest lost with the "process"
    assert idx.meta(PENDING_KEY) is not None and idx.pending_vectors() == chunks - vectors
    assert idx.needs_sync(backlog=True) and not idx.needs_sync()  # a search does not take it on
    # a search after an edit embeds only its own chunk and keeps the backlog's mark
    emb.stop_after = None
    with open(host.workspace.root / "memory/2026-01-05.md", "a") as fh:
        fh.write("- Appended: the quokka survey moved to June.\n")
    with clock.pinned(NOW):
        hits = service.run_search(host.ctx, service.make_request(host.ctx, query="quokka survey")).results
    assert hits and hits[0].path == "memory/2026-01-05.md"
    assert idx.meta(PENDING_KEY) is not None and idx.pending_vectors() > 0
    chunks, _, _ = counts(host)
    done_before = emb.calls
    with clock.pinned(NOW):
        report = idx.sync()
    chunks2, vectors2, units_without = counts(host)
    assert chunks2 == chunks and vectors2 == chunks and units_without == 0
    assert not report.plan.changed and report.vectors == "ok"
    assert emb.calls > done_before
    assert idx.meta(PENDING_KEY) is None and not idx.needs_sync()
    assert idx.pending_vectors() == 0


def test_an_embedding_budget_pauses_and_status_says_what_waits(make_host, monkeypatch) -> None:
    monkeypatch.setattr(vector_store, "BATCH_TEXTS", 16)
    host = make_host(dailies(40))
    watch(host)
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        report = idx.sync(embed_budget_s=0)
    assert report.vectors.startswith("partial:")
    left = idx.pending_vectors()
    assert left > 0
    recall = next(r for r in host.call("status_report", ctx=host.ctx) if r and r.plugin == "recall")
    assert recall.data["vectors_pending"] == left
    assert any("wait for vectors" in s for s in recall.summary)
    with clock.pinned(NOW):
        idx.sync()
    assert idx.pending_vectors() == 0


def test_every_chunk_gets_its_vector_before_any_unit_and_units_before_sentences(make_host) -> None:
    # two sentences a line: each unit also has sentence vectors
    files = {
        f"memory/2026-01-{d:02d}.md": f"# 2026-01-{d:02d}\n\n"
        + "".join(f"- Item {d}.{i} went to the kiln. The harbour plan {d * 7 + i} waits.\n" for i in range(3))
        for d in range(1, 21)
    }
    host = make_host(files)
    emb = watch(host)
    seen: list[tuple[int, int, int]] = []
    inner = emb.inner

    class Observed:  # what another connection sees before each call into the model
        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

        def embed_passages(self, texts: list[str]) -> np.ndarray:
            other = sqlean.connect(str(host.store.path))
            seen.append(
                (
                    other.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0],
                    other.execute("SELECT count(*) FROM unit_vectors").fetchone()[0],
                    other.execute("SELECT count(*) FROM unit_vectors WHERE length(sentences) > 0").fetchone()[
                        0
                    ],
                )
            )
            other.close()
            return inner.embed_passages(texts)

    emb.inner = Observed()
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        report = idx.sync()
    chunks, vectors, units_without = counts(host)
    assert report.vectors == "ok" and vectors == chunks and units_without == 0
    assert idx.pending_sentences() == 0 and report.sentences_embedded == 120  # 20 days x 3 lines x 2
    assert set(report.embed_seconds) == {"chunks", "units", "sentences"}
    # the first call embeds chunks; no unit vector is stored before every chunk has one, and no
    # sentence vector before every unit has its own
    assert seen[0] == (0, 0, 0)
    units = host.store.conn.execute("SELECT count(*) FROM units").fetchone()[0]
    assert all(u == 0 or c == chunks for c, u, _ in seen)
    assert all(s == 0 or u == units for _, u, s in seen)
    assert any(c == chunks and u == 0 for c, u, _ in seen) and any(u == units and s == 0 for _, u, s in seen)


def test_a_pass_paused_after_the_chunks_leaves_units_to_the_next_index(make_host) -> None:
    host = make_host(dailies(20))
    watch(host)
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        report = idx.sync(embed_budget_s=0)  # stops after the first batch: all 21 chunks
    chunks, vectors, units_without = counts(host)
    assert vectors == chunks and units_without > 0
    assert report.vectors.startswith("partial: every chunk has its vector")
    assert idx.pending_vectors() == 0 and idx.pending_units() == units_without
    recall = next(r for r in host.call("status_report", ctx=host.ctx) if r and r.plugin == "recall")
    assert recall.data["units_pending"] == units_without
    assert any("unit(s) wait for their own vectors" in s for s in recall.summary)
    with clock.pinned(NOW):  # the vector leg already serves every chunk
        hits = service.run_search(
            host.ctx, service.make_request(host.ctx, query="orchard plan item 58")
        ).results
    assert hits and hits[0].path == "memory/2026-01-09.md"
    with clock.pinned(NOW):
        report = idx.sync()
    assert report.vectors == "ok" and counts(host)[2] == 0 and idx.pending_units() == 0


def test_one_enormous_chunk_is_embedded_from_a_bounded_text(make_host) -> None:
    # a long chunk of one very long word: the chunker cannot cut it below the model's limit
    host = make_host({"memory/2026-03-01.md": "# 2026-03-01\n\n" + "x" * 60_000 + "\n"})
    emb = watch(host)
    with clock.pinned(NOW):
        report = service.index_for(host.ctx).sync()
    assert report.vectors == "ok" and emb.lengths and max(emb.lengths) <= EMBED_MAX_CHARS
    chunks, vectors, _ = counts(host)
    # one line of 60,000 characters is over embed_max_line_chars: its first chunk is embedded, the
    # rest indexed for words only (issue 40 item 5)
    lexical = host.store.conn.execute("SELECT count(*) FROM chunks WHERE lexical_only").fetchone()[0]
    assert vectors == 1 and lexical == chunks - 1


def test_a_file_rewritten_while_embedding_gets_no_stale_vector(make_host) -> None:
    host = make_host(dailies(3))
    idx = service.index_for(host.ctx)
    inner = host.embedder
    path = host.workspace.root / "memory/2026-01-01.md"

    class Rewriting(Instrumented):
        def embed_passages(self, texts: list[str]) -> np.ndarray:
            if self.calls == 0:  # another process re-indexes the file between the two steps
                path.write_text("# 2026-01-01\n\n- Rewritten: the kiln moved to Leeds.\n")
                other = service.index_for(host.ctx)
                other.sync_if_changed()  # e.g. a search's auto-sync (never waits for our embedding)
            return super().embed_passages(texts)

    emb = Rewriting(inner, str(host.store.path))
    host._embedder, host._embedder_made = emb, True
    with clock.pinned(NOW):
        idx.sync()
    conn = host.store.conn
    orphans = conn.execute("SELECT count(*) FROM chunk_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)")
    assert orphans.fetchone()[0] == 0
    with clock.pinned(NOW):
        idx.sync()
    chunks, vectors, _ = counts(host)
    assert chunks == vectors


def test_a_forced_reindex_keeps_the_vector_leg_and_reuses_the_cache(make_host, monkeypatch) -> None:
    from lifelong_plugins.recall import index as index_module

    monkeypatch.setattr(index_module, "TEXT_BATCH_S", 0.0)  # one file per text transaction
    host = make_host(dailies(30))
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        idx.sync()
    seen: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "chunk":  # between text batches, as another process would see the index
            other = sqlean.connect(str(host.store.path))
            seen.append(other.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0])
            other.close()

    with clock.pinned(NOW):
        report = idx.sync(force=True, progress=progress)
    chunks, vectors, units_without = counts(host)
    assert seen and min(seen) > 0  # never a moment without vectors
    assert report.embedded == 0 and report.cache_hits == chunks == vectors and units_without == 0
    orphans = host.store.conn.execute(
        "SELECT count(*) FROM chunk_vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)"
    )
    assert orphans.fetchone()[0] == 0
