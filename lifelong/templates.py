"""Text templates of one folder (jinja2), rendered with explicit variables only: an undefined
variable is an error, and no date is ever computed here. The prompts sent to a model are not
here: they are the top-level ``prompts/`` folder, read by :mod:`lifelong.prompts`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2


class PromptTemplates:
    """The templates of one folder, e.g. ``PromptTemplates(Path(__file__).parent / "templates")``."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self._env: jinja2.Environment | None = None

    @property
    def environment(self) -> jinja2.Environment:
        if self._env is None:
            self._env = jinja2.Environment(
                loader=jinja2.FileSystemLoader(str(self.folder)),
                undefined=jinja2.StrictUndefined,
                autoescape=False,
                keep_trailing_newline=True,
                trim_blocks=True,
                lstrip_blocks=True,
            )
        return self._env

    def render(self, name: str, **variables: Any) -> str:
        """Render ``<folder>/<name>`` with exactly the given variables."""
        return self.environment.get_template(name).render(**variables)
