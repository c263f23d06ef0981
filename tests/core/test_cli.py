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
    assert sorted(created["created"]) == ["MEMORY.md", "lifelong.yaml", "memory/", "wiki/"]
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
    documented = set(re.findall(r"^#+ `lifelong ([a-z][a-z -]*?)(?: \[| [A-Z]|`)", doc, flags=re.M))
    for name, cmd in _all_commands(cli):
        assert (cmd.help or "").strip(), f"lifelong {name} has no help text"
        result = run(*name.split(), "--help")
        assert "Usage:" in result.output
        assert name in documented, f"lifelong {name} is not documented in docs/cli.md"
