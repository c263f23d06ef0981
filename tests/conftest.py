"""Shared fixtures: real workspaces in tmp_path, real SQLite, the real host."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
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


@pytest.fixture
def write_plugin(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Write a real plugin package on disk and import it: ``write_plugin(name, body, hooks,
    manifest=None)``. ``body`` is the module source (``hookimpl``, ``GateResult`` and
    ``WriteDecision`` are imported for it); ``manifest`` None writes a valid plugin.yaml with an
    empty config schema, a string writes that text, False writes none."""
    root = tmp_path / "plugin_src"
    root.mkdir()
    sys.path.insert(0, str(root))
    names: list[str] = []

    def write(
        name: str, body: str = "", hooks: list[str] | tuple[str, ...] = (), manifest: str | bool | None = None
    ):
        pkg = root / name
        pkg.mkdir()
        header = "from lifelong.hookspecs import hookimpl, GateResult, WriteDecision  # noqa: F401\n"
        (pkg / "__init__.py").write_text(header + textwrap.dedent(body))
        if manifest is None:
            manifest = (
                f"id: {name}\ndescription: test plugin {name}\nhooks: [{', '.join(hooks)}]\n"
                "config_schema: {type: object, properties: {}}\n"
            )
        if manifest is not False:
            (pkg / "plugin.yaml").write_text(str(manifest))
        sys.modules.pop(name, None)
        names.append(name)
        return importlib.import_module(name)

    yield write
    sys.path.remove(str(root))
    for name in names:
        sys.modules.pop(name, None)
