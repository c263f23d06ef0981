"""Bad input never stops recall, errors name workspace paths only, nothing outside is read (fast
version of `python -m evals.bad_input`)."""

from __future__ import annotations

import os

import pytest

from lifelong import clock
from lifelong.errors import WorkspaceError

SECRET = "OUTSIDE-SECRET-91"


@pytest.fixture
def host(make_host, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"- {SECRET}\n")
    h = make_host(
        {
            "memory/2026-03-04.md": "# 2026-03-04\n\n- Booked the offsite at Gut Boltenhagen.\n",
            "memory/2026-03-05.md": b"# 2026-03-05\r\r- kayak rental booked\r",
            "memory/2026-03-06.md": b"# 2026-03-06\n\n- lighthouse tour\r",
            "memory/binary.md": b"\x89PNG\r\n\x1a\n\x00\x01\x02",
            "memory/latin1.md": "- Caf\u00e9 J\u00fcrgen\n".encode("latin-1"),
        },
        {"embedding": {"provider": "none"}},
        builtins=("embeddings", "recall"),
        entry_points=False,
    )
    mem = h.workspace.root / "memory"
    os.symlink(mem / "loop-b.md", mem / "loop-a.md")
    os.symlink(mem / "loop-a.md", mem / "loop-b.md")
    os.symlink(outside / "secret.md", mem / "escape.md")
    return h


def test_index_skips_bad_files_with_relative_names_and_search_works(host) -> None:
    with clock.pinned(clock.parse_instant("2026-03-10T09:00+01:00")):
        report = host.call_tool("memory_index", {})
        assert set(report["skipped"]) == {"memory/binary.md", "memory/latin1.md"}
        assert all(str(host.workspace.root) not in why for why in report["skipped"].values())
        for query, rel in (
            ("kayak rental", "memory/2026-03-05.md"),
            ("lighthouse tour", "memory/2026-03-06.md"),
        ):
            paths = [r["path"] for r in host.call_tool("memory_search", {"query": query})["results"]]
            assert rel in paths
        found = host.call_tool("memory_search", {"query": SECRET, "min_score": 0})["results"]
    assert not any(SECRET in r["snippet"] for r in found)


@pytest.mark.parametrize(
    "path,message",
    [
        ("memory/loop-a.md", "cannot be resolved (a symlink loop?)"),
        ("memory/escape.md", "is outside the workspace"),
        ("../outside/secret.md", "is outside the workspace"),
    ],
)
def test_get_refuses_with_one_clear_line(host, path: str, message: str) -> None:
    out = host.call_tool("memory_get", {"path": path})
    assert (
        message in out["error"]
        and SECRET not in out["error"]
        and str(host.workspace.root) not in out["error"]
    )


def test_absolute_and_nul_paths_are_refused_without_echoing_host_paths(host, tmp_path) -> None:
    with pytest.raises(WorkspaceError, match="^an absolute path is outside the workspace$"):
        host.workspace.resolve(tmp_path / "outside" / "secret.md")
    with pytest.raises(WorkspaceError, match="NUL"):
        host.workspace.resolve("memory/2026-03-04.md\x00x")
