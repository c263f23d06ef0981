"""The concept index is about the user's notes: the suite's own text (the wiki's compiled pages
and index, MEMORY.md's title and its managed section) names no concept."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from lifelong_plugins.demo.commands import create_demo_workspace

from lifelong.cli import cli

NOW = "2026-03-24T09:00"
MANAGED = """
<!-- lifelong:topic-projects:start -->
## Projects and work
- Booked the team offsite at Gut Boltenhagen (Baltic coast) for April 14-16, 12 people. <!-- key:74c0a939fb7c src:memory/2026-03-06.md#L4-L4 on:2026-03-09 -->
<!-- lifelong:topic-projects:end -->
"""


def run(root: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["-w", str(root), "--now", NOW, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_wiki_and_memory_md_structure_names_no_concept(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    create_demo_workspace(root)
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    with (root / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write(MANAGED)
    run(root, "wiki", "compile")
    run(root, "index")
    run(root, "concepts", "rebuild")
    keys = {
        c["key"] for c in json.loads(run(root, "concepts", "list", "--json", "--limit", "1000"))["concepts"]
    }
    suite = {"wiki", "memory", "projects", "projects and work", "mentioned", "related", "claims", "pages"}
    assert not keys & suite, sorted(keys & suite)
    # the user's own headings and names still are concepts, and the wiki's page names
    assert {"offsite", "boltenhagen", "priya"} <= keys
