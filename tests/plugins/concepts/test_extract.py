"""Concept terms of any script, importance and pruning (pure)."""

from __future__ import annotations

import pytest
from lifelong_plugins.concepts.extract import (
    concept_terms,
    importance,
    name_phrases,
    normalise_concept,
    script_of,
    should_prune,
)


def keys(text: str) -> list[str]:
    return [t.key for t in concept_terms(text)]


def test_the_reference_sentence_gives_exactly_its_concepts() -> None:
    assert sorted(keys("Move backups to S3 Glacier and sync QMD router notes.")) == [
        "backup", "glacier", "qmd", "router", "sync",
    ]  # fmt: skip


def test_no_fragments_of_words_in_any_script() -> None:
    found = keys("ルーターを再起動した。東京タワーのルーター")
    assert "ルーター" in found and "タワー" in found
    assert not any(k in ("ルー", "ター", "ーター") for k in found)
    assert all(script_of(k) != "hiragana" for k in found)


def test_full_width_forms_normalise() -> None:
    assert normalise_concept("ＫＶ") == "kv"
    assert keys("ＫＶストア ＫＶＳＴＯＲＥ") == ["ストア", "kvstore"]


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-04",
        "14:30",
        "notes.md",
        "report.pdf",
        "v2.3",
        "1,200",
        "12%",
        "/var/log/x",
        "https://x.example/a",
    ],
)
def test_dates_times_and_file_names_are_never_concepts(text: str) -> None:
    assert keys(f"see {text} again") == []


def test_each_concept_records_its_script_and_one_letter_apart_stays_apart() -> None:
    terms = {t.key: t.script for t in concept_terms("किताब कीताब Москва Glacier 東京 서울")}
    assert terms == {
        "किताब": "devanagari",
        "कीताब": "devanagari",
        "москва": "cyrillic",
        "glacier": "latin",
        "東京": "han",
        "서울": "hangul",
    }


def test_names_are_phrases_and_a_capital_only_from_the_sentence_start_is_not() -> None:
    text = "Booked Gut Boltenhagen with Elena Brandt. Northwind Ventures met. The Offsite Plan is done."
    found = [t.key for t in name_phrases(text)]
    assert found == ["gut boltenhagen", "elena brandt", "northwind venture", "offsite plan"]


def test_importance_follows_the_formula() -> None:
    # a concept seen today, as often as the most frequent one, in 1 of 100 chunks
    top = importance(frequency=10, max_frequency=10, days_since_seen=0, doc_freq=1, total_docs=100)
    assert top == pytest.approx(0.3 + 0.4 + 0.3)
    half = importance(frequency=0, max_frequency=10, days_since_seen=14, doc_freq=100, total_docs=100)
    assert half == pytest.approx(0.2)


def test_pruning_needs_both_conditions() -> None:
    assert should_prune(91, 0.04)
    assert not should_prune(91, 0.06)  # old but still important
    assert not should_prune(30, 0.01)  # unimportant but seen recently
