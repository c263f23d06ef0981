from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from lifelong import __version__
from lifelong.cli import cli
from lifelong.host import is_builtin, plugin_entry_points

BUILTINS = sorted(ep.name for ep in plugin_entry_points() if is_builtin(ep))

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_version() -> None:
    assert __version__ in run("--version").output


def test_init_then_status_json_lists_all_plugins(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    created = json.loads(run("init", str(ws), "--json").output)
    assert sorted(created["created"]) == [
        "MEMORY.md",
        "lifelong-agent.md",
        "lifelong.yaml",
        "memory/",
        "wiki/",
    ]
    assert created["kept"] == []
    data = json.loads(run("--workspace", str(ws), "status", "--json").output)
    assert data["version"] == 1
    ids = [p["id"] for p in data["plugins"]]
    assert sorted(ids) == BUILTINS
    assert [p["order"] for p in data["plugins"]] == sorted(p["order"] for p in data["plugins"])
    for p in data["plugins"]:
        assert p["status"] == "loaded" and p["hooks"], p
    assert data["index"]["sqlite_version"].startswith("3.")
    assert data["embedding"]["provider"] == "local"


def test_init_creates_an_empty_workspace_in_the_machines_zone(tmp_path: Path) -> None:
    from lifelong import clock

    ws = tmp_path / "new"
    run("init", str(ws))
    assert list((ws / "memory").iterdir()) == [] and (ws / "wiki").is_dir()
    memory = (ws / "MEMORY.md").read_text()
    assert memory.startswith("# MEMORY") and "Maya" not in memory and "<!--" not in memory.split("`")[0]
    config = (ws / "lifelong.yaml").read_text()
    assert f"timezone: {clock.system_timezone_name()}" in config and "Europe/Berlin" not in config
    # the workspace is valid: status loads it
    assert json.loads(run("--workspace", str(ws), "status", "--json").output)["timezone"]


def test_init_never_overwrites(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_bytes(b"my own memory\r\n")
    out = json.loads(run("init", str(ws), "--json").output)
    assert "MEMORY.md" in out["kept"]
    assert (ws / "MEMORY.md").read_bytes() == b"my own memory\r\n"
    # an OpenClaw workspace with lowercase memory.md gets no second memory file
    oc = tmp_path / "oc"
    oc.mkdir()
    (oc / "memory.md").write_text("mine\n")
    out = json.loads(run("init", str(oc), "--json").output)
    assert "MEMORY.md" in out["kept"]
    assert sorted(p.name for p in oc.iterdir() if p.name.lower() == "memory.md") == ["memory.md"]


def test_errors_are_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lifelong", "--workspace", str(tmp_path / "nope"), "status"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error: ")
    ws = tmp_path / "ws"
    run("init", str(ws))
    (ws / "lifelong.yaml").write_text("plugins:\n  recall: {min_score: 7}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "lifelong", "--workspace", str(ws), "status"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "error: plugins.recall.min_score: invalid value 7 (allowed: a number from 0 to 1)"
    )


def test_plugins_command_without_workspace(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LIFELONG_WORKSPACE", raising=False)
    out = json.loads(run("plugins", "--json").output)
    assert sorted(p["id"] for p in out["plugins"]) == BUILTINS


def _all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        full = f"{prefix} {name}".strip()
        out.append((full, cmd))
        if isinstance(cmd, click.Group):
            out.extend(_all_commands(cmd, full))
    return out


def test_every_command_has_help_and_is_documented() -> None:
    cli.load_plugin_commands()
    doc = (ROOT / "docs" / "cli.md").read_text()
    documented = set(re.findall(r"^#+ `lifelong ([a-z][a-z -]*?)(?: \[| [A-Z]| -|`)", doc, flags=re.M))
    for name, cmd in _all_commands(cli):
        assert (cmd.help or "").strip(), f"lifelong {name} has no help text"
        result = run(*name.split(), "--help")
        assert "Usage:" in result.output
        assert name in documented, f"lifelong {name} is not documented in docs/cli.md"


# --- newcomer defects (issue 15): each test failed before its fix ----------------------------------


def _demo_like(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    run("init", str(ws))
    (ws / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    (ws / "memory" / "2026-03-04.md").write_text("# 2026-03-04\n\n- Booked the offsite at Gut Boltenhagen.\n")
    (ws / "memory" / "2026-03-16.md").write_text(
        "# 2026-03-16\n\n- The offsite venue changed to Schloss Kampen.\n"
    )
    return ws


def test_now_is_accepted_after_any_subcommand_too(tmp_path: Path) -> None:
    ws = _demo_like(tmp_path)
    before = run("--workspace", str(ws), "--now", "2026-03-20T09:00", "status", "--json").output
    after = run("--workspace", str(ws), "status", "--json", "--now", "2026-03-20T09:00").output
    assert json.loads(before)["now"] == json.loads(after)["now"] == "2026-03-20T09:00:00+01:00"
    out = run("--workspace", str(ws), "search", "offsite venue", "--json", "--now", "2026-03-20T09:00").output
    assert json.loads(out)["results"]
    # a subcommand of a group takes it too
    assert run("--workspace", str(ws), "dream", "history", "--now", "2026-03-20T09:00").exit_code == 0
    for name, _cmd in _all_commands(cli):
        assert "--now" in run(*name.split(), "--help").output, name


def test_a_misspelled_plugin_name_is_refused_by_every_command(tmp_path: Path) -> None:
    ws = _demo_like(tmp_path)
    (ws / "lifelong.yaml").write_text("embedding: {provider: none}\nplugins:\n  recal: {min_score: 0.1}\n")
    for args in (["status"], ["search", "offsite"], ["index"]):
        result = CliRunner().invoke(cli, ["--workspace", str(ws), *args])
        assert result.exit_code == 1, args
        assert result.output.startswith("error: plugins.recal: no such plugin (installed: ")


def test_an_unknown_time_zone_is_refused_at_load(tmp_path: Path) -> None:
    ws = _demo_like(tmp_path)
    (ws / "lifelong.yaml").write_text("timezone: Mars/Olympus\n")
    result = CliRunner().invoke(cli, ["--workspace", str(ws), "search", "offsite"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: timezone: unknown zone 'Mars/Olympus' (use an IANA name such as Europe/Berlin)"
    )


def test_workspace_paths_expand_the_home_folder(tmp_path: Path, monkeypatch) -> None:
    from lifelong.workspace import Workspace

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "agent").mkdir()
    assert Workspace("~/agent").root == (tmp_path / "agent").resolve()


def test_status_says_what_a_user_needs(tmp_path: Path) -> None:
    ws = _demo_like(tmp_path)
    text = run("--workspace", str(ws), "--now", "2026-03-20T09:00", "status").output
    assert "never indexed" in text and "never dreamed" in text
    assert "next: lifelong index" in text and "next: lifelong dream --backfill" in text
    assert "sqlite_sequence" not in text and "code_log" not in text and "chunks_vocab" not in text
    run("--workspace", str(ws), "--now", "2026-03-20T09:00", "index")
    data = json.loads(run("--workspace", str(ws), "--now", "2026-03-20T09:00", "status", "--json").output)
    recall = data["reports"]["recall"]
    assert recall["files_indexed"] == 3 and recall["chunks"] >= 2 and recall["behind_files"] is False
    assert recall["last_index"].startswith("2026-03-20T09:00")
    assert [p["health"] for p in data["plugins"]] == ["ok"] * len(data["plugins"])
    assert not any(step.startswith("lifelong index") for step in data["next_steps"])
    (ws / "memory" / "bad.md").write_bytes(b"\xff\xfe binary \x00")
    run("--workspace", str(ws), "--now", "2026-03-20T09:00", "index")
    data = json.loads(run("--workspace", str(ws), "status", "--json").output)
    assert any(w.startswith("recall: skipped memory/bad.md") for w in data["warnings"])
