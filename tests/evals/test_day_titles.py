"""evals.day_titles on a small lines file: each reader's verdicts and the figures it prints."""

from __future__ import annotations

from pathlib import Path

import yaml

from evals import day_titles

LINES = [
    {"id": "t1", "lang": "tr", "line": "12 Mart Çar", "title": True},
    {"id": "t2", "lang": "ja", "line": "4月16日(月) 晴れ", "title": True},
    {"id": "t3", "lang": "en", "line": "Mon: dentist 3pm", "title": False},
    {"id": "t4", "lang": "de", "line": "Sa 10 Uhr Flohmarkt", "title": False},
]


def test_each_reader_reads_each_line_and_the_set_is_scored(tmp_path: Path, capsys) -> None:
    path = tmp_path / "titles.yaml"
    path.write_text(yaml.safe_dump({"lines": LINES}, allow_unicode=True), encoding="utf-8")
    result = day_titles.run(path)
    core = result["readers"]["core title_line"]
    assert {r["id"]: r["read"] for r in core["rows"]} == {"t1": True, "t2": True, "t3": False, "t4": True}
    assert core["accuracy"] == 0.75 and core["titles_read_titles"] == 1.0 and core["statements_kept"] == 0.5
    assert result["readers"]["baseline: every line a statement"]["accuracy"] == 0.5
    assert core["by_script"]["Han"]["lines"] == 1 and core["by_script"]["Latin"]["lines"] == 3
    day_titles.main(["--lines", str(path), "--misses"])
    out = capsys.readouterr().out
    assert "core title_line" in out and "miss [core title_line] t4 de title=False" in out
