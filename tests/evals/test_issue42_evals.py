"""The pure parts of issue 42's evals: the k-head and descending checks of evals/stable_topk.py
and the month of evals/standing_preferences.py."""

from __future__ import annotations

from lifelong_evals.stable_topk import descending, is_head
from lifelong_evals.standing_preferences import TOPICS, dailies
from lifelong_plugins.recall.answer import asks_advice, states_preference


def row(line: int, score: float) -> dict:
    return {"path": "memory/a.md", "start_line": line, "end_line": line, "score": score}


def test_a_head_has_the_same_results_and_scores_as_many_as_k_allows() -> None:
    large = [row(i, 1 - i / 10) for i in range(8)]
    assert is_head(large[:5], large, 5) and is_head(large, large, 20)
    assert not is_head(large[:4], large, 5)  # fewer than k although more exist
    assert not is_head([row(0, 1.0), row(2, 0.8)], large, 2)  # another result
    assert not is_head([row(0, 1.0), row(1, 0.85)], large, 2)  # another score
    assert descending(large) and not descending([row(0, 0.5), row(1, 0.6)])


def test_the_month_states_each_rule_once_and_asks_what_to_do() -> None:
    files = dailies()
    assert len(files) == 2 * len(TOPICS) == 32
    text = "\n".join(files.values())
    for rule, asked, advice, questions in TOPICS:
        assert text.count(rule) == 1 and text.count(asked) == 1 and states_preference(rule)
        # the user's question about the topic states no rule (an assistant's "Keep a friendly
        # tone" reads as one, but only the user's lines are boosted: test_stable_ranking.py)
        assert not states_preference(asked) and len(advice) == 3
        assert sum(asks_advice(q) for q in questions) >= 1, questions


def test_the_generated_year_has_every_day_at_about_the_asked_size(tmp_path) -> None:
    from lifelong_evals.bench_index import write_year

    from lifelong.markdown import estimate_tokens

    files = write_year(tmp_path, 40_000)
    assert len(files) == 365 and all((tmp_path / rel).read_text("utf-8") == t for rel, t in files.items())
    total = sum(estimate_tokens(t) for t in files.values())
    assert 35_000 <= total <= 80_000  # a day ends with the section that passes its size (~80 tokens)
    text = "\n".join(files.values())
    # the shapes of a year of notes: statements a line, journal paragraphs, speakers, tables, code
    assert "## Journal" in text and "**" in text and "| item | owner | amount |" in text and "```bash" in text
    assert write_year(tmp_path / "again", 40_000) == files  # seeded
