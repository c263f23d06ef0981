from __future__ import annotations

from pathlib import Path

import pytest
from lifelong_evals import bench_gate


def test_gate_benchmark_builds_its_workspace_and_answers_every_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The latency benchmark runs end to end on a small workspace: its build-only embedder meets
    the Embedder contract the indexer calls (it lacked ``status_warning`` and the benchmark
    crashed before timing anything), and every timed gate call answers."""
    bench_gate.main(["--chunks", "120", "--queries", "3", "--dir", str(tmp_path / "ws")])
    out = capsys.readouterr().out
    assert out.count("statuses {'ok': 3}") == 2  # both settings, every call answered
    assert "offline gate p95" in out
