from __future__ import annotations

import numpy as np
import pytest
from lifelong_evals.bench_search import ClusteredVectors, ZipfText, exact_top_k, percentiles
from lifelong_evals.locomo import Question, SessionFile
from lifelong_evals.suite_gate import answer_in, cited_turns, score_note
from lifelong_evals.suite_retrieval import (
    Hit,
    aggregate,
    question_metrics,
    ranked_sessions,
    recall_all,
    recall_any,
    reciprocal_rank,
    turns_within_budget,
)


def session_file(path: str, session: int, n_turns: int, words_per_turn: int = 10) -> SessionFile:
    lines = [f"# day {session}", ""]
    dia = {}
    for t in range(1, n_turns + 1):
        lines.append(f"- [D{session}:{t}] A: " + " ".join(["word"] * words_per_turn))
        dia[len(lines)] = f"D{session}:{t}"
    return SessionFile(path, session, "\n".join(lines) + "\n", dia)


FILES = {
    "memory/a.md": session_file("memory/a.md", 1, 6),
    "memory/b.md": session_file("memory/b.md", 2, 6),
    "memory/c.md": session_file("memory/c.md", 3, 6),
}


def test_ranked_sessions_by_first_appearance() -> None:
    hits = [
        Hit("memory/b.md", 3, 4),
        Hit("memory/b.md", 5, 6),
        Hit("MEMORY.md", 1, 2),
        Hit("memory/a.md", 3, 3),
    ]
    assert ranked_sessions(hits, FILES) == [2, 1]


def test_recall_any_all_and_reciprocal_rank() -> None:
    ranked = [2, 1, 3]
    assert recall_any(ranked, {3}, 1) == 0.0 and recall_any(ranked, {3}, 3) == 1.0
    assert recall_all(ranked, {1, 3}, 2) == 0.0 and recall_all(ranked, {1, 3}, 3) == 1.0
    assert recall_all(ranked, set(), 3) == 0.0
    assert reciprocal_rank(ranked, {1, 3}) == 0.5
    assert reciprocal_rank(ranked, {9}) == 0.0


def test_turns_within_budget_takes_leading_hits_that_fit() -> None:
    def tokens(text: str) -> int:
        return len(text.split())

    hits = [Hit("memory/a.md", 3, 4), Hit("memory/b.md", 3, 8), Hit("memory/c.md", 3, 3)]
    # each turn line is 13 words: 2 lines = 26 tokens, 6 lines = 78
    assert turns_within_budget(hits, FILES, 26, tokens) == {"D1:1", "D1:2"}
    # the second hit does not fit 100: stop there, even though the third would
    assert turns_within_budget(hits, FILES, 100, tokens) == {"D1:1", "D1:2"}
    assert turns_within_budget(hits, FILES, 200, tokens) == {
        "D1:1",
        "D1:2",
        "D2:1",
        "D2:2",
        "D2:3",
        "D2:4",
        "D2:5",
        "D2:6",
        "D3:1",
    }
    assert turns_within_budget(hits, FILES, 10, tokens) == set()


def test_question_metrics_and_aggregate() -> None:
    hits = [Hit("memory/b.md", 3, 4), Hit("memory/a.md", 3, 4)]
    m = question_metrics(hits, FILES, ["D1:1", "D3:1"], {1, 3}, lambda t: len(t.split()))
    assert m["recall_any@1"] == 0.0 and m["recall_any@3"] == 1.0 and m["recall_all@10"] == 0.0
    assert m["mrr"] == 0.5
    assert m["turn_recall@1000"] == 0.5
    rows = [
        {"category": 4, "metrics": m},
        {"category": 4, "metrics": {**m, "mrr": 1.0}},
        {"category": 2, "metrics": {**m, "mrr": 0.0}},
    ]
    agg = aggregate(rows)
    assert agg["single-hop"]["n"] == 2 and agg["single-hop"]["mrr"] == 0.75
    assert agg["overall"]["n"] == 3 and agg["overall"]["mrr"] == 0.5
    assert agg["multi-hop"] == {"n": 0, **{k: None for k in agg["multi-hop"] if k != "n"}}


def test_gate_note_scoring() -> None:
    q = Question("locomo_0_qa1", "Which marathon?", "Lisbon marathon", 4, ("D2:1",))
    files = {"memory/x.md": session_file("memory/x.md", 2, 3)}
    assert answer_in("Bo signed up for the LISBON marathon!", "Lisbon marathon")
    assert not answer_in("Bo signed up for the Lisbonmarathon", "Lisbon marathon")
    assert cited_turns(["memory/x.md#L3-L4"], "", files) == ({"D2:1", "D2:2"}, {2})
    assert cited_turns([], "see (memory/x.md#L5)", files) == ({"D2:3"}, {2})
    assert score_note("[D2:1] Bo: I signed up", [], q, files)["evidence_id_hit"]
    s = score_note("something else (memory/x.md#L4)", ["memory/x.md#L4"], q, files)
    assert s == {"hit": False, "answer_hit": False, "evidence_id_hit": False, "session_hit": True}
    assert score_note("Lisbon marathon in October", [], q, files)["hit"]


def test_synthetic_generators_are_deterministic() -> None:
    text = ZipfText(7, vocab_size=2000)
    a, wa = text.chunks(np.random.default_rng(1), 5)
    b, wb = text.chunks(np.random.default_rng(1), 5)
    assert a == b and all(40 <= len(w) <= 160 for w in wa)
    counts = np.bincount(text.sample(np.random.default_rng(2), 20_000), minlength=2000)
    assert int(counts.argmax()) < text.n_stop  # the head of the distribution is stopwords
    assert counts[:10].sum() > counts[1000:1010].sum() * 20  # Zipf-like
    assert len(set(text.vocab.tolist())) == 2000
    vec = ClusteredVectors(1000, 3)
    block = vec.block(0, 100)
    assert np.allclose(np.linalg.norm(block, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(block, ClusteredVectors(1000, 3).block(0, 100))


def test_exact_top_k_matches_brute_force() -> None:
    n = 45_000  # spans three generation blocks
    gen = ClusteredVectors(n, 11)
    all_vecs = np.vstack([gen.block(s, min(n, s + 20_000)) for s in range(0, n, 20_000)])
    q = all_vecs[[5, 30_000]] + 0.01
    got = exact_top_k(n, 11, q.astype(np.float32), 10)
    want = np.argsort(-(all_vecs @ q.T), axis=0)[:10].T + 1
    assert [set(r) for r in got.tolist()] == [set(r) for r in want.tolist()]


def test_percentiles() -> None:
    p = percentiles(list(range(1, 101)))
    assert p["p50"] == pytest.approx(50.5) and p["p95"] == pytest.approx(95.05) and p["n"] == 100
