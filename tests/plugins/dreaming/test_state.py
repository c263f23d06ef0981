"""The candidate pool is built in memory without a database (snippets -> candidates -> signals),
and :mod:`state` saves and loads it on a real SQLite store, in one transaction."""

from __future__ import annotations

import pytest
from lifelong_plugins.dreaming import state
from lifelong_plugins.dreaming.candidates import CandidatePool, Signal
from lifelong_plugins.dreaming.snippets import parse_snippets

DAILY = """# Tue 3 Mar

- Landlord is Pieter Brandt; reach him on WhatsApp
- Rent for the flat: 1,250 EUR a month
- Landlord: Pieter Brandt, WhatsApp only
"""


def pool_of(text: str, path: str, run_id: str) -> CandidatePool:
    """A pool staged from one daily, with one recall signal (no database)."""
    pool = CandidatePool(0.6)
    keys = [pool.resolve(s, 1000.0, run_id) for s in parse_snippets(text, path)]
    pool.new_signals[(7, keys[0])] = Signal(7, keys[0], 1100.0, "2026-03-03", "q" * 32, 0.71, "tool", 1.5)
    return pool


def test_a_pool_is_built_in_memory_and_saved_and_loaded_as_it_was(dream_host) -> None:
    pool = pool_of(DAILY, "memory/2026-03-03.md", "run-1")
    # the restated landlord line is the first one's candidate (a near-duplicate), not a new one
    assert (len(pool.candidates), pool.merged, len(pool.occurrences)) == (2, 1, 3)
    staged = {k: c.row() for k, c in pool.candidates.items()}
    host = dream_host()
    state.save_pool(host.store, pool, "run-1", meta={"event_watermark": "1100.0"}, item_hashes={"abc": "f00"})

    loaded = state.load_pool(host.store, 0.6)
    assert {k: c.row() for k, c in loaded.candidates.items()} == staged
    assert loaded.occurrences == pool.occurrences
    assert loaded.alias == pool.alias
    # a snippet resolves to the same candidate in the loaded pool (its near-duplicate index is rebuilt)
    for s in parse_snippets(DAILY, "memory/2026-03-03.md"):
        assert loaded.lookup(s) == pool.lookup(s)
    assert state.read_meta(host.store, "event_watermark") == "1100.0"
    assert state.written_hashes(host.store) == {"abc": "f00"}
    assert [tuple(r) for r in state.stored_signals(host.store, list(pool.candidates))] == [
        (s.key, s.ts, s.day, s.query_hash, s.score, s.event_id) for s in pool.new_signals.values()
    ]
    log = state.status_log_of(host.store, next(iter(pool.candidates)))
    assert log == [{"run_id": "run-1", "old_status": None, "new_status": "staged"}]


def test_a_save_that_fails_writes_nothing(dream_host) -> None:
    host = dream_host()
    pool = pool_of(DAILY, "memory/2026-03-03.md", "run-1")
    broken = next(iter(pool.candidates.values()))
    broken.text = None  # type: ignore[assignment]  # NOT NULL: the insert fails after meta and items
    with pytest.raises(Exception, match="NOT NULL constraint failed"):
        state.save_pool(
            host.store, pool, "run-1", meta={"event_watermark": "1100.0"}, item_hashes={"abc": "f00"}
        )
    assert state.read_meta(host.store, "event_watermark") is None
    assert state.written_hashes(host.store) == {}
    assert state.load_pool(host.store, 0.6).candidates == {}
