"""The promotion plan (pure): which scored facts the deep phase promotes to MEMORY.md, which it
drops or blocks and why, which expire, and what the MEMORY.md write evicts.

Nothing here reads a file, the store or the clock, or asks a model or a hook: the deep phase
(``promotion.deep``) reads the inputs, walks a :class:`PromotionPlanner` — handing it each
fact's live statement and the ``before_message_write`` decision when it asks — and applies the
:class:`PromotionPlan` it returns (journaled write under the lock, candidate statuses).
:func:`plan_promotions` is the same walk over inputs already gathered."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lifelong.contracts import RelatedFact, WriteDecision
from lifelong.safety import only_about_a_secret

from .candidates import Candidate
from .memory_file import (
    Compaction,
    Item,
    add_items,
    compact,
    contested_keys,
    existing_keys,
    human_edits,
    memory_lines,
    strike_items,
    struck_keys,
    topic_of,
)
from .scoring import Score, Signals
from .screening import screen_statement
from .snippets import Snippet, jaccard, similarity_tokens
from .themes import concept_tags

COVERED_JACCARD = 0.6


@dataclass(frozen=True)
class Scored:
    candidate: Candidate  # the group's representative: its most complete statement
    signals: Signals
    score: Score
    members: tuple[str, ...] = ()  # every candidate key stating the fact (the representative's included)


@dataclass(frozen=True)
class Statement:
    """A fact as the dailies say it right now: read by the deep phase, planned here."""

    speaker: str | None  # the member key whose live line speaks for the fact; None: no member is live
    live: Snippet | None  # that line (its text merged by the model when ``merged_by == "model"``)
    sources: tuple[str, ...] = ()  # citations of every live member, oldest first
    merged_by: str = "member"
    paths: tuple[str, ...] = ()  # the dailies the fact was staged from (for the drop reason)


@dataclass(frozen=True)
class PlanConfig:
    max_promotions: int
    dedupe_jaccard: float = 0.9
    ttl_days: float = 45
    dry_run: bool = False

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], *, backfill: bool, dry_run: bool) -> PlanConfig:
        cap = cfg.get("backfill_max_promotions", 200) if backfill else cfg["max_promotions_per_run"]
        return cls(cap, cfg["dedupe_jaccard"], cfg["candidate_ttl_days"], dry_run)


@dataclass(frozen=True)
class StatusChange:
    key: str
    status: str
    reason: str


@dataclass(frozen=True)
class Outcome:
    """A fact not promoted: what it said and why (``by``: who blocked it)."""

    key: str
    text: str
    reason: str
    by: str | None = None

    def as_json(self) -> dict[str, Any]:
        out = {"key": self.key, "text": self.text, "reason": self.reason}
        return out if self.by is None else out | {"by": self.by}


@dataclass(frozen=True)
class Proposal:
    """A fact that passed every check of the plan: the ``before_message_write`` hook has the last word."""

    scored: Scored
    speaker: Candidate
    statement: Statement
    live: Snippet  # its text screened (secrets redacted)
    tokens: frozenset[str]


@dataclass(frozen=True)
class PlannedPromotion:
    scored: Scored  # its candidate is the speaking member
    live: Snippet
    sources: tuple[str, ...]
    merged_by: str
    decision: WriteDecision | None

    @property
    def key(self) -> str:
        return self.scored.candidate.key

    @property
    def section(self) -> str:
        return topic_of(self.live.text)


@dataclass(frozen=True)
class PromotionPlan:
    promote: tuple[PlannedPromotion, ...]
    already: tuple[Outcome, ...]  # already in MEMORY.md (by key, by a covering line, or joined)
    dropped: tuple[Outcome, ...]  # no member's text is in the dailies any more
    blocked: tuple[Outcome, ...]  # by the safety screen or by before_message_write
    not_passed: tuple[Outcome, ...]  # failed a gate (reason names the gates), best first
    expired: tuple[str, ...]
    statuses: tuple[StatusChange, ...]  # in order; promote/evict statuses come from the write
    refused_keys: tuple[str, ...] = ()
    secrets_redacted: int = 0
    # promoted items a later note changed (REM's corrections), struck through in MEMORY.md now
    # that their correction is there too: earlier key -> the correcting key
    struck: tuple[tuple[str, str], ...] = ()
    # the same, where the later note is no sure update (lifelong.facts.surely_updates): marked
    # "(contested by …)" and kept current, not struck
    contested: tuple[tuple[str, str], ...] = ()

    def items(self, now: dt.datetime) -> list[Item]:
        return [
            Item(p.key, p.live.text, ",".join(p.sources), now.date().isoformat(), p.section)
            for p in self.promote
        ]


def related_memories(
    lines: Sequence[tuple[int, str, frozenset[str]]], tokens: frozenset[str], target: str, limit: int = 5
) -> list[RelatedFact]:
    """Lines of MEMORY.md (``target``) that share enough words with the candidate."""
    scored = []
    for line_no, text, toks in lines:
        sim = jaccard(tokens, toks)
        shared = len(tokens & toks)
        if sim >= 0.2 or shared >= 3:
            scored.append((sim, line_no, text))
    scored.sort(reverse=True)
    return [RelatedFact(t, target, n, n, similarity=round(s, 3)) for s, n, t in scored[:limit]]


def covered_by(
    text: str,
    tokens: frozenset[str],
    others: list[tuple[str, str, frozenset[str]]],
    near_identical: float = 0.9,
) -> str | None:
    """Where ``text`` is already said: a near-identical line (Jaccard >= ``near_identical``), or a similar one
    (>= COVERED_JACCARD) holding every name, date and amount of ``text`` — a correction with a new
    number is therefore never 'covered' by the old line."""
    tags = None
    for where, other, other_tokens in others:
        sim = jaccard(tokens, other_tokens)
        if sim >= near_identical:
            return where
        if sim >= COVERED_JACCARD:
            tags = concept_tags(text) if tags is None else tags
            if tags <= concept_tags(other):
                return where
    return None


@dataclass
class PromotionPlanner:
    """The walk that builds a :class:`PromotionPlan`, one fact at a time (pure; its state is the
    plan so far). ``due()`` yields the passing facts, best first, that need their live statement,
    stopping at the promotion cap; ``consider`` plans one of them from its statement and returns a
    :class:`Proposal` when only the write hook is left to ask; ``accept`` records the hook's answer."""

    scored: Sequence[Scored]
    memory_text: str
    config: PlanConfig
    candidates: Mapping[str, Candidate]  # every candidate of the pool, by key
    joined: Mapping[str, str] = field(default_factory=dict)  # staged key -> the promoted key it restates
    memory: list[tuple[int, str, frozenset[str]]] = field(init=False)
    _present: set[str] = field(init=False)
    _promote: list[PlannedPromotion] = field(init=False, default_factory=list)
    _chosen_tokens: list[tuple[str, str, frozenset[str]]] = field(init=False, default_factory=list)
    _already: list[Outcome] = field(init=False, default_factory=list)
    _dropped: list[Outcome] = field(init=False, default_factory=list)
    _blocked: list[Outcome] = field(init=False, default_factory=list)
    _statuses: list[StatusChange] = field(init=False, default_factory=list)
    _expired: list[str] = field(init=False, default_factory=list)
    _refused: list[str] = field(init=False, default_factory=list)
    _secrets: int = field(init=False, default=0)
    # a correction's key -> the promoted key it changes (REM set the older's superseded_by)
    _replacing: dict[str, str] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._present = existing_keys(self.memory_text)
        for c in self.candidates.values():
            if c.status == "promoted" and c.superseded_by and c.key in self._present:
                self._replacing[c.superseded_by] = c.key
        self.memory = [(n, t, similarity_tokens(t)) for n, t in memory_lines(self.memory_text)]
        for s in self.scored:
            if self._corrects(s):
                continue
            if not s.score.passed and s.signals.days_since_last > self.config.ttl_days:
                reason = f"no signal for {self.config.ttl_days} days"
                self._statuses.append(StatusChange(s.candidate.key, "expired", reason))
                self._expired.append(s.candidate.key)

    def _corrects(self, s: Scored) -> str | None:
        """The promoted key that fact ``s`` changes, if any: a correction of a fact already in
        MEMORY.md is due at once (the fact was judged durable; its new value is too)."""
        for k in (s.candidate.key, *s.members):
            if k in self._replacing:
                return self._replacing[k]
        return None

    def due(self) -> Iterator[Scored]:
        for s in self.scored:
            if not s.score.passed and not self._corrects(s):
                continue
            if len(self._promote) >= self.config.max_promotions:
                break
            c = s.candidate
            if c.superseded_by:
                continue
            if c.key in self._present:
                self._statuses.append(StatusChange(c.key, "promoted", "already in MEMORY.md"))
                self._already.append(Outcome(c.key, c.text, "key already in MEMORY.md"))
                continue
            yield s

    def _settle(self, s: Scored, status: str, reason: str) -> None:
        for k in s.members or (s.candidate.key,):
            self._statuses.append(StatusChange(k, status, reason))

    def consider(self, s: Scored, statement: Statement) -> Proposal | None:
        c = s.candidate
        live = statement.live
        if live is None or statement.speaker is None:
            reason = (
                f"text no longer in {', '.join(statement.paths) or 'any daily'}"
                " (edited or deleted since it was staged)"
            )
            self._settle(s, "dropped", reason)
            self._dropped.append(Outcome(c.key, c.text, reason))
            return None
        if statement.speaker != c.key:  # the most complete statement was edited away: the next one speaks
            c = self.candidates[statement.speaker]
        safe_text, secrets, rules = screen_statement(live.text)
        if rules:  # reads as instructions to an agent, or carries the suite's own tags: never promoted
            reason = f"reads as instructions to an agent ({', '.join(rules)}); never promoted"
            self._settle(s, "blocked", reason)
            self._blocked.append(Outcome(c.key, live.text, reason, "safety"))
            self._refused.append(c.key)
            return None
        if only_about_a_secret(live.text):
            # a key, a password, a card and nothing else: the daily keeps it; what is left of the
            # line once redacted ("re-pasted the API key [redacted] into the .env") is no fact
            reason = "only about a secret; never promoted (the daily keeps it)"
            self._settle(s, "blocked", reason)
            self._blocked.append(Outcome(c.key, safe_text, reason, "safety"))
            self._secrets += secrets
            return None
        if secrets:  # the daily keeps its text; the promoted statement carries it redacted
            live = replace(live, text=safe_text)
            self._secrets += secrets
        tokens = similarity_tokens(live.text)
        others = [(f"MEMORY.md line {n}", text, t) for n, text, t in self.memory]
        others += [(f"{k}, promoted in this run", text, t) for k, text, t in self._chosen_tokens]
        covered = covered_by(live.text, tokens, others, self.config.dedupe_jaccard)
        if covered:
            reason = f"already covered by {covered}"
            self._settle(s, "promoted", reason)
            self._already.append(Outcome(c.key, live.text, reason))
            return None
        return Proposal(s, c, statement, live, tokens)

    def accept(self, p: Proposal, decision: WriteDecision | None) -> None:
        if decision is not None and decision.action == "block":
            reason = decision.reason or "blocked by before_message_write"
            self._settle(p.scored, "blocked", reason)
            self._blocked.append(Outcome(p.speaker.key, p.live.text, reason, decision.source))
            return
        scored = replace(p.scored, candidate=p.speaker)
        self._promote.append(
            PlannedPromotion(scored, p.live, p.statement.sources, p.statement.merged_by, decision)
        )
        self._chosen_tokens.append((p.speaker.key, p.live.text, p.tokens))

    def plan(self) -> PromotionPlan:
        already, statuses = list(self._already), list(self._statuses)
        for key, into in self.joined.items():
            if not self.config.dry_run:
                statuses.append(StatusChange(key, "promoted", f"same fact as {into} (already in MEMORY.md)"))
            already.append(Outcome(key, self.candidates[key].text, f"same fact as {into}"))
        not_passed = tuple(
            Outcome(s.candidate.key, s.candidate.text, f"failed gates: {', '.join(s.score.failed_gates)}")
            for s in self.scored
            if not s.score.passed
        )
        marked: dict[str, str] = {}
        for p in self._promote:
            earlier = self._corrects(p.scored)
            if earlier:
                marked[earlier] = p.key
        for later, earlier in self._replacing.items():
            if later in self._present:  # the correction reached MEMORY.md on an earlier night
                marked.setdefault(earlier, later)
        done, disputed = struck_keys(self.memory_text), contested_keys(self.memory_text)
        struck, contested = {}, {}
        for earlier, later in marked.items():
            if earlier in done:
                continue
            if not self.candidates[earlier].contested:
                struck[earlier] = later
            elif earlier not in disputed:
                contested[earlier] = later
        return PromotionPlan(
            struck=tuple(sorted(struck.items())),
            contested=tuple(sorted(contested.items())),
            promote=tuple(self._promote),
            already=tuple(already),
            dropped=tuple(self._dropped),
            blocked=tuple(self._blocked),
            not_passed=not_passed,
            expired=tuple(self._expired),
            statuses=tuple(statuses),
            refused_keys=tuple(self._refused),
            secrets_redacted=self._secrets,
        )


def plan_promotions(
    scored: Sequence[Scored],
    memory_text: str,
    config: PlanConfig,
    candidates: Mapping[str, Candidate],
    statements: Mapping[str, Statement],
    decisions: Mapping[str, WriteDecision] | None = None,
    joined: Mapping[str, str] | None = None,
) -> PromotionPlan:
    """The plan over inputs already gathered: ``statements`` by representative key (a fact
    missing there counts as no longer in the dailies), ``decisions`` by speaking key (none: allow)."""
    planner = PromotionPlanner(scored, memory_text, config, candidates, dict(joined or {}))
    for s in planner.due():
        statement = statements.get(s.candidate.key, Statement(None, None))
        proposal = planner.consider(s, statement)
        if proposal is not None:
            planner.accept(proposal, (decisions or {}).get(proposal.speaker.key))
    return planner.plan()


@dataclass(frozen=True)
class MemoryWrite:
    text: str
    regions: list[str]
    compaction: Compaction
    human_edits: list[dict[str, str]]


def plan_memory_write(
    current: str,
    items: list[Item],
    *,
    budget: int,
    max_evict_fraction: float,
    written: dict[str, str],
    struck: dict[str, str] | None = None,
    contested: dict[str, str] | None = None,
) -> MemoryWrite:
    """MEMORY.md with ``items`` added to their sections, the items of ``struck`` (key -> a note
    naming what replaced it) struck through and those of ``contested`` marked "(contested by
    …)", then compacted to ``budget`` bytes (evicting at most ``max_evict_fraction`` of the
    promoted items, never the new ones or a human's edits)."""
    text, regions = add_items(current, items)
    if struck or contested:
        text, more = strike_items(text, struck or {}, written, contested or {})
        regions = list(dict.fromkeys([*regions, *more]))
    text, compaction = compact(
        text,
        budget,
        keep=set(),
        keep_keys={i.key for i in items},
        max_evict_fraction=max_evict_fraction,
        written=written,
    )
    return MemoryWrite(text, regions, compaction, human_edits(current, written))
