"""The pure selection at the end of a search (select_results / select_answered): no index, no
plugins, just candidates in and results out."""

from __future__ import annotations

from lifelong_plugins.recall import service
from lifelong_plugins.recall.selection import select_answered, select_results

from lifelong.contracts import Candidate, SearchRequest

CFG = {**service.DEFAULTS}


def cand(
    i: int, score: float, *, bm25: float | None = None, corpus: str = "memory", words: str = ""
) -> Candidate:
    text = words or f"note {i} about topic{i} and detail{i * 7}"
    return Candidate(i, f"memory/n{i}.md", 1, 1, text, corpus=corpus, score=score, hybrid=score, bm25=bm25)


def test_a_smaller_k_is_the_head_of_a_larger_k() -> None:
    pool = [cand(i, 0.9 - i * 0.02, bm25=0.3) for i in range(30)]
    small = select_results(pool, SearchRequest("q", max_results=6), CFG)
    large = select_results(pool, SearchRequest("q", max_results=20), CFG)
    assert [c.key for c in small] == [c.key for c in large[:6]] and len(large) == 20


def test_a_strong_keyword_hit_below_min_score_only_fills_a_free_slot() -> None:
    strong = cand(99, 0.1, bm25=0.95)
    pool = [cand(i, 0.8 - i * 0.01, bm25=0.2) for i in range(3)] + [strong]
    got = select_results(pool, SearchRequest("q", max_results=6, min_score=0.2), CFG)
    assert [c.chunk_id for c in got] == [0, 1, 2, 99] and got[-1].rescued
    full = [cand(i, 0.8 - i * 0.01, bm25=0.2) for i in range(6)] + [strong]
    got = select_results(full, SearchRequest("q", max_results=6, min_score=0.2), CFG)
    assert 99 not in [c.chunk_id for c in got]  # never displaces a passing result


def test_corpus_all_caps_each_corpus_at_half_then_backfills() -> None:
    pool = [cand(i, 0.9 - i * 0.01, corpus="wiki") for i in range(8)] + [cand(50, 0.3), cand(51, 0.29)]
    got = select_results(pool, SearchRequest("q", max_results=6, corpus="all"), CFG)
    assert sum(c.corpus == "memory" for c in got) == 2 and sum(c.corpus == "wiki" for c in got) == 4


def test_a_token_budget_returns_what_fits() -> None:
    # forty words each, a different forty per note (identical notes would be folded into one)
    pool = [cand(i, 0.9 - i * 0.01, words=" ".join([f"word{i}"] * 40)) for i in range(10)]
    got = select_answered(pool, SearchRequest("q", max_results=6, max_tokens=120), CFG)
    assert 1 <= len(got) < 10 and [c.chunk_id for c in got] == list(range(len(got)))
    assert select_answered(pool, SearchRequest("q", max_results=3, min_score=0.85), CFG) == pool[:3]
    assert len(select_answered(pool, SearchRequest("q", max_results=9, min_score=0.85), CFG)) == 6


def test_an_answer_folds_the_same_line_on_other_days_into_its_best_copy() -> None:
    day = 86400.0
    line = "Worked on safe-cron-merge.sh: the QMD router retries on ERR_LOCK_77."
    pool = [
        Candidate(1, "memory/a.md", 3, 3, line, source_date=30 * day, score=0.9),
        Candidate(2, "memory/b.md", 3, 3, "Fixed the garden gate.", source_date=31 * day, score=0.8),
        Candidate(3, "memory/c.md", 3, 3, line, source_date=28 * day, score=0.7),
        Candidate(4, "memory/d.md", 3, 3, line, source_date=25 * day, score=0.6),
    ]
    got = select_answered(pool, SearchRequest("ERR_LOCK_77", max_results=6), CFG)
    assert [c.chunk_id for c in got] == [1, 2]
    assert got[0].also_dates == (25 * day, 28 * day) and got[1] is pool[1]
