"""`lifelong dream ...` through the real CLI (click's runner, real workspaces)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lifelong.cli import cli
from lifelong.host import Host
from lifelong.workspace import Workspace

from .conftest import BERLIN, at, record_event  # noqa: F401

DAILY = (
    "# 2026-03-04\n\n## Investor pitch\n"
    "- Decision: the pitch opens with the live offline sync demo, market size moves to slide 9.\n"
    "- Weather was grim, stayed in all day.\n"
)
QUERIES = [
    ("2026-03-05", "how does the pitch open"),
    ("2026-03-06", "pitch opening slide"),
    ("2026-03-07", "what opens the pitch"),
    ("2026-03-07", "pitch opener"),
    ("2026-03-09", "pitch structure"),
    ("2026-03-09", "how does the pitch open"),
]


def cli_run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    cli_run("init", str(root))
    (root / "MEMORY.md").write_text(
        "# MEMORY\n\n## About me\n- I'm Maya, founder of Tidewater Labs.\n"
        "- Based in Berlin; I prefer short, direct answers and metric units.\n\n## Sticky\n"
        "- Never schedule meetings before 10:00 on Mondays. <!-- sticky -->\n"
    )
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    for rel in list((root / "memory").glob("*.md")):
        rel.unlink()
    (root / "memory/2026-03-04.md").write_text(DAILY)
    host = Host(Workspace(root), builtins=("embeddings", "recall", "dreaming"), entry_points=False)
    for n, (day, q) in enumerate(QUERIES):
        record_event(host, "memory/2026-03-04.md", 1, 6, q, at(day, 10 + n))
    host.close()
    return root


def test_dream_help_lists_its_subcommands() -> None:
    out = cli_run("dream", "--help").output
    for name in (
        "explain",
        "rollback",
        "history",
        "schedule",
        "replay",
        "--dry-run",
        "--backfill",
        "--json",
    ):
        assert name in out


def test_dry_run_then_run_then_history_explain_rollback(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    w = ["--workspace", str(root), "--now", "2026-03-10T03:00"]
    memory_before = (root / "MEMORY.md").read_bytes()
    dry = cli_run(*w, "dream", "--dry-run").output
    assert "dry run (nothing written)" in dry and "1 would be promoted" in dry
    assert "rel 0.70 freq" in dry and "Source: memory/2026-03-04.md#L4-L4" in dry
    assert (root / "MEMORY.md").read_bytes() == memory_before

    data = json.loads(cli_run(*w, "dream", "--json").output)
    assert data["version"] == 1 and data["status"] == "ok"
    assert [p["text"] for p in data["promoted"]] == [DAILY.splitlines()[3][2:]]
    key, run_id = data["promoted"][0]["key"], data["run_id"]
    assert f"key:{key} src:memory/2026-03-04.md#L4-L4" in (root / "MEMORY.md").read_text()

    hist = json.loads(cli_run(*w, "dream", "history", "--json").output)
    assert hist["version"] == 1 and hist["runs"][0]["run_id"] == run_id
    assert run_id in cli_run(*w, "dream", "history").output

    explained = cli_run(*w, "dream", "explain", key).output
    assert "status promoted" in explained and "'pitch opener'" in explained and "gates: pass" in explained
    assert json.loads(cli_run(*w, "dream", "explain", key, "--json").output)["signals"]["recalls"] == 6

    # a human edit since the run: rollback refuses with one line, --force keeps the edit
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text().replace("metric units.", "metric units, always."))
    refused = cli_run(*w, "dream", "rollback", run_id, code=1)
    assert refused.output.count("\n") == 1 and refused.output.startswith(
        "error: MEMORY.md was edited after run"
    )
    pre_force = memory.read_bytes()
    forced = cli_run(*w, "dream", "rollback", run_id, "--force").output
    assert f"{run_id}: rolled back (forced: edits made since kept in MEMORY.md)" in forced
    undo_id = forced.split("`lifelong dream rollback ")[1].split("`")[0]
    text = memory.read_text()
    assert "metric units, always." in text and f"key:{key}" not in text
    assert "rolled_back" in cli_run(*w, "dream", "history").output
    # the forced rollback is itself reversible: undoing it brings back the run's item and the edit
    cli_run(*w, "dream", "rollback", undo_id)
    assert memory.read_bytes() == pre_force
    assert "status promoted" in cli_run(*w, "dream", "explain", key).output
    runs = {
        r["run_id"]: r["status"] for r in json.loads(cli_run(*w, "dream", "history", "--json").output)["runs"]
    }
    assert runs == {run_id: "ok", undo_id: "rolled_back"}


def test_a_second_concurrent_run_fails_with_one_line(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    with Workspace(root).lock("dream"):
        result = cli_run("--workspace", str(root), "dream", code=1)
    assert result.output.count("\n") == 1
    assert result.output.startswith("error: another lifelong process holds the 'dream' lock")


def test_unknown_run_and_key_are_one_line_errors(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    w = ["--workspace", str(root)]
    assert cli_run(*w, "dream", "rollback", "20990101-030000-zzzz", code=1).output.startswith(
        "error: no dream run"
    )
    assert cli_run(*w, "dream", "explain", "abcdef", code=1).output.startswith("error: no candidate with key")


def test_replay_demo_grows_memory_with_the_durable_facts_only(tmp_path: Path) -> None:
    """The demo's replay script on the demo workspace, with the real local embedder."""
    from lifelong_plugins.demo.commands import REPLAY_SCRIPT, create_demo_workspace

    root = tmp_path / "demo"
    create_demo_workspace(root)
    before = (root / "MEMORY.md").read_text()
    out = json.loads(
        cli_run(
            "--workspace",
            str(root),
            "--now",
            "2026-03-24T09:00",
            "dream",
            "replay",
            str(REPLAY_SCRIPT),
            "--json",
        ).output
    )
    assert out["version"] == 1 and len(out["nights"]) == 22
    promoted = [p for night in out["nights"] for p in night["promoted"]]
    texts = " | ".join(p["text"] for p in promoted)
    assert "the pitch opens with the live offline sync demo" in texts
    assert "Gut Boltenhagen" in texts
    assert "Android release" in texts and "April 28" in texts
    for one_off in ("espresso", "standing desk", "Weather", "Lunch", "Dentist"):
        assert one_off not in texts
    memory = (root / "MEMORY.md").read_text()
    assert memory.startswith(before)  # human text untouched, items appended in managed sections
    for p in promoted:
        assert f"key:{p['key']} src:" in memory and p["source"] in memory
    assert out["memory_bytes_after"] > out["memory_bytes_before"]
    again = cli_run("--workspace", str(root), "dream", "replay", str(REPLAY_SCRIPT), code=1).output
    assert again.startswith("error: this workspace already has dream runs")
