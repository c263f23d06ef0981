"""The dailies of a run: which notes are dailies (``memory/YYYY-MM-DD*.md``), each parsed into
snippets once per run (:class:`DailyReader`, reused by the three phases), and which candidates
are written only in notes that are private now."""

from __future__ import annotations

import datetime as dt
from typing import Any

from lifelong.contracts import PluginContext
from lifelong.errors import LifelongError
from lifelong.privacy import is_private, is_private_text
from lifelong.workspace import daily_date

from .attribution import attribution_tokens
from .candidates import Candidate, CandidatePool
from .snippets import ParseStats, Snippet, parse_snippets


class DailyReader:
    """Parses dailies once per run (the parse is reused by REM and deep's live re-read). A private
    note (``lifelong.privacy``: under memory/private/ or frontmatter ``privacy: private``) has no
    snippets: nothing in it is staged, credited, themed or promoted."""

    def __init__(self, ctx: PluginContext, cfg: dict[str, Any]):
        self.ctx = ctx
        self.cfg = cfg
        self.cache: dict[str, list[Snippet] | None] = {}
        self.tokens: dict[str, list[tuple[frozenset[str], frozenset[str]]]] = {}
        self.stats = ParseStats()
        self.errors: dict[str, str] = {}
        self.private: dict[str, bool] = {}  # rel -> private note, as last read

    def is_private(self, rel: str) -> bool:
        """Whether the note at ``rel`` is private now (read once per run; an unreadable or missing
        file is not: it has no snippets anyway)."""
        if rel not in self.private:
            if is_private(rel):
                self.private[rel] = True
            else:
                try:
                    self.private[rel] = is_private_text(rel, self.ctx.workspace.read_text(rel))
                except (LifelongError, OSError):
                    self.private[rel] = False
        return self.private[rel]

    def snippets(self, rel: str, *, fresh: bool = False) -> list[Snippet] | None:
        if fresh or rel not in self.cache:
            try:
                text = self.ctx.workspace.read_text(rel)
            except LifelongError as exc:
                self.errors[rel] = str(exc)
                self.cache[rel] = None
                return None
            except OSError as exc:
                self.errors[rel] = f"{type(exc).__name__}: {exc}"
                self.cache[rel] = None
                return None
            self.private[rel] = is_private_text(rel, text)
            if self.private[rel]:
                self.cache[rel] = []
                self.tokens.pop(rel, None)
                return self.cache[rel]
            self.cache[rel] = parse_snippets(
                text,
                rel,
                min_chars=self.cfg["min_snippet_chars"],
                max_chars=self.cfg["max_snippet_chars"],
                stats=self.stats if not fresh else ParseStats(),
            )
            self.tokens.pop(rel, None)
        return self.cache[rel]

    def snippet_tokens(self, rel: str) -> list[tuple[frozenset[str], frozenset[str]]]:
        if rel not in self.tokens:
            self.tokens[rel] = [attribution_tokens(s) for s in self.snippets(rel) or []]
        return self.tokens[rel]


def shared_candidates(pool: CandidatePool, reader: DailyReader) -> dict[str, Candidate]:
    """The pool without candidates only ever written in notes that are private now (one marked
    ``privacy: private`` after it was staged): those are never scored, themed or reported."""
    occ = pool.occurrence_index()
    return {
        k: c
        for k, c in pool.candidates.items()
        if not all(reader.is_private(p) for p in {o.path for o in occ.get(k, [])} or {c.path})
    }


def list_dailies(ws: Any, since: dt.date | None, until: dt.date) -> list[str]:
    """Daily notes (memory/YYYY-MM-DD*.md, any depth under memory/) dated in [since, until]."""
    out: list[str] = []
    if not ws.memory_dir.is_dir():
        return out
    for path in sorted(ws.memory_dir.rglob("*.md")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = ws.relpath(path)
        if any(part.startswith(".") for part in rel.split("/")) or rel.startswith("memory/dreaming/"):
            continue
        day = daily_date(rel)
        if day is None or day > until or (since is not None and day < since):
            continue
        out.append(rel)
    return out
