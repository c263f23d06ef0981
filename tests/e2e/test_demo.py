"""`lifelong demo` end to end, offline, with the bundled embedder: every layer shows up."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from lifelong.cli import cli


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One run of the demo (the whole walk-through) for the tests of this module."""
    root = tmp_path_factory.mktemp("demo") / "demo"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(root)])
    assert result.exit_code == 0, result.output[-3000:]
    return root, result.output


def test_the_demo_walks_through_every_layer(demo: tuple[Path, str]) -> None:
    root, out = demo
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
    # matplotlib is installed with the test extra: the chart is titled and labelled, not the plain one
    assert "matplotlib is not installed" not in out
    assert png_text(png).get("Title", "").startswith("Things remembered")
    assert width >= 600 and height >= 300
    # a supersede: the newer budget closes the older facts, and search returns only it
    assert "supersede: memory/2026-03-24.md" in out
    now = out.split("What is true now", 1)[1].split("== Where to look", 1)[0]
    assert "EUR 7,500" in now and "EUR 6,400" not in now and "EUR 7,200" not in now
    assert "== Where to look" in out and str(root / "MEMORY.md") in out


def png_text(png: bytes) -> dict[str, str]:
    """The PNG's tEXt / zTXt chunks (keyword -> text)."""
    out, pos = {}, 8
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        if kind == b"tEXt":
            key, _, value = data.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = data.partition(b"\0")
            out[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        pos += 12 + length
    return out


def test_the_demo_shows_memory_md_as_written_and_dates_each_dream_once(demo: tuple[Path, str]) -> None:
    root, out = demo
    # MEMORY.md is the user's own file shown to the user: printed as it is on disk
    shown = out.split("cited item(s):", 1)[1].split("\n== ", 1)[0]
    assert "[withheld" not in shown
    assert (root / "MEMORY.md").read_text("utf-8").rstrip() in shown
    # the replay and the night-by-night table name a promotion by the same date: the dream's
    replay = out.split("dream replay", 1)[1].split("MEMORY.md grew from", 1)[0]
    by_replay = {
        day: int(n) for day, n in re.findall(r"dream at (\d{4}-\d\d-\d\d) 03:00: (\d+) promoted", replay)
    }
    table = out.split("night by night", 1)[1].split("\n== ", 1)[0]
    by_table = {day: int(n) for day, n, _ in re.findall(r"^(\d{4}-\d\d-\d\d)\s+(\d+)\s+(\d+)", table, re.M)}
    assert by_replay and by_replay == {day: n for day, n in by_table.items() if n}
    # and MEMORY.md's own record of when each item was promoted says the same
    on = re.findall(r"on:(\d{4}-\d\d-\d\d)", (root / "MEMORY.md").read_text("utf-8"))
    assert sorted(set(on)) == sorted(by_replay)
