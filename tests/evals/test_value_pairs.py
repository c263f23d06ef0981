"""evals.value_pairs on a small pairs file: each reader's verdicts and the figures it prints."""

from __future__ import annotations

from pathlib import Path

import yaml

from evals import value_pairs

PAIRS = [
    {"id": "p1", "kind": "flight", "a": "Ravi's flight EK 005", "b": "Ravi on EK5 from Dubai", "same": True},
    {"id": "p2", "kind": "email", "a": "j_okafor@mailbox.org", "b": "j.okafor@mailbox.org", "same": False},
    {
        "id": "p3",
        "kind": "date",
        "a": "Ultrasound 2026-03-14",
        "b": "scan is Saturday 14th March",
        "same": True,
    },
    {"id": "p4", "kind": "time", "a": "yoga at quarter to eight", "b": "yoga 8:15", "same": False},
]


def test_each_reader_reads_both_lines_and_the_pair_is_scored(tmp_path: Path, capsys) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(yaml.safe_dump({"pairs": PAIRS}), encoding="utf-8")
    result = value_pairs.run(path)
    rows = {r["id"]: r["verdict"] for r in result["readers"]["core typed_values"]["rows"]}
    # the core reads the flight without its zeros, the e-mails whole, the date's year from the
    # other line; the spoken time is unread
    assert rows == {"p1": "same", "p2": "different", "p3": "same", "p4": "unread"}
    core = result["readers"]["core typed_values"]
    assert core["accuracy"] == 0.75 and core["different_merged"] == 0.0
    baseline = {r["id"]: r["verdict"] for r in result["readers"]["baseline: digits"]["rows"]}
    assert baseline["p1"] == "same" and baseline["p2"] == "different"  # "005" is 5; e-mails whole
    value_pairs.main(["--pairs", str(path), "--misses"])
    out = capsys.readouterr().out
    assert "core typed_values" in out and "miss [core typed_values] p4 time" in out
