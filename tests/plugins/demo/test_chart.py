"""The demo's night-by-night chart: labelled with matplotlib, plain (and saying so) without it."""

from __future__ import annotations

import struct
import sys

import pytest
from lifelong_plugins.demo.chart import nightly_chart

from tests.e2e.test_demo import png_text

NIGHTS = ["2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06"]
NEW = [0, 2, 0, 1]
TOTALS = [0, 2, 2, 3]


def size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def test_with_matplotlib_the_chart_has_a_title_and_says_nothing_about_a_fallback() -> None:
    png, note = nightly_chart(NIGHTS, NEW, TOTALS)
    assert note is None
    assert png_text(png)["Title"].startswith("Things remembered")
    width, height = size(png)
    assert width >= 600 and height >= 300


def test_without_matplotlib_a_plain_chart_is_drawn_and_the_note_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    png, note = nightly_chart(NIGHTS, NEW, TOTALS)
    assert note is not None and "matplotlib is not installed" in note
    assert "Title" not in png_text(png)
    width, height = size(png)
    assert width > 50 and height > 100
