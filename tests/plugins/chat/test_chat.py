"""lifelong chat, driven offline through a scripted stdin session (with a compaction)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from lifelong_plugins.demo.commands import create_demo_workspace

from lifelong.cli import cli

SCRIPT = "\n".join(
    [
        "what did we decide about the pitch?",
        "/memory verbose on",
        "where is the team offsite?",
        "/note The SSL cert for api.tidewater.io expires June 12",
        "/memory search offsite budget",
        "by the way, the storage unit key is with Priya at number 14, she leaves on Friday",
        "/compact",
        "/memory status",
        "/memory gate off",
        "where is the team offsite?",
        "/quit",
    ]
)


def test_offline_chat_wires_every_hook(tmp_path) -> None:
    root = tmp_path / "demo"
    create_demo_workspace(root)
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    result = CliRunner().invoke(
        cli, ["-w", str(root), "--now", "2026-03-24T10:00", "chat", "--session", "t1"], input=SCRIPT + "\n"
    )
    assert result.exit_code == 0, result.output
    out = result.output.splitlines()
    assert out[0].startswith("lifelong chat (offline mode: no model configured")
    assert out[1].startswith("(offline) From memory: ") and "pitch" in out[1]
    assert any(line.startswith("[Memory gate: ok") for line in out)  # verbose shows the gate line
    assert any("Gut Boltenhagen" in line and line.startswith("(offline) From memory") for line in out)
    assert any(line.startswith("  Source: ") for line in out)  # /memory search
    assert any(line.startswith("[memory] compacted") and "captured" in line for line in out)
    off = out.index("[memory] gate off")
    assert out[off + 1] == "(offline) Nothing in memory bears on that."  # the gate switched off
    daily = (root / "memory" / "2026-03-24.md").read_text()
    assert "- The SSL cert for api.tidewater.io expires June 12" in daily  # /note
    assert "## Session t1 (10:00)" in daily and "the user said: what did we decide about the pitch?" in daily
    captured = list((root / "memory" / "captured").rglob("*.md"))
    assert any("storage unit key is with Priya" in p.read_text() for p in captured)  # flushed by /compact
    audit = json.loads(CliRunner().invoke(cli, ["-w", str(root), "audit", "--json"]).output)
    writers = {e["plugin"] for e in audit["entries"]}
    assert {"chat_note", "session_end", "flush"} <= writers
