"""Issue 41: the same line in a daily, in MEMORY.md and on wiki pages took two or three of the
six results the gate reads (a wiki claim's trailer kept MMR from seeing the copy), and the line
that held the current value fell out."""

from __future__ import annotations

import datetime as dt

from lifelong_plugins.recall.scoring import mmr

from lifelong.contracts import Candidate

LINE = "Mias Handy mag unser WLAN nicht, network is o2-WLAN-4F21, had to type the password zweimal"


def cand(i: int, path: str, text: str, score: float, day: str | None = None) -> Candidate:
    stamp = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() if day else None
    return Candidate(i, path, 3, 3, text, source_date=stamp, evergreen=day is None, score=score)


def test_the_copies_of_a_line_are_one_result() -> None:
    pool = [
        cand(1, "memory/2026-06-20.md", f"- {LINE}", 0.9, "2026-06-20"),
        cand(
            2,
            "wiki/entities/mias-handy.md",
            f"- {LINE} — unconfirmed, confidence 0.50 (claim.ea18e31edc); evidence: `memory/2026-06-20.md#L4-L4`",
            0.8,
        ),
        cand(3, "wiki/entities/wlan.md", f"- {LINE} (claim.ea18e31edc)", 0.75),
        cand(
            4,
            "MEMORY.md",
            f'- ~~{LINE}~~ (superseded by "unser Netz heißt Hinterhof-Netz…", 2026-06-28) <!-- key:0123456789ab -->',
            0.7,
        ),
        cand(
            5,
            "memory/2026-06-28.md",
            "- Felix hat den neuen Router angeschlossen, unser Netz heißt Hinterhof-Netz",
            0.6,
            "2026-06-28",
        ),
    ]
    picked = [c.chunk_id for c in mmr(pool, lam=0.7, limit=6, drop_above=0.85)]
    assert picked == [1, 5]  # the claim, the mention and the struck item are copies of 1
