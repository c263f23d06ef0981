"""The candidate pool (in memory, no database): candidates, where each was written, the recall
signals credited to it tonight and the status changes of the run.

A candidate is a note line staged by the light phase under the key of its text
(:func:`snippets.text_key`); a line restated with nearly the same words (Jaccard of
:func:`snippets.similarity_tokens` >= ``dedupe_jaccard``) resolves to the candidate already staged
(:class:`NearDuplicateIndex`). The phases change the pool in memory; :mod:`state` loads it and
saves it in one transaction (a dry run never saves).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from .snippets import Snippet, jaccard, similarity_tokens

STATUSES = ("staged", "promoted", "dropped", "blocked", "evicted", "superseded", "expired")
REVIVABLE = ("dropped", "expired")


@dataclass
class Candidate:
    key: str
    text: str
    heading: str
    path: str
    start_line: int
    end_line: int
    day: str
    first_seen: float
    light_hits: int = 0
    light_last: float | None = None
    rem_hits: int = 0
    rem_last: float | None = None
    status: str = "staged"
    status_run: str | None = None
    status_reason: str | None = None
    superseded_by: str | None = None
    last_score: float | None = None
    components: str | None = None
    # REM's correction of a promoted item (superseded_by) was no sure update: the item is marked
    # contested in MEMORY.md, not struck through (lifelong.facts.surely_updates)
    contested: bool = False
    is_new: bool = False
    dirty: bool = False

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def row(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "key text heading path start_line end_line day first_seen light_hits light_last rem_hits "
                "rem_last status status_run status_reason superseded_by last_score components contested"
            ).split()
        }


@dataclass
class Occurrence:
    snippet_key: str
    path: str
    key: str
    start_line: int
    end_line: int
    day: str
    text: str


class StatusTransition(NamedTuple):
    """A candidate's status change, as ``dream_status_log`` records it."""

    key: str
    old_status: str | None
    old_run: str | None
    old_reason: str | None
    new_status: str


@dataclass(frozen=True)
class Signal:
    event_id: int
    key: str
    ts: float
    day: str
    query_hash: str
    score: float
    source: str
    overlap: float


class NearDuplicateIndex:
    """Find an indexed token set with Jaccard >= threshold, by prefix filtering: two sets that
    similar must share a token among the first |x| - ceil(t·|x|) + 1 of a fixed token order."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.sets: dict[str, frozenset[str]] = {}
        self.postings: dict[str, list[str]] = defaultdict(list)

    def _prefix(self, tokens: frozenset[str]) -> list[str]:
        ordered = sorted(tokens)
        n = len(ordered)
        return ordered[: n - math.ceil(self.threshold * n) + 1]

    def add(self, key: str, tokens: frozenset[str]) -> None:
        if not tokens or key in self.sets:
            return
        self.sets[key] = tokens
        for t in self._prefix(tokens):
            self.postings[t].append(key)

    def find_all(self, tokens: frozenset[str]) -> list[tuple[str, float]]:
        """Every indexed set with Jaccard >= threshold: (key, similarity)."""
        if not tokens:
            return []
        n = len(tokens)
        found: list[tuple[str, float]] = []
        seen: set[str] = set()
        for t in self._prefix(tokens):
            for key in self.postings.get(t, ()):
                if key in seen:
                    continue
                seen.add(key)
                other = self.sets[key]
                if not (self.threshold * n <= len(other) <= n / self.threshold):
                    continue
                sim = jaccard(tokens, other)
                if sim >= self.threshold:
                    found.append((key, sim))
        return found

    def find(self, tokens: frozenset[str]) -> str | None:
        """The most similar indexed set (the smallest key among equals)."""
        found = self.find_all(tokens)
        return min(found, key=lambda f: (-f[1], f[0]))[0] if found else None


class CandidatePool:
    """Candidates, their occurrences in dailies and their recall signals (in memory)."""

    def __init__(self, dedupe_threshold: float):
        self.candidates: dict[str, Candidate] = {}
        self.occurrences: dict[tuple[str, str], Occurrence] = {}
        self.alias: dict[str, str] = {}
        self.new_signals: dict[tuple[int, str], Signal] = {}
        self.new_occurrences: set[tuple[str, str]] = set()
        self.status_changes: list[StatusTransition] = []
        self.index = NearDuplicateIndex(dedupe_threshold)
        self.merged = 0

    @classmethod
    def from_rows(
        cls, candidates: Iterable[tuple], occurrences: Iterable[tuple], dedupe_threshold: float
    ) -> CandidatePool:
        """A pool from stored rows: candidates in :class:`Candidate` field order (its
        :meth:`Candidate.row` columns), occurrences in :class:`Occurrence` field order."""
        pool = cls(dedupe_threshold)
        for row in candidates:
            c = Candidate(*row)
            pool.candidates[c.key] = c
            pool.index.add(c.key, similarity_tokens(c.text))
        for row in occurrences:
            occ = Occurrence(*row)
            pool.occurrences[(occ.snippet_key, occ.path)] = occ
            pool.alias[occ.snippet_key] = occ.key
        return pool

    # changes ----------------------------------------------------------------------------------
    def set_status(self, key: str, status: str, run_id: str, reason: str | None = None) -> None:
        c = self.candidates[key]
        if c.status == status and c.status_reason == reason:
            return
        if not c.is_new:
            self.status_changes.append(StatusTransition(key, c.status, c.status_run, c.status_reason, status))
        c.status, c.status_run, c.status_reason = status, run_id, reason
        c.dirty = True

    def lookup(self, snippet: Snippet) -> str | None:
        """The candidate key a snippet belongs to, without staging anything."""
        key = self.alias.get(snippet.key)
        if key is not None and key in self.candidates:
            return key
        if snippet.key in self.candidates:
            return snippet.key
        return self.index.find(similarity_tokens(snippet.text))

    def resolve(self, snippet: Snippet, now_ts: float, run_id: str) -> str:
        """The candidate key for a live snippet, staging a new candidate when needed."""
        sk = snippet.key
        day = snippet.day.isoformat() if snippet.day else ""
        key = self.alias.get(sk)
        if key is None or key not in self.candidates:
            if sk in self.candidates:
                key = sk
            else:
                tokens = similarity_tokens(snippet.text)
                key = self.index.find(tokens)
                if key is not None:
                    self.merged += 1
                else:
                    key = sk
                    self.candidates[key] = Candidate(
                        key,
                        snippet.text,
                        snippet.heading,
                        snippet.path,
                        snippet.start_line,
                        snippet.end_line,
                        day,
                        now_ts,
                        is_new=True,
                    )
                    self.index.add(key, tokens)
                    self.status_changes.append(StatusTransition(key, None, None, None, "staged"))
        occ_id = (sk, snippet.path)
        occ = self.occurrences.get(occ_id)
        if occ is None or (occ.start_line, occ.end_line, occ.key) != (
            snippet.start_line,
            snippet.end_line,
            key,
        ):
            self.occurrences[occ_id] = Occurrence(
                sk, snippet.path, key, snippet.start_line, snippet.end_line, day, snippet.text
            )
            self.new_occurrences.add(occ_id)
        self.alias[sk] = key
        c = self.candidates[key]
        if day >= c.day or c.is_new:
            if (c.text, c.path, c.start_line, c.end_line) != (
                snippet.text,
                snippet.path,
                snippet.start_line,
                snippet.end_line,
            ):
                c.text, c.heading, c.path = snippet.text, snippet.heading, snippet.path
                c.start_line, c.end_line = snippet.start_line, snippet.end_line
                c.dirty = True
        if day and day < c.day:
            c.day, c.dirty = day, True
        if c.status in REVIVABLE:
            self.set_status(key, "staged", run_id, f"seen again in {snippet.path}")
        return key

    def occurrences_of(self, key: str) -> list[Occurrence]:
        return [o for o in self.occurrences.values() if o.key == key]

    def occurrence_index(self) -> dict[str, list[Occurrence]]:
        out: dict[str, list[Occurrence]] = defaultdict(list)
        for o in self.occurrences.values():
            out[o.key].append(o)
        return out


def revived(changes: list[StatusTransition]) -> int:
    """How many dropped or expired candidates came back to ``staged``."""
    return sum(1 for c in changes if c.new_status == "staged" and c.old_status in REVIVABLE)
