"""Sentence vectors: a unit of two sentences or more is also embedded sentence by sentence, and a
search scores it by its own vector or its best sentence, whichever is closer to the query (issue
12: one matching sentence of a long turn is not diluted by the rest). Real workspaces, SQLite
and the real embedder."""

from __future__ import annotations

import datetime as dt

import numpy as np
from lifelong_plugins.recall import service
from lifelong_plugins.recall.chunking import Unit, sentence_texts, split_sentences
from lifelong_plugins.recall.search import Searcher
from lifelong_plugins.recall.status import recall_status
from lifelong_plugins.recall.vector_store import PENDING_KEY

from lifelong import clock

NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=clock.zone("Europe/Berlin"))
RECALL = {"builtins": ("embeddings", "recall"), "entry_points": False}
HEADING = "2026-03-10: Caroline and Melanie"
TURN = (
    "- [D7:18] Melanie: Luna and Oliver are so sweet and playful, they really liven up the house. "
    "The roof in the attic leaks again and the garden fence needs paint before winter. "
    "Just bought new pink running shoes, too!"
)
DAY = f"# {HEADING}\n\n{TURN}\n- [D7:19] Caroline: That sounds like a busy week!\n"


def test_sentences_are_cut_after_sentence_ends_not_after_abbreviations() -> None:
    text = "Met Dr. Keller at 3 p.m. today. She said e.g. Rome is fine. 5 people came. Ok."
    assert split_sentences(text) == [
        "Met Dr. Keller at 3 p.m. today.",
        "She said e.g. Rome is fine.",
        "5 people came.",
    ]  # "Ok." is too short to embed
    assert split_sentences("- [x] J. Smith called. Pay the deposit\n> 好的。明天见。") == [
        "J. Smith called.",
        "Pay the deposit",
        "好的。",
        "明天见。",
    ]
    assert split_sentences("- one sentence only, no matter how long it runs on and on") == [
        "one sentence only, no matter how long it runs on and on"
    ]


def test_each_sentence_is_embedded_under_its_heading_with_its_speaker() -> None:
    unit = Unit(3, 3, TURN, (HEADING,))
    texts = unit.sentence_texts()
    assert texts == [
        f"{HEADING}\nMelanie: Luna and Oliver are so sweet and playful, they really liven up the house.",
        f"{HEADING}\nMelanie: The roof in the attic leaks again and the garden fence needs paint before winter.",
        f"{HEADING}\nMelanie: Just bought new pink running shoes, too!",
    ]
    assert sentence_texts("", "- A single statement.") == []  # the unit's own vector is enough
    assert sentence_texts("", "Plain. Two sentences here.") == ["Plain.", "Two sentences here."]


def test_the_index_stores_each_units_sentence_vectors_and_embeds_only_new_ones(make_host) -> None:
    host = make_host({"memory/2026-03-10.md": DAY}, **RECALL)
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        first = idx.sync()
        rows = dict(
            host.store.execute(
                "SELECT u.start_line, v.sentences FROM units u JOIN unit_vectors v ON v.unit_id = u.id"
            ).fetchall()
        )
        assert first.sentences_embedded == 3
        # three float16 vectors; a unit of one sentence: its own vector says it all
        assert len(rows[3]) == 3 * 384 * 2 and rows[4] == b""
        path = host.workspace.root / "memory" / "2026-03-10.md"
        path.write_text(DAY + "- [D7:20] Melanie: It was. Next week is calmer.\n", encoding="utf-8")
        again = idx.sync()
    assert again.units_embedded == 1 and again.sentences_embedded == 2  # the rest come from the cache


def test_a_unit_scores_its_best_sentence_when_that_is_closer_to_the_query(make_host) -> None:
    host = make_host({"memory/2026-03-10.md": DAY}, **RECALL)
    off = make_host(
        {"memory/2026-03-10.md": DAY}, {"plugins": {"recall": {"sentence_vectors": False}}}, **RECALL
    )
    query = "What shoes did Melanie buy?"
    with clock.pinned(NOW):
        for h in (host, off):
            service.index_for(h.ctx).sync()
        qvec = host.embedder.embed_query(query)
        (uid,) = host.store.execute("SELECT id FROM units WHERE start_line = 3").fetchone()
        own = Searcher(service.index_for(off.ctx))._unit_cosines(qvec, [uid])[uid]
        best = Searcher(service.index_for(host.ctx))._unit_cosines(qvec, [uid])[uid]
    sentences = host.embedder.embed_passages(Unit(3, 3, TURN, (HEADING,)).sentence_texts())
    expected = max(float(np.dot(s, qvec)) for s in sentences)
    assert off.store.execute("SELECT sentences FROM unit_vectors").fetchall() == [(None,), (None,)]
    assert expected > own and abs(best - expected) < 2e-3  # stored as float16


def test_an_index_from_before_sentence_vectors_gains_them_on_the_next_full_sync(make_host) -> None:
    host = make_host({"memory/2026-03-10.md": DAY}, **RECALL)
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        idx.sync()
        # what migration m008 leaves on an older index: no sentence vectors, the setting unseen
        host.store.execute("UPDATE unit_vectors SET sentences = NULL")
        host.store.execute("DELETE FROM index_meta WHERE key = 'sentence_vectors'")
        host.store.execute("DELETE FROM embedding_cache")  # so the full sync has to embed them
        host.store.conn.commit()
        assert idx.sync_if_changed() is None  # a search's auto-sync leaves the backlog alone
        status = recall_status(host.ctx)
        assert status.data["sentences_pending"] == 2 and "lifelong index  (2 unit(s)" in status.next_steps[0]
        full = idx.sync_if_changed(backlog=True)  # `lifelong index`, the watcher
    assert full.sentences_embedded == 3 and full.units_embedded == 2 and full.embedded == 0
    assert idx.meta(PENDING_KEY) is None
    assert host.store.execute("SELECT count(*) FROM unit_vectors WHERE sentences IS NULL").fetchone()[0] == 0
    assert recall_status(host.ctx).data["sentences_pending"] == 0
