"""`lifelong demo` end to end, offline, with the bundled embedder: every layer shows up."""

from __future__ import annotations

import struct
from pathlib import Path

from click.testing import CliRunner

from lifelong.cli import cli


def test_the_demo_walks_through_every_layer(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(root)])
    out = result.output
    assert result.exit_code == 0, out[-3000:]
    # recall, the gate and the nightly replay
    assert "Source: memory/" in out and "Untrusted context" in out
    assert "MEMORY.md grew from" in out
    # the wiki: a page whose claims carry evidence, and the planted contradiction reported
    assert "wiki get concept.offsite" in out and "memory/2026-03-06.md#L5-L5 [ok]" in out
    report = (root / "wiki" / "reports" / "contradictions.md").read_text()
    assert "EUR 6400" in report.replace(",", "") and "EUR 7200" in report.replace(",", "")
    # things remembered night by night, as a table and a real PNG
    assert "Things I remember about you, night by night" in out
    png = (root / "remembered-by-night.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert width > 100 and height > 100
    # a supersede: the newer budget closes the older facts, and search returns only it
    assert "supersede: memory/2026-03-24.md" in out
    now = out.split("What is true now", 1)[1].split("== Where to look", 1)[0]
    assert "EUR 7,500" in now and "EUR 6,400" not in now and "EUR 7,200" not in now
    assert "== Where to look" in out and str(root / "MEMORY.md") in out
