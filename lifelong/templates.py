"""Prompt and text templates (jinja2) from the ``prompts/`` folder, rendered with explicit
variables only: an undefined variable is an error, and no date is ever computed here."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import jinja2


def prompts_dir() -> Path:
    return Path(str(resources.files("lifelong.prompts")))


def template_dir() -> Path:
    """The folder `lifelong init` copies (workspace_template/)."""
    return Path(str(resources.files("lifelong.workspace_template")))


_env: jinja2.Environment | None = None


def environment() -> jinja2.Environment:
    global _env
    if _env is None:
        _env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(prompts_dir())),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
    return _env


def render(name: str, **variables: Any) -> str:
    """Render prompts/<name> with exactly the given variables."""
    return environment().get_template(name).render(**variables)
