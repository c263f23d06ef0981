"""Every prompt the suite can send to a model, by name.

The texts live in the top-level ``prompts/`` folder of the repository (shipped in the wheel as
package data, ``lifelong/_data/prompts/``), one file per prompt, so that a person can read and
review them in one place. A plugin asks for its prompt by name::

    from lifelong import prompts
    text = prompts.render("gate.md.j2", workspace, today=..., ...)

A workspace may override any of them: a file of the same name in ``<workspace>/prompts/``
replaces the shipped one for that workspace (whole; it is rendered with the same variables, and
an undefined variable or a syntax error is a one-line :class:`ConfigError`). That folder is not
indexed as memory (recall reads MEMORY.md, ``memory/`` and ``wiki/``).

Templates are jinja2 (``*.j2``), rendered with explicit variables only (an undefined variable is
an error), no autoescaping, ``trim_blocks`` and ``lstrip_blocks``; a ``*.yaml`` file holds
several short texts (:func:`texts`).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import jinja2
import yaml

from .errors import ConfigError

OVERRIDE_DIR = "prompts"  # <workspace>/prompts/<name> replaces the shipped prompt of that name


def shipped_dir(name: str) -> Path:
    """A top-level data folder of the project (``prompts``, ``workspace_template``): in a wheel it
    is package data under ``lifelong/_data/``; in a source checkout it is the folder beside
    ``lifelong/``."""
    here = Path(__file__).resolve().parent
    for folder in (here / "_data" / name, here.parent / name):
        if folder.is_dir():
            return folder
    raise FileNotFoundError(f"the shipped folder {name!r} is missing from this installation of lifelong")


def folder() -> Path:
    """The shipped prompts."""
    return shipped_dir("prompts")


def names() -> list[str]:
    """Every shipped prompt's name (its file name in ``prompts/``)."""
    return sorted(p.name for p in folder().iterdir() if p.is_file() and p.suffix in (".j2", ".yaml", ".md"))


def _root(workspace: Any) -> Path | None:
    if workspace is None:
        return None
    if isinstance(workspace, str | os.PathLike):  # a Path has an attribute .root too ("/")
        return Path(workspace)
    return Path(workspace.root)


def path(name: str, workspace: Any = None) -> Path:
    """The file a prompt is read from: the workspace's override when there is one, else the
    shipped file. ``workspace``: a :class:`~lifelong.workspace.Workspace`, its root, or None."""
    root = _root(workspace)
    if root is not None:
        override = root / OVERRIDE_DIR / name
        if override.is_file():
            return override
    shipped = folder() / name
    if not shipped.is_file():
        raise ConfigError(f"no prompt named {name!r} (prompts/: {', '.join(names())})")
    return shipped


@functools.lru_cache(maxsize=32)
def _environment(directory: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=True,  # an override edited while a long-running process holds the template
    )


def render(name: str, workspace: Any = None, /, **variables: Any) -> str:
    """Render the prompt ``name`` (the workspace's override first) with exactly ``variables``."""
    source = path(name, workspace)
    try:
        return _environment(str(source.parent)).get_template(name).render(**variables)
    except jinja2.TemplateError as exc:
        where = f"{OVERRIDE_DIR}/{name}" if source.parent != folder() else f"the shipped prompt {name}"
        line = f" line {exc.lineno}" if getattr(exc, "lineno", None) else ""
        raise ConfigError(f"{where}{line}: {exc.message or type(exc).__name__}") from exc


def texts(name: str, workspace: Any = None) -> dict[str, str]:
    """A ``*.yaml`` prompt file: a mapping of short texts (e.g. the gate's style instructions). An
    override must hold every key of the shipped file."""
    source = path(name, workspace)
    if source.parent == folder() and workspace is not None:
        return dict(_shipped_texts(name))
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{OVERRIDE_DIR}/{name}: not valid YAML ({type(exc).__name__})") from exc
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f"{OVERRIDE_DIR}/{name}: expected a mapping of names to texts")
    if source.parent != folder():
        missing = sorted(set(_shipped_texts(name)) - set(data))
        if missing:
            raise ConfigError(f"{OVERRIDE_DIR}/{name}: missing {', '.join(missing)}")
    return {str(k): v for k, v in data.items()}


@functools.lru_cache(maxsize=8)
def _shipped_texts(name: str) -> dict[str, str]:
    return texts(name)
