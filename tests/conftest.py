"""Shared fixtures: real workspaces in tmp_path, real SQLite, the real host."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from lifelong import clock  # noqa: E402
from lifelong.host import Host  # noqa: E402
from lifelong.workspace import Workspace  # noqa: E402


def write_workspace(
    root: Path, files: dict[str, str | bytes], config: dict[str, Any] | None = None
) -> Workspace:
    """Create a workspace: ``files`` maps relative paths to text (or bytes); ``config`` is
    written as lifelong.yaml (default: Europe/Berlin, local embeddings)."""
    root.mkdir(parents=True, exist_ok=True)
    cfg = {"timezone": "Europe/Berlin", "embedding": {"provider": "local"}}
    cfg.update(config or {})
    (root / "lifelong.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    (root / "memory").mkdir(exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return Workspace(root)


@pytest.fixture
def make_workspace(tmp_path: Path) -> Callable[..., Workspace]:
    counter = {"n": 0}

    def make(
        files: dict[str, str | bytes] | None = None,
        config: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> Workspace:
        counter["n"] += 1
        return write_workspace(tmp_path / (name or f"ws{counter['n']}"), files or {}, config)

    return make


@pytest.fixture
def make_host(make_workspace: Callable[..., Workspace]) -> Iterator[Callable[..., Host]]:
    hosts: list[Host] = []

    def make(
        files: dict[str, str | bytes] | None = None, config: dict[str, Any] | None = None, **kw: Any
    ) -> Host:
        host = Host(make_workspace(files, config), **kw)
        hosts.append(host)
        return host

    yield make
    for h in hosts:
        h.close()


@pytest.fixture(autouse=True)
def _release_clock() -> Iterator[None]:
    yield
    clock.set_now(None)
