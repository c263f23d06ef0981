"""The order of an embedding pass (issue 42): chunks, then units, then sentences (pure)."""

from __future__ import annotations

from lifelong_plugins.recall import vector_store
from lifelong_plugins.recall.vector_store import PendingChunk, PendingUnit, plan_batches, text_hash


def chunk(i: int) -> PendingChunk:
    return PendingChunk(i, text_hash(f"chunk {i}"), f"chunk {i}")


def unit(i: int, chunk_id: int, sentences: tuple[str, ...] | None = ()) -> PendingUnit:
    return PendingUnit(i, chunk_id, text_hash(f"unit {i}"), f"unit {i}", sentences)


def test_chunks_come_first_then_units_then_the_sentences_still_due(monkeypatch) -> None:
    monkeypatch.setattr(vector_store, "BATCH_TEXTS", 2)
    chunks = [chunk(1), chunk(2), chunk(3)]
    units = [unit(10, 1, ("a one.", "a two.")), unit(11, 1), unit(20, 2, ("b one.", "b two.")), unit(30, 3)]
    cached = {text_hash("b one."), text_hash("b two.")}  # unit 20's sentences are known already
    batches = plan_batches(chunks, units, {}, cached)
    kinds = [k for k, _, _ in batches]
    assert kinds == ["chunks", "chunks", "units", "units", "sentences"]
    assert [c.id for k, cs, _ in batches if k == "chunks" for c in cs] == [1, 2, 3]
    assert [u.id for k, _, us in batches if k == "units" for u in us] == [10, 11, 20, 30]
    assert [[u.id for u in us] for k, _, us in batches if k == "sentences"] == [[10]]
    assert all(not cs for k, cs, _ in batches if k != "chunks")


def test_cached_texts_fill_no_batch_and_a_mean_chunk_goes_with_its_units(monkeypatch) -> None:
    monkeypatch.setattr(vector_store, "BATCH_TEXTS", 2)
    chunks = [chunk(1), chunk(2), chunk(3)]
    units = [unit(10, 2), unit(11, 2), unit(20, 3)]
    cached = {chunks[0].embed_hash, chunks[2].embed_hash}
    # chunk 2's vector is its units' mean (chunk_vectors_from_units): stored with them
    batches = plan_batches(chunks, units, {2: [10, 11]}, cached)
    assert batches[0] == ("chunks", [chunks[0], chunks[2]], [])  # one text to embed: one batch
    assert batches[1] == ("units", [chunks[1]], units[:2])
    assert batches[2] == ("units", [], units[2:])
    assert len(batches) == 3
