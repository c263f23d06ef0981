"""The demo's chart of what was remembered night by night: one bar per nightly dream, its height
the number of items in MEMORY.md after it.

``nightly_chart`` draws it with matplotlib when it is installed (the ``eval`` and ``test`` extras
bring it; the base install does not): a title, labelled axes, tick values and each night's new
items above its bar. Without matplotlib it draws the plain chart of ``bar_chart_png`` (white
background, grey axes, blue bars scaled to the largest, a tick under every seventh bar; no text)
and says so."""

from __future__ import annotations

import io
import struct
import zlib

TITLE = "Things remembered, night by night"

WHITE = (255, 255, 255)
AXIS = (120, 120, 120)
BAR = (52, 101, 164)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def encode_png(pixels: list[list[tuple[int, int, int]]]) -> bytes:
    """RGB rows (top first) as a PNG file."""
    height, width = len(pixels), len(pixels[0]) if pixels else 0
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )


def bar_chart_png(
    values: list[int], *, bar: int = 14, gap: int = 4, height: int = 160, margin: int = 12
) -> bytes:
    """One bar per value (a night), scaled to the largest value; an empty list gives an empty axis."""
    n = max(len(values), 1)
    width = 2 * margin + n * (bar + gap)
    total_h = height + 2 * margin
    pixels = [[WHITE] * width for _ in range(total_h)]
    base = margin + height  # the x axis row
    top = max(values) if values and max(values) > 0 else 1
    for i, value in enumerate(values):
        h = round(height * value / top)
        x0 = margin + i * (bar + gap) + gap // 2
        for y in range(base - h, base):
            row = pixels[y]
            for x in range(x0, x0 + bar):
                row[x] = BAR
        if i % 7 == 0:
            for y in range(base, min(total_h, base + 5)):
                pixels[y][x0] = AXIS
    for x in range(margin, width - margin):
        pixels[base][x] = AXIS
    for y in range(margin, base + 1):
        pixels[y][margin] = AXIS
    return encode_png(pixels)


def nightly_chart(nights: list[str], new: list[int], totals: list[int]) -> tuple[bytes, str | None]:
    """The PNG of the nights (ISO dates of the 03:00 dreams), the items each promoted and the
    total after each; and None, or a note saying why the chart is the plain one."""
    try:
        return labelled_chart_png(nights, new, totals), None
    except ImportError:
        return bar_chart_png(totals), (
            "a plain chart without title, axis labels or values: matplotlib is not installed "
            "(pip install matplotlib, or the eval extra, for a labelled one)"
        )


def labelled_chart_png(nights: list[str], new: list[int], totals: list[int]) -> bytes:
    """The chart drawn by matplotlib (Agg, no window; ImportError when it is not installed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(8, 4), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x = list(range(len(nights)))
    bars = ax.bar(x, totals, color="#3465a4", width=0.75)
    ax.bar_label(bars, labels=[f"+{n}" if n else "" for n in new], padding=2, fontsize=8, color="#204a87")
    ax.set_title(TITLE)
    year = f"{nights[0][:4]}, " if nights else ""
    ax.set_xlabel(f"night ({year}month-day: the dream at 03:00 on that date)")
    ax.set_ylabel("items in MEMORY.md")
    ax.set_xticks(x, [night[5:] for night in nights], rotation=60, fontsize=8)  # MM-DD
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max([*totals, 1]) * 1.15 + 0.5)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Title": TITLE, "Software": "lifelong demo"})
    return out.getvalue()
