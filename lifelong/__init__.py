"""lifelong: a memory that deepens over months, as plugins over plain markdown files.

``from lifelong import Memory`` is the runtime adapter (``lifelong.runtime``); it is imported on
first use so that ``import lifelong`` stays cheap."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Memory", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from .runtime import Memory

        return Memory
    raise AttributeError(f"module 'lifelong' has no attribute {name!r}")
