"""Modules imported on first use, for the code paths of a one-shot CLI call that may not need
them (issue 43: an FTS-only ``lifelong search`` never touches numpy, whose import is a fifth of
the call). ``from lifelong.lazy import numpy as np`` gives a stand-in whose first attribute
read imports numpy; ``np.zeros(...)`` then works as with ``import numpy as np``. Module-level
code must not read an attribute of it (that would import numpy at import), and annotations are
strings (``from __future__ import annotations``), so ``np.ndarray`` in a signature costs
nothing. ``tests/core/test_cold_start.py`` checks what a search imports."""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Any


class LazyModule:
    """A stand-in for the module ``name``, imported when one of its attributes is first read;
    each attribute read is then kept on the stand-in, so later reads cost a dict lookup."""

    def __init__(self, name: str) -> None:
        self.__dict__["_name"] = name
        self.__dict__["_module"] = None

    def _load(self) -> ModuleType:
        module: ModuleType | None = self.__dict__["_module"]
        if module is None:
            module = importlib.import_module(self.__dict__["_name"])
            self.__dict__["_module"] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._load(), attr)
        self.__dict__[attr] = value
        return value

    def __repr__(self) -> str:
        state = "imported" if self.__dict__["_module"] is not None else "not imported yet"
        return f"<lazy module {self.__dict__['_name']!r} ({state})>"


numpy: Any = LazyModule("numpy")


class LazyPattern:
    """``re.compile(pattern, flags)`` on first use, for a module's large patterns that a call
    may not need (compiling one long alternation costs milliseconds of every process that
    imports the module). Use its methods (``match``, ``search``, ``sub``...), not ``re``'s
    functions, on it."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.__dict__["_args"] = (pattern, flags)

    def __getattr__(self, attr: str) -> Any:
        value = getattr(re.compile(*self.__dict__["_args"]), attr)
        self.__dict__[attr] = value
        return value
