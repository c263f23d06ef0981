from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import litellm
import pytest
from lifelong_evals.harness import RunOptions
from lifelong_evals.locomo import load_locomo
from lifelong_evals.suite_gate import (
    _host,
    agent_answer,
    first_result_note,
    gate_unavailable,
    lazy_default_gap,
    offline_hit_rate,
    summarise,
)

pytestmark = pytest.mark.skipif(gate_unavailable() is not None, reason="gate plugin not available")


class ScriptedModel:
    """litellm.completion with litellm's own mocks: the agent asks memory_search once, then
    answers; the judge says CORRECT. Records what it was sent."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kw: Any) -> Any:
        self.calls.append(kw)
        messages = kw["messages"]
        last = messages[-1].get("content")
        if isinstance(last, str) and "Gold answer:" in last:
            return litellm.completion(model=kw["model"], messages=messages, mock_response="CORRECT")
        if kw.get("tools") and not any(m["role"] == "tool" for m in messages):
            call = {
                "id": "call_1",
                "type": "function",
                "function": {"name": "memory_search", "arguments": json.dumps({"query": "Pixel dog"})},
            }
            return litellm.completion(model=kw["model"], messages=messages, mock_tool_calls=[call])
        return litellm.completion(model=kw["model"], messages=messages, mock_response="Pixel.")


def options(tmp_path: Path, **kw: Any) -> RunOptions:
    return RunOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", echo=lambda m: None, **kw)


def test_offline_gate_rows_and_summary(tiny_locomo: Path, tmp_path: Path) -> None:
    convs, _ = load_locomo(tiny_locomo / "locomo10.json", tiny_locomo / "audit-errors.json")
    rows, wall = offline_hit_rate(convs[:1], options(tmp_path), None, 10)
    assert len(rows) == len(wall) == 6
    assert {r["status"] for r in rows} <= {"ok", "empty", "no_relevant_memory", "skipped_trivial"}
    assert all(len(r["note"]) <= 220 for r in rows)
    summary = summarise(rows)
    assert summary["by_category"]["overall"]["n"] == 6
    assert sum(summary["statuses"].values()) == 6
    # the baseline in the same run: the first search result, clipped to the gate's cap
    overall = summary["by_category"]["overall"]
    assert overall["baseline_hit"] is not None and 0 <= overall["baseline_hit"] <= 1
    assert all(isinstance(r["baseline_hit"], bool) for r in rows)


def test_the_first_result_baseline_is_the_first_hit_clipped(tiny_locomo: Path, tmp_path: Path) -> None:
    convs, _ = load_locomo(tiny_locomo / "locomo10.json", tiny_locomo / "audit-errors.json")
    offline_hit_rate(convs[:1], options(tmp_path), None, 1)  # builds the index
    host = _host(tmp_path / "cache" / "locomo" / convs[0].sample_id)
    try:
        question = convs[0].questions[0].question
        note, cites = first_result_note(host, question)
        found = host.call_tool(
            "memory_search", {"query": question, "corpus": "all", "max_results": 6, "mode": "all"}
        )
    finally:
        host.close()
    top = found["results"][0]
    assert cites and cites[0].startswith(f"{top['path']}#L{top['start_line']}")
    assert len(note) <= 220 and note.endswith(f"({cites[0]})")
    assert note.startswith(" ".join(top["snippet"].split())[:40])


def test_agent_loop_runs_the_memory_tool_through_the_host(tiny_locomo: Path, tmp_path: Path) -> None:
    from lifelong_evals.suite_gate import _host
    from lifelong_evals.suite_retrieval import index_conversation

    convs, _ = load_locomo(tiny_locomo / "locomo10.json", None)
    root = tmp_path / "ws"
    index_conversation(convs[0], root, lambda m: None)
    host = _host(root)
    model = ScriptedModel()
    try:
        answer, calls = agent_answer(model, "gpt-4o-mini", "system", "What is the name of Ada's dog?", host)
    finally:
        host.close()
    assert answer == "Pixel." and calls == 1
    tool_message = next(m for m in model.calls[-1]["messages"] if m["role"] == "tool")
    assert "Pixel" in tool_message["content"]  # the real search result went back to the model


def test_lazy_default_gap_with_mocked_model(tiny_locomo: Path, tmp_path: Path) -> None:
    convs, _ = load_locomo(tiny_locomo / "locomo10.json", None)
    opts = options(tmp_path, model="gpt-4o-mini")
    gap = lazy_default_gap(
        convs[:1], opts, complete=ScriptedModel(), n_questions=2, gate_options={"mock_response": "NONE"}
    )
    assert gap["status"] == "ok" and gap["questions"] == 2
    assert gap["conditions"]["told"] == {"accuracy": 1.0, "used_memory_tool": 1.0}
    assert set(gap["conditions"]) == {"told", "casual", "casual+gate"}


def test_lazy_default_gap_skips_without_a_model(tmp_path: Path) -> None:
    assert lazy_default_gap([], options(tmp_path))["status"] == "skipped"

    def offline(**kw: Any) -> Any:
        raise litellm.AuthenticationError("no key", llm_provider="openai", model="gpt-4o-mini")

    gap = lazy_default_gap([], options(tmp_path, model="gpt-4o-mini"), complete=offline)
    assert gap["status"] == "skipped" and "unavailable" in gap["reason"]
