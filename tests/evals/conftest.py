"""A tiny LoCoMo-shaped data set (two conversations) for the eval harness tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def turn(dia: str, speaker: str, text: str, caption: str | None = None) -> dict[str, Any]:
    t = {"speaker": speaker, "dia_id": dia, "text": text}
    if caption:
        t["blip_caption"] = caption
        t["img_url"] = ["https://example.invalid/x.jpg"]
    return t


TINY_LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                turn("D1:1", "Ada", "Hey Bo! I adopted a greyhound called Pixel last week."),
                turn(
                    "D1:2",
                    "Bo",
                    "Congrats! Mine is a tabby cat.\nShe sleeps all day.",
                    "a photo of a tabby cat on a sofa",
                ),
                turn("D1:3", "Ada", "Pixel loves the beach at Ostend."),
            ],
            "session_2_date_time": "9:00 am on 8 May, 2023",
            "session_2": [
                turn("D2:1", "Bo", "I signed up for the Lisbon marathon in October."),
                turn("D2:2", "Ada", "Amazing, I will cheer from the finish line."),
            ],
            "session_3_date_time": "7:10 pm on 2 June, 2023",
            "session_3": [
                turn("D3:1", "Ada", "I started a pottery class on Tuesdays."),
                turn("D3:2", "Bo", "Training for the marathon is going well, 30 km last Sunday."),
            ],
            "session_4_date_time": "10:00 am on 3 June, 2023",
            "session_4": [],
        },
        "qa": [
            {
                "question": "What is the name of Ada's dog?",
                "answer": "Pixel",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Which marathon did Bo sign up for?",
                "answer": "Lisbon",
                "evidence": ["D2:1"],
                "category": 4,
            },
            {
                "question": "What hobbies does Ada have?",
                "answer": "pottery, beach walks",
                "evidence": ["D1:3; D3:1"],
                "category": 1,
            },
            {
                "question": "When did Ada start pottery?",
                "answer": "June 2023",
                "evidence": ["D3:1"],
                "category": 2,
            },
            {"question": "Would Bo like a dog?", "answer": "maybe", "evidence": [], "category": 3},
            {
                "question": "What is Bo's cat called?",
                "adversarial_answer": "Pixel",
                "evidence": ["D1:2"],
                "category": 5,
            },
            {
                "question": "How far did Bo run?",
                "answer": "30 km",
                "evidence": ["D9:9", "D3:2"],
                "category": 4,
            },
            {
                "question": "Where does Pixel like to go?",
                "answer": "the park",
                "evidence": ["D1:1"],
                "category": 4,
            },
        ],
        "observation": {},
        "session_summary": {},
        "event_summary": {},
    },
    {
        "sample_id": "conv-b",
        "conversation": {
            "speaker_a": "Cy",
            "speaker_b": "Di",
            "session_1_date_time": "4:04 pm on 20 January, 2023",
            "session_1": [
                turn("D1:1", "Cy", "My sister Mira is getting married in Porto."),
                turn("D1:2", "Di", "Lovely! When is the wedding?"),
                turn("D1:3", "Cy", "In April, we are all flying there."),
            ],
        },
        "qa": [
            {"question": "Where is Mira's wedding?", "answer": "Porto", "evidence": ["D1:1"], "category": 4},
            {"question": "When is the wedding?", "answer": "April", "evidence": ["D:1:3"], "category": 2},
        ],
        "observation": {},
        "session_summary": {},
        "event_summary": {},
    },
]

TINY_AUDIT = [
    {
        "question_id": "locomo_0_qa7",
        "question": "Where does Pixel like to go?",
        "golden_answer": "the park",
        "category": 4,
        "error_type": "WRONG_CITATION",
        "cited_evidence": ["D1:1"],
        "correct_evidence": ["D1:3"],
        "reasoning": "D1:3 names the beach.",
        "correct_answer": "the beach at Ostend",
    }
]


@pytest.fixture
def tiny_locomo(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "locomo10.json").write_text(json.dumps(TINY_LOCOMO), encoding="utf-8")
    (folder / "audit-errors.json").write_text(json.dumps(TINY_AUDIT), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """One small synthetic corpus (2,000 chunks), built and measured once: (figures, root)."""
    from lifelong_evals import bench_search

    cache = tmp_path_factory.mktemp("bench-cache")
    results = bench_search.run_bench(
        [2000], cache_dir=cache, seed=5, n_queries=10, reps=1, reindex_reps=3, log=lambda m: None
    )
    return results, cache / "bench" / "n2000-s5"
