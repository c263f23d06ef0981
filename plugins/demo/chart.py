"""A small PNG bar chart with no plotting library (the demo runs on the base install, which has no
matplotlib): one bar per night, its height the number of things remembered after that night.

``bar_chart_png(values)`` returns the PNG bytes: white background, grey axis, one blue bar per
value scaled to the largest, and a 5-pixel-high tick under every seventh bar (a week)."""

from __future__ import annotations

import struct
import zlib

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
