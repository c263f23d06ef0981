"""Privacy tiers: the one rule for which notes are private, and what a search may see.

A note is **private** when its file sits under ``memory/private/`` or its YAML frontmatter says
``privacy: private``. Private notes are indexed like any other (their chunks carry the corpus
``private`` instead of ``memory``), but:

- a search sees them only with scope ``private`` (``memory_search(scope="private")``,
  ``lifelong search --scope private``); the default scope ``shared`` never returns them;
- the gate searches with scope ``private`` only in a direct chat whose session asks for it
  (``session["scope"] == "private"``), never in a group or channel chat;
- consolidation never promotes them into MEMORY.md (loaded as shared, trusted context), and
  the wiki never compiles them into pages.

Files are the unit: a private section inside a shared file is not recognised (move it to a
private file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Scope = Literal["shared", "private"]
SCOPES: tuple[str, ...] = ("shared", "private")
PRIVATE_DIR = "memory/private/"
PRIVATE_CORPUS = "private"


def is_private(relpath: str, frontmatter: Mapping[str, Any] | None = None) -> bool:
    """Is the note at workspace-relative ``relpath`` (with its parsed frontmatter) private?"""
    path = relpath.replace("\\", "/").removeprefix("./")
    if path.startswith(PRIVATE_DIR):
        return True
    value = (frontmatter or {}).get("privacy")
    return isinstance(value, str) and value.strip().lower() == "private"


def is_private_text(relpath: str, text: str) -> bool:
    """:func:`is_private` for a file's whole text (malformed frontmatter reads as none)."""
    from lifelong.errors import InputError
    from lifelong.workspace import split_frontmatter

    if is_private(relpath):
        return True
    try:
        fm, _, _ = split_frontmatter(text)
    except InputError:
        return False
    return is_private(relpath, fm)


def corpus_predicate(corpus: str, scope: str = "shared", column: str = "c.corpus") -> tuple[str, list[Any]]:
    """SQL over ``column`` for a search of ``corpus`` (memory | wiki | all) in ``scope``:
    private chunks belong to the memory corpus, and only a private scope sees them."""
    private = scope == "private"
    if corpus == "all":
        return ("1", []) if private else (f"{column} != ?", [PRIVATE_CORPUS])
    if corpus == "memory" and private:
        return f"{column} IN (?, ?)", ["memory", PRIVATE_CORPUS]
    return f"{column} = ?", [corpus]


def gate_scope(session: Mapping[str, Any] | None) -> Scope:
    """The scope the gate may search for ``session``: private only in a direct chat that asks."""
    session = session or {}
    chat = str(session.get("chat_type") or "direct")
    if chat == "direct" and session.get("scope") == "private":
        return "private"
    return "shared"
