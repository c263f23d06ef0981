"""docs/architecture.md describes the code as it is: every path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def layout_paths(doc: str) -> list[str]:
    """The paths of the Layout section's code block, rebuilt from its indentation (two spaces a
    level; lines indented past the names are continued descriptions)."""
    block = doc.split("## Layout", 1)[1].split("```", 2)[1]
    paths: list[str] = []
    stack: list[str] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent >= 20:  # a description continued on the next line
            continue
        name = line.split()[0]
        level = indent // 2
        stack = stack[:level]
        if "<" in name:  # a pattern such as <plugin>/plugin.yaml
            continue
        path = "".join(stack) + name
        paths.append(path)
        if name.endswith("/"):
            stack.append(name)
    return paths


def test_every_path_in_the_layout_exists() -> None:
    paths = layout_paths(DOC.read_text())
    assert "lifelong/contracts.py" in paths and "plugins/recall/search.py" in paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_module_path_mentioned_in_the_text_exists() -> None:
    doc = DOC.read_text()
    named = set(re.findall(r"`((?:lifelong|plugins|evals|tests|docs|cron)/[\w/.-]+)`", doc))
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md mentions paths that do not exist: {missing}"


def test_every_core_module_is_in_the_layout() -> None:
    listed = set(layout_paths(DOC.read_text()))
    modules = {f"lifelong/{p.name}" for p in (ROOT / "lifelong").glob("*.py") if not p.name.startswith("__")}
    assert modules <= listed, f"core modules missing from the layout: {sorted(modules - listed)}"


def test_every_shipped_data_file_is_in_the_layout() -> None:
    """prompts/ and workspace_template/ are listed file by file (what a person reviews)."""
    listed = set(layout_paths(DOC.read_text()))
    for folder in ("prompts", "workspace_template"):
        files = {f"{folder}/{p.relative_to(ROOT / folder).as_posix()}" for p in (ROOT / folder).rglob("*")}
        assert files and files <= listed, f"{folder}/ files missing from the layout: {sorted(files - listed)}"
