"""What the product wheel holds (the product: no eval harness; workspace_template/ and prompts/ as
package data), what `lifelong init` lays down from workspace_template/, and `lifelong eval`
without the harness."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from lifelong import cli as cli_module
from lifelong import host as host_module
from lifelong.prompts import shipped_dir
from lifelong.workspace import Workspace, init_workspace, template_files

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", ".venv", "__pycache__", ".cache", "results", "build", "dist", ".lifelong", ".pytest_cache"}


def _setuptools_new_enough() -> bool:
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except importlib.metadata.PackageNotFoundError:
        return False
    return major >= 68


@pytest.mark.timeout(600)
def test_the_wheel_holds_the_product_and_its_data_but_no_evals(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=lambda d, names: [n for n in names if n in SKIP or n.endswith(".egg-info")],
    )
    assert (src / "evals" / "harness.py").is_file()  # the harness is in the tree the wheel is built from
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        str(src),
        "-w",
        str(tmp_path / "dist"),
    ]
    if _setuptools_new_enough():  # no download of the build backend when this environment has it
        command.insert(4, "--no-build-isolation")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("lifelong-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [n for n in names if n.startswith(("lifelong_evals", "evals/"))]
    assert not [n for n in names if "harness" in n]
    for folder in ("prompts", "workspace_template"):
        shipped = {p.relative_to(ROOT / folder).as_posix() for p in (ROOT / folder).rglob("*") if p.is_file()}
        assert shipped, folder
        assert {f"lifelong/_data/{folder}/{rel}" for rel in shipped} <= names, folder
    assert "lifelong/prompts.py" in names and "lifelong_plugins/gate/gate.py" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "lifelong_evals" not in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_eval_without_the_harness_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # an environment where no distribution declares the command (the product wheel alone)
    monkeypatch.setattr(host_module, "installed_entry_points", lambda: importlib.metadata.EntryPoints(()))
    group = click.Group()
    cli_module._register_extra_commands(group)
    for args in (["eval"], ["eval", "--quick", "retrieval-locomo"], ["eval", "--help"]):
        result = CliRunner().invoke(group, args)
        assert result.exit_code == 1, args
        assert result.output.splitlines() == [f"error: {cli_module.EVAL_MISSING}"], args
        assert "pip install -e ./evals" in result.output


def test_eval_with_the_harness_installed_is_the_harness() -> None:
    installed = [ep for ep in host_module.installed_entry_points().select(group="lifelong.commands")]
    if not any(ep.name == "eval" for ep in installed):
        pytest.fail("the test command installs the harness (pip install -e ./evals)")
    result = CliRunner().invoke(cli_module.cli, ["eval", "--list"])
    assert result.exit_code == 0, result.output
    assert "retrieval-locomo" in result.output


def test_init_lays_down_the_workspace_template(tmp_path: Path) -> None:
    created, kept = init_workspace(tmp_path / "ws", timezone="America/Argentina/Buenos_Aires")
    folder = shipped_dir("workspace_template")
    assert folder == ROOT / "workspace_template"
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert created == [*files, "memory/", "wiki/"] and kept == []
    assert (tmp_path / "ws" / "MEMORY.md").read_text() == (folder / "MEMORY.md").read_text()
    config = (tmp_path / "ws" / "lifelong.yaml").read_text()
    assert config.splitlines()[1] == (
        "timezone: America/Argentina/Buenos_Aires # the nightly consolidation runs at 03:00 in this zone"
    )
    assert yaml.safe_load(config) == {
        "timezone": "America/Argentina/Buenos_Aires",
        "embedding": {"provider": "local"},
        "llm": {"model": None},
    }
    assert Workspace(tmp_path / "ws").config["timezone"] == "America/Argentina/Buenos_Aires"
    short = template_files("UTC")["lifelong.yaml"].splitlines()[1]
    assert short.index("#") == config.splitlines()[2].index("#")  # comments stay aligned
    # nothing that exists is overwritten
    (tmp_path / "ws" / "MEMORY.md").write_text("# mine\n")
    created, kept = init_workspace(tmp_path / "ws", timezone="UTC")
    assert created == [] and (tmp_path / "ws" / "MEMORY.md").read_text() == "# mine\n"
