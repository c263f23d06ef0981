"""An existing OpenClaw workspace works as is: indexed, consolidated, searched; OpenClaw's own
blocks, diary and stores are left byte for byte; nothing OpenClaw reads is broken."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lifelong.cli import cli

OPENCLAW_MEMORY = """# MEMORY.md - Long-Term Memory

## Preferences
- Prefers short answers; metric units.

## Promoted From Short-Term Memory (2026-03-10)

<!-- openclaw-memory-promotion:memory:memory/2026-03-04.md:3:3 -->
- Booked the team offsite at Gut Boltenhagen for April 14-16. [score=0.866 recalls=3 avg=0.917 source=memory/2026-03-04.md:3-3]
"""
OPENCLAW_DREAMS = """# Dream Diary

<!-- openclaw:dreaming:diary:start -->
---

*March 10, 2026 at 3:00 AM GMT+1*

The offsite kept surfacing tonight, a coastline in every query.

<!-- openclaw:dreaming:diary:end -->
"""
DAILIES = {
    "memory/2026-03-04.md": "# 2026-03-04\n\n- Booked the team offsite at Gut Boltenhagen for April 14-16.\n",
    "memory/2026-03-05-pitch-prep.md": "# 2026-03-05 pitch prep\n\n- Decision: the pitch opens with the live sync demo.\n",
    "memory/2026-03-06.md": "# 2026-03-06\n\n- Decision: the pitch opens with the live sync demo.\n- Lunch was soup.\n",
    "memory/2026-03-07.md": "# 2026-03-07\n\n- Decision: the pitch opens with the live sync demo.\n",
}
STORE = {"version": 1, "entries": [{"path": "memory/2026-03-04.md", "startLine": 3, "recalls": 3}]}


def make_openclaw_workspace(root: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {
        "MEMORY.md": OPENCLAW_MEMORY.encode(),
        "dreams.md": OPENCLAW_DREAMS.encode(),
        "memory/.dreams/short-term-recall.json": json.dumps(STORE).encode(),
        "memory/.dreams/session-corpus/2026-03-07.md": b"- session corpus line, internal to OpenClaw\n",
        **{k: v.encode() for k, v in DAILIES.items()},
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return files


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_an_openclaw_workspace_is_indexed_consolidated_and_left_intact(tmp_path: Path) -> None:
    root = tmp_path / "openclaw"
    root.mkdir()
    files = make_openclaw_workspace(root)
    init = json.loads(run("init", str(root), "--json"))
    assert "MEMORY.md" in init["kept"]  # OpenClaw's MEMORY.md is never replaced
    # a lower promotion bar than the default, so that three days are enough for this small fixture
    (root / "lifelong.yaml").write_text(
        "timezone: Europe/Berlin\nembedding: {provider: local}\nplugins: {dreaming: {min_score: 0.5}}\n"
    )
    w = ["--workspace", str(root)]
    report = json.loads(run(*w, "--now", "2026-03-08T09:00", "index", "--json"))
    assert set(report["changes"]["new"]) == {"MEMORY.md", *DAILIES}  # .dreams/ and dreams.md are not notes
    found = json.loads(run(*w, "--now", "2026-03-08T09:00", "search", "pitch live sync demo", "--json"))
    assert "memory/2026-03-05-pitch-prep.md" in [r["path"] for r in found["results"]]
    slugged = next(r for r in found["results"] if r["path"] == "memory/2026-03-05-pitch-prep.md")
    assert slugged["source_date"] == "2026-03-05"
    for day in ("2026-03-08", "2026-03-09", "2026-03-10"):
        for q in ("pitch opens with", "what did we decide about the pitch", "pitch sync demo decision"):
            run(*w, "--now", f"{day}T10:00", "search", q)
        run(*w, "--now", f"{day}T23:00", "dream")
    run(*w, "--now", "2026-03-11T03:00", "dream")
    memory = (root / "MEMORY.md").read_text()
    assert memory.startswith(OPENCLAW_MEMORY)  # every byte OpenClaw wrote is still there, first
    assert "<!-- openclaw-memory-promotion:memory:memory/2026-03-04.md:3:3 -->" in memory
    assert memory.count("Gut Boltenhagen") == 1  # OpenClaw's promotion counts as already remembered
    ours = memory[len(OPENCLAW_MEMORY) :]
    assert "<!-- lifelong:" in ours and "pitch opens with the live sync demo" in ours.casefold()
    assert (root / "dreams.md").read_bytes().startswith(files["dreams.md"])  # the diary block untouched
    assert not (root / "DREAMS.md").exists() or (root / "DREAMS.md").samefile(root / "dreams.md")
    for rel in ("memory/.dreams/short-term-recall.json", "memory/.dreams/session-corpus/2026-03-07.md"):
        assert (root / rel).read_bytes() == files[rel]
    for rel in DAILIES:
        assert (root / rel).read_bytes() == files[rel]
