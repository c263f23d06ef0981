from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner
from lifelong_evals import harness
from lifelong_evals.harness import RunOptions, Suite, SuiteSkipped, eval_command, run_eval


def invoke(*args: str):  # noqa: ANN201
    return CliRunner().invoke(eval_command, list(args), catch_exceptions=False)


def test_list_and_unknown_suite() -> None:
    out = invoke("--list").output
    for name in ("retrieval-locomo", "latency", "consolidation", "gate"):
        assert name in out
    result = CliRunner().invoke(eval_command, ["nope"])
    assert result.exit_code == 2 and "unknown suite(s) nope" in result.output


def test_quick_retrieval_smoke_on_tiny_locomo_is_reproducible(tiny_locomo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    runs = []
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        result = invoke(
            "retrieval-locomo",
            "--quick",
            "--locomo",
            str(tiny_locomo),
            "--out",
            str(out),
            "--cache",
            str(cache),
        )
        assert result.exit_code == 0, result.output
        doc = json.loads((out / "results.json").read_text())
        runs.append(doc)
        assert doc["version"] == 1
        assert set(doc) >= {"git", "config", "packages", "machine", "suites", "command", "created_at"}
        assert doc["config"]["quick"] is True and doc["packages"]["numpy"]
        suite = doc["suites"]["retrieval-locomo"]
        assert suite["status"] == "ok", suite
        res = suite["results"]
        assert res["data"]["conversations"] == ["conv-a"]
        assert res["data"]["questions"] == 6  # category 5 and the evidence-less question left out
        assert set(res["metrics"]) == {"hybrid", "bm25", "bm25-turns"}
        # every chunk of this 3-session workspace reaches the hybrid candidates: all in the top 3
        assert res["metrics"]["hybrid"]["overall"]["recall_any@3"] == 1.0
        report = (out / "report.md").read_text()
        assert "## retrieval-locomo" in report and "| overall | 6 |" in report
        png = out / "retrieval-locomo-recall-at-k.png"
        assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
        lines = (out / "retrieval-locomo-questions.jsonl").read_text().splitlines()
        assert len(lines) == 6
    # the second run reused the cached index (nothing embedded) and gave the same figures
    assert runs[1]["suites"]["retrieval-locomo"]["results"]["indexing"]["conv-a"]["embedded"] == 0
    assert (
        runs[0]["suites"]["retrieval-locomo"]["results"]["metrics"]
        == runs[1]["suites"]["retrieval-locomo"]["results"]["metrics"]
    )


def test_missing_data_skips_and_a_failing_suite_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = types.ModuleType("evals_test_broken_suite")

    def boom(opts: RunOptions) -> dict:
        raise RuntimeError("synthetic failure")

    broken.run = boom  # type: ignore[attr-defined]
    skipping = types.ModuleType("evals_test_skipping_suite")

    def skip(opts: RunOptions) -> dict:
        raise SuiteSkipped("nothing to do here")

    skipping.run = skip  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, broken.__name__, broken)
    monkeypatch.setitem(sys.modules, skipping.__name__, skipping)
    monkeypatch.setitem(harness.SUITES, "broken", Suite("broken", broken.__name__, "fails"))
    monkeypatch.setitem(harness.SUITES, "skipping", Suite("skipping", skipping.__name__, "skips"))
    out = tmp_path / "out"
    opts = RunOptions(
        out_dir=out, quick=True, locomo=tmp_path / "absent", cache_dir=tmp_path / "cache", echo=lambda m: None
    )
    doc = run_eval(["retrieval-locomo", "skipping", "broken"], opts, ["test"])
    s = doc["suites"]
    assert (
        s["retrieval-locomo"]["status"] == "skipped"
        and "LoCoMo data not found" in s["retrieval-locomo"]["reason"]
    )
    assert s["skipping"] == {**s["skipping"], "status": "skipped", "reason": "nothing to do here"}
    assert s["broken"]["status"] == "failed" and "synthetic failure" in s["broken"]["error"]
    report = (out / "report.md").read_text()
    assert "Skipped: nothing to do here" in report and "Failed: `RuntimeError: synthetic failure`" in report
    saved = json.loads((out / "results.json").read_text())
    assert "Traceback" in saved["suites"]["broken"]["traceback"]


def test_command_exits_1_when_a_suite_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("evals_test_broken_suite2")

    def boom(opts: RunOptions) -> dict:
        raise ValueError("bad")

    broken.run = boom  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, broken.__name__, broken)
    monkeypatch.setitem(harness.SUITES, "broken", Suite("broken", broken.__name__, "fails"))
    result = CliRunner().invoke(
        eval_command, ["broken", "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c")]
    )
    assert result.exit_code == 1
    assert "broken" in result.output and "failed" in result.output


def test_lifelong_cli_has_the_eval_command() -> None:
    from lifelong.cli import cli

    result = CliRunner().invoke(cli, ["eval", "--list"])
    assert result.exit_code == 0 and "retrieval-locomo" in result.output


def _suite_module(name: str, plots) -> types.ModuleType:  # noqa: ANN001 - the plots callable
    module = types.ModuleType(name)
    module.run = lambda opts: {"figure": 0.5}  # type: ignore[attr-defined]
    module.report = lambda results: f"figure {results['figure']}"  # type: ignore[attr-defined]
    module.plots = plots  # type: ignore[attr-defined]
    return module


def test_a_suite_whose_plots_fail_is_degraded_not_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_matplotlib(results, out_dir):  # noqa: ANN001, ANN202
        raise ModuleNotFoundError("No module named 'matplotlib'")

    module = _suite_module("evals_test_plotless", no_matplotlib)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(harness.SUITES, "plotless", Suite("plotless", module.__name__, "plots fail"))
    result = CliRunner().invoke(
        eval_command, ["plotless", "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c")]
    )
    assert result.exit_code == 0  # the figures were measured
    assert (
        "plotless          degraded (figures measured, plots not drawn: ModuleNotFoundError" in result.output
    )
    assert "pip install -e ./evals" in result.output
    report = (tmp_path / "o" / "report.md").read_text()
    assert "**Degraded**" in report and "figure 0.5" in report


def test_nothing_measured_exits_non_zero_and_says_where_locomo_is(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        eval_command,
        ["retrieval-locomo", "--quick", "--locomo", str(tmp_path / "absent"), "--out", str(tmp_path / "o"),
         "--cache", str(tmp_path / "c")],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "retrieval-locomo  skipped (LoCoMo data not found at" in result.output
    assert "github.com/snap-research/LoCoMo" in result.output
    assert "error: nothing was measured (every suite was skipped)" in result.output
