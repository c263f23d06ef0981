"""The gate's decision (pure): given the candidate, the related facts and how each compares,
what happens — allow, warn, block or supersede — and, in supersede mode, which intervals close.

Ordering rules (see docs/supersede.md):

- Time first. Each side's time is its *event time*: the date stated in its text, else the date
  of the note it was copied from, else when it was ingested. A candidate older than the fact it
  contradicts never supersedes it (the stale-override case: an old note consolidated late); in
  supersede mode it is recorded as already superseded by the newer fact.
- An interval closes only when the subjects are surely the same (:func:`lifelong.facts.same_subject`,
  or the model judge says so); a conflict found through a looser likeness (a change word and a
  shared word or two) leaves both **contested**: visible, newest first.
- Then source strength (the user's own statement > a note > a model's summary; hedged,
  second-hand text counts as the weakest). A newer, stronger candidate supersedes the older
  fact; a newer, weaker one leaves both **contested**; two of the same strength are
  **contested** too, unless the newer one announces the change itself ("moved to", "no longer",
  "now"), which is how a person updates a fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lifelong.contracts import WriteAction
from lifelong.facts import Comparison, Relation, Statement

HEDGED_STRENGTH = 1


@dataclass(frozen=True)
class Fact:
    """An existing fact as the gate sees it: where it is, when it became true, how strong its
    source is."""

    id: str
    text: str
    path: str
    start_line: int | None = None
    end_line: int | None = None
    chunk_id: int | None = None
    key: str | None = None
    time: float | None = None  # event time, epoch seconds (None: unknown, taken as older)
    strength: int = 2
    similarity: float = 0.0

    @property
    def citation(self) -> str:
        if self.start_line is None:
            return self.path
        return f"{self.path}#L{self.start_line}-L{self.end_line or self.start_line}"


@dataclass(frozen=True)
class Match:
    """One related fact and the verdict on it: ``conflict``, ``compatible`` or ``unrelated``
    (the rules' verdict, or the model judge's when it overruled them)."""

    fact: Fact
    comparison: Comparison
    verdict: str
    judged_by: str = "rules"
    judge_reason: str = ""
    relation: Relation | None = None  # lifelong.facts.relate(older, newer) of the two texts

    @property
    def sure(self) -> bool:
        """Strong enough to close an interval: the model judge said so, or the subjects are
        surely the same (:func:`lifelong.facts.same_subject`). A conflict only
        :func:`lifelong.facts.relate` saw (an update in other words) is never sure: contested."""
        return self.judged_by == "model" or (self.comparison.certain and self.comparison.conflicting)

    @property
    def detail(self) -> str:
        if self.judged_by == "model" and self.judge_reason:
            return f"model: {self.judge_reason}"
        found = "; ".join(c.describe() for c in self.comparison.conflicts)
        if self.relation is not None and self.relation.kind == "update":
            found = "; ".join(
                x for x in (found, f"{self.relation.reason} ({self.relation.confidence:.2f})") if x
            )
        return found or self.comparison.reason


@dataclass(frozen=True)
class Plan:
    """What the gate decided. ``supersede``: fact ids whose interval the candidate closes;
    ``contested``: fact ids marked contested together with the candidate; ``superseded_by``:
    the newer fact that makes the candidate itself historical on arrival; ``expired``: related
    facts whose stated end (``until ...``) is past."""

    action: WriteAction
    reason: str
    conflicts: tuple[Match, ...] = ()
    supersede: tuple[str, ...] = ()
    contested: tuple[str, ...] = ()
    superseded_by: str | None = None
    expired: tuple[str, ...] = ()
    candidate_expired: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def strength_of(source: str, statement: Statement, table: dict[str, int], default: int) -> int:
    """The configured strength of ``source``; hedged text ("apparently", "I think") is never
    stronger than :data:`HEDGED_STRENGTH`."""
    base = int(table.get(source, default))
    return min(base, HEDGED_STRENGTH) if statement.hedged else base


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plan(
    candidate: Statement,
    candidate_time: float,
    candidate_strength: int,
    matches: list[Match],
    mode: str,
    *,
    expired: tuple[str, ...] = (),
    candidate_expired: bool = False,
) -> Plan:
    """Decide on one write (see the module docstring). ``mode``: warn | block | supersede."""
    conflicts = tuple(m for m in matches if m.verdict == "conflict")
    notes: list[str] = []
    if candidate_expired:
        notes.append(f"stale: it says it holds only until {candidate.valid_until}, which is past")
    for fid in expired:
        fact = next((m.fact for m in matches if m.fact.id == fid), None)
        notes.append(f"stale: {fact.citation if fact else fid} held only until a date that is past")
    if not conflicts and not notes:
        return Plan("allow", "no conflicting fact")

    supersede: list[str] = []
    contested: list[str] = []
    superseded_by: str | None = None
    would = "" if mode == "supersede" else "would be "
    for m in conflicts:
        fact, where = m.fact, f"{m.fact.citation} {_short(m.fact.text)!r} ({m.detail})"
        older_candidate = fact.time is not None and candidate_time < fact.time
        if older_candidate:
            if candidate_strength > fact.strength:
                contested.append(fact.id)
                notes.append(f"{would}contested: older but stronger than {where}")
            else:
                superseded_by = superseded_by or fact.id
                notes.append(f"stale: older than {where}, which stays current")
        elif not m.sure:
            # the subjects only share a word or two ("the gym membership costs …" and "the
            # Nordlicht license now costs …"), or the later text is no sure update of the
            # earlier: too weak to hide either; both stay, newest first
            contested.append(fact.id)
            notes.append(f"{would}contested: maybe the same subject as {where}; both stay current")
        elif candidate_strength > fact.strength:
            supersede.append(fact.id)
            notes.append(
                f"{'supersedes' if not would else 'would supersede'} {where}: newer, stronger source"
            )
        elif candidate_strength == fact.strength and candidate.change:
            supersede.append(fact.id)
            notes.append(
                f"{'supersedes' if not would else 'would supersede'} {where}: newer, states the change"
            )
        else:
            contested.append(fact.id)
            weaker = "weaker" if candidate_strength < fact.strength else "same-strength"
            notes.append(f"{would}contested: {weaker} source than {where}")

    reason = "; ".join(notes)
    action: WriteAction
    if not conflicts:
        action = "warn"
    elif mode == "block":
        action = "block"
    elif mode == "supersede":
        action = "supersede" if supersede else "warn"
    else:
        action = "warn"
    if mode != "supersede":
        return Plan(action, reason, conflicts, (), (), None, expired, candidate_expired, tuple(notes))
    return Plan(
        action,
        reason,
        conflicts,
        tuple(dict.fromkeys(supersede)),
        tuple(dict.fromkeys(contested)),
        superseded_by,
        expired,
        candidate_expired,
        tuple(notes),
    )
