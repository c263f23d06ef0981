from __future__ import annotations

import pytest
from lifelong_plugins.recall.chunking import chunk_markdown, estimate_tokens
from lifelong_plugins.recall.scoring import (
    Candidate,
    FtsPlan,
    bm25_score,
    decay_factor,
    fts_plan,
    fts_query,
    hybrid_score,
    mmr,
)

from lifelong.text import stem

DOC = """# Day

## Pitch
- Decision: open with the demo.
- Ask is EUR 1.2M.
  - nested detail stays with its item

Paragraph one line a
line b of the same paragraph.

```python
def f():
    return 1
```

## Other
Last words.
"""


def test_chunks_keep_exact_lines_and_headings() -> None:
    chunks = chunk_markdown(DOC, target_tokens=400)
    assert len(chunks) == 1
    c = chunks[0]
    lines = DOC.split("\n")
    assert (c.start_line, c.end_line) == (1, 17)
    assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


def test_small_chunks_never_split_list_items_or_code() -> None:
    chunks = chunk_markdown(DOC, target_tokens=12, overlap_tokens=0)
    lines = DOC.split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
    spans = [(c.start_line, c.end_line) for c in chunks]
    # the nested item (lines 5-6) and the code fence (lines 11-14) are whole inside one chunk each
    assert any(s <= 5 and e >= 6 for s, e in spans)
    assert any(s <= 11 and e >= 14 for s, e in spans)
    assert not any(s in (6, 12, 13, 14) for s, _ in spans)
    pitch = next(c for c in chunks if "Decision" in c.text)
    assert pitch.heading_path == ("Day", "Pitch")
    other = next(c for c in chunks if "Last words" in c.text)
    assert other.heading_path == ("Day", "Other")


def test_overlap_carries_trailing_blocks_within_a_section() -> None:
    items = "\n".join(f"- item number {i} with some words to fill the line" for i in range(40))
    chunks = chunk_markdown("# T\n" + items + "\n", target_tokens=60, overlap_tokens=20)
    assert len(chunks) > 3
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.start_line <= a.end_line  # overlapping line ranges
        assert estimate_tokens(b.text) <= 60 + 20


def test_huge_block_is_split_on_lines() -> None:
    code = "```\n" + "\n".join(f"line {i} " * 8 for i in range(300)) + "\n```\n"
    chunks = chunk_markdown(code, target_tokens=100, overlap_tokens=0)
    assert len(chunks) > 5
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 302


def test_bm25_mapping_is_monotonic_for_negative_ranks() -> None:
    ranks = [-12.0, -5.0, -1.5, -0.2, -0.0001]
    scores = [bm25_score(r) for r in ranks]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s < 1 for s in scores)
    assert bm25_score(0.0) == 0.0 and bm25_score(3.0) == 0.0  # the 1/(1+max(0,rank)) bug would give 1.0
    assert abs(bm25_score(-1.0) - 0.5) < 1e-9


def test_decay_and_hybrid() -> None:
    assert decay_factor(None, 30) == 1.0
    assert abs(decay_factor(30, 30) - 0.5) < 1e-9
    assert abs(decay_factor(60, 30) - 0.25) < 1e-9
    assert decay_factor(-5, 30) == 1.0
    assert abs(hybrid_score(0.8, 0.5, 0.7, 0.3) - (0.56 + 0.15)) < 1e-9
    assert abs(hybrid_score(0.8, 0.5, 1.4, 0.6) - (0.56 + 0.15)) < 1e-9  # renormalised
    assert hybrid_score(None, 0.5, 0.0, 0.3) == 0.5


def test_fts_query_drops_stopwords_and_common_terms() -> None:
    df = {"what": 900, "venue": 3, "offsite": 5, "book": 400, "tw": 2, "418": 2}
    q = fts_query(
        "What venue did we book for the offsite, re TW-418?",
        doc_freq=lambda ts: {t: df.get(t, 0) for t in ts},
        total_docs=1000,
    )
    assert q == '"tw 418" OR "venue" OR "offsite"'
    assert fts_query("the of and") is None
    q2 = fts_query("book what", doc_freq=lambda ts: {t: df.get(t, 0) for t in ts}, total_docs=1000)
    assert q2 == '"book"'  # all terms common: the rarest is kept
    assert fts_query('say "quoted"') == '"quoted"'


def test_fts_plan_asks_a_word_the_index_holds_only_in_other_forms_as_its_commonest_form() -> None:
    df = {"jonas": 40, "camping": 12, "camps": 3, "lake": 7}
    vocab = sorted(df)

    def forms(stem_: str) -> list[tuple[str, int]]:  # as the index answers: terms stemming to it
        got = [(t, df[t]) for t in vocab if t.startswith(stem_) and stem(t) == stem_]
        return sorted(got, key=lambda r: -r[1])

    def freq(ts: list[str]) -> dict[str, int]:
        return {t: df.get(t, 0) for t in ts}

    big = fts_query("Where has Jonas camped by the lake?", doc_freq=freq, forms=forms, total_docs=1000)
    assert big == '"lake" OR "camping" OR "jonas"'  # "camped" is not in the index: "camping" is
    tiny = fts_query("Where has Jonas camped?", doc_freq=freq, forms=forms, total_docs=50)
    assert tiny == '"jonas" OR "camping"'
    # no form either: dropped (large index) or kept as written (tiny index, no pruning)
    assert fts_query("kayaked lake", doc_freq=freq, forms=forms, total_docs=1000) == '"lake"'
    assert fts_query("camped", doc_freq=freq, total_docs=1000) is None  # without forms, as before


def _cand(i: int, text: str, score: float) -> Candidate:
    return Candidate(chunk_id=i, path=f"p{i}.md", start_line=1, end_line=1, text=text, score=score)


def test_mmr_removes_a_planted_near_duplicate() -> None:
    a = _cand(1, "Booked the team offsite at Gut Boltenhagen for April 14-16 with 12 people", 0.9)
    dup = _cand(2, "Booked the team offsite at Gut Boltenhagen for April 14-16 with 12 people!", 0.89)
    other = _cand(3, "Priya owns the Android release on April 28", 0.5)
    out = mmr([a, dup, other], lam=0.7, limit=6)
    assert [c.chunk_id for c in out] == [1, 3]
    # below the drop threshold, a similar item is kept but ranked after a diverse one
    near = _cand(4, "Booked the offsite at Gut Boltenhagen, Baltic coast", 0.6)
    out = mmr([a, near, other], lam=0.7, limit=6, drop_above=0.99)
    assert [c.chunk_id for c in out] == [1, 3, 4]


def test_decay_floor_and_cosine_centring() -> None:
    from lifelong_plugins.recall.scoring import centred_cosine

    assert abs(decay_factor(30, 30, floor=0.5) - 0.75) < 1e-9
    assert abs(decay_factor(3000, 30, floor=0.5) - 0.5) < 1e-9  # old facts keep half their weight
    assert decay_factor(None, 30, floor=0.5) == 1.0
    # e5-like narrow band: background 0.78; an average passage scores 0, a close one high
    assert centred_cosine(0.78, 0.78) == 0.0
    assert centred_cosine(0.70, 0.78) == 0.0
    assert abs(centred_cosine(0.89, 0.78) - 1.0) < 1e-9
    assert abs(centred_cosine(0.835, 0.78) - 0.5) < 1e-9
    assert centred_cosine(0.4, 0.0) == 0.4  # no background known: the raw cosine
    assert centred_cosine(None, 0.78) is None


def test_fts_plan_adds_a_quorum_and_a_budgeted_fill_only_when_postings_exceed_the_budget() -> None:
    df = {"venue": 3000, "offsite": 40_000, "projector": 9000, "tw": 20, "418": 20}
    freq = lambda ts: {t: df.get(t, 0) for t in ts}  # noqa: E731
    text = "offsite venue projector TW-418"
    small = fts_plan(text, doc_freq=freq, total_docs=1_000_000, max_postings=100_000)
    assert small == FtsPlan('"tw 418" OR "venue" OR "projector" OR "offsite"')  # 52,040 postings
    big = fts_plan(text, doc_freq=freq, total_docs=1_000_000, max_postings=15_000, quorum_terms=3)
    assert big is not None and big.match == small.match
    assert big.quorum == '("tw 418" AND "venue") OR ("tw 418" AND "projector") OR ("venue" AND "projector")'
    assert big.quorum_divisor == 2
    assert big.fill == '"tw 418" OR "venue" OR "projector"'  # 20 + 3000 + 9000 <= 15000
    only = fts_plan("offsite", doc_freq=freq, total_docs=1_000_000, max_postings=15_000)
    assert only == FtsPlan('"offsite"')  # one term: nothing to pair, kept even over the budget


def test_quorum_rank_over_divisor_equals_or_rank_for_full_matches() -> None:
    """The property the quorum relies on, checked against FTS5 itself: bm25 of the any-pair
    query counts a chunk matching m of the k terms m-1 times."""
    import sqlean

    conn = sqlean.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    docs = ["alpha beta", "alpha beta gamma", "alpha", "gamma delta", "beta gamma alpha alpha"]
    docs += [f"filler words {i}" for i in range(40)]
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(docs, 1))
    df = {"alpha": 4, "beta": 3, "gamma": 3, "delta": 1}
    plan = fts_plan(
        "alpha beta gamma", doc_freq=lambda ts: {t: df.get(t, 0) for t in ts}, total_docs=1000, max_postings=5
    )
    assert plan is not None and plan.quorum is not None and plan.quorum_divisor == 2
    plain = dict(conn.execute("SELECT rowid, rank FROM t WHERE t MATCH ?", (plan.match,)).fetchall())
    quorum = dict(conn.execute("SELECT rowid, rank FROM t WHERE t MATCH ?", (plan.quorum,)).fetchall())
    assert set(quorum) == {1, 2, 5}  # at least two of the three terms
    for rowid, matched in ((1, 2), (2, 3), (5, 3)):
        assert abs(quorum[rowid] - (matched - 1) * plain[rowid]) < 1e-9
    assert abs(quorum[2] / plan.quorum_divisor - plain[2]) < 1e-9  # a full match scores as under OR


@pytest.mark.parametrize("on_sets", [True, False], ids=["python-sets", "numpy-bits"])
def test_mmr_matches_the_plain_set_based_algorithm(on_sets: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both MMR paths (Python sets in a process without numpy, numpy's bit rows) pick
    exactly what the textbook loop over set Jaccard picks."""
    import random

    from lifelong_plugins.recall import scoring

    monkeypatch.setattr(scoring, "_on_sets", lambda n: on_sets)

    from lifelong_plugins.recall.scoring import token_set

    from lifelong.text import jaccard

    def reference(cands, lam, limit, drop_above):  # noqa: ANN001, ANN202
        pool = sorted(cands, key=lambda c: c.score, reverse=True)
        sets = [token_set(c.text) for c in pool]
        max_sim, alive, picked = [0.0] * len(pool), list(range(len(pool))), []
        while alive and len(picked) < limit:
            best = max(alive, key=lambda i: lam * pool[i].score - (1 - lam) * max_sim[i])
            alive.remove(best)
            if picked and max_sim[best] >= drop_above:
                continue
            picked.append((pool[best].chunk_id, max_sim[best]))
            for i in alive:
                max_sim[i] = max(max_sim[i], jaccard(sets[i], sets[best]))
        return picked

    rng = random.Random(4)
    words = [f"w{i}" for i in range(40)] + ["the", "and"]
    for trial in range(30):
        cands = [
            _cand(i, " ".join(rng.choices(words, k=rng.randint(0, 12))), round(rng.random(), 2))
            for i in range(rng.randint(1, 40))
        ]
        got = [(c.chunk_id, c.mmr_penalty) for c in mmr(cands, lam=0.7, limit=10, drop_above=0.6)]
        assert got == reference(cands, 0.7, 10, 0.6), trial


def test_the_two_mmr_paths_give_the_same_picks_penalties_values_and_dates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mmr_order over Python sets (what an FTS-only CLI search runs, without numpy) and over
    numpy bit rows yield the same candidates, penalties and values, stop at the same floor, and
    give the dropped duplicates' days to the same picks."""
    import random

    from lifelong_plugins.recall import scoring

    rng = random.Random(7)
    words = [f"w{i}" for i in range(25)] + ["the", "and"]

    def pool(seed: int) -> list[Candidate]:
        r = random.Random(seed)
        out = []
        for i in range(r.randint(1, 60)):
            c = _cand(i, " ".join(r.choices(words, k=r.randint(0, 8))), round(r.random(), 3))
            c.source_date = None if r.random() < 0.2 else float(86400 * r.randint(1, 5))
            c.evergreen = r.random() < 0.1
            out.append(c)
        return out

    def run(on_sets: bool, seed: int, floor: float | None) -> list[tuple[object, ...]]:
        monkeypatch.setattr(scoring, "_on_sets", lambda n: on_sets)
        cands = pool(seed)
        walked = [
            (c.chunk_id, penalty, value)
            for c, penalty, value in scoring.mmr_order(cands, lam=0.7, drop_above=0.5, floor=floor)
        ]
        return walked + [(c.chunk_id, c.also_dates) for c in cands]

    for trial in range(40):
        seed, floor = rng.randint(0, 10**6), rng.choice([None, 0.3, 0.8])
        assert run(True, seed, floor) == run(False, seed, floor), trial
