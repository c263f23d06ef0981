"""REM phase: recurring themes over the last week, possible lasting truths, corrections, and
reinforcement fed back into the candidates. With a model configured it may also summarise the
themes (prompts/rem_themes.md.j2); offline the summary is the deterministic tag statistics.

:func:`plan_rem` is pure (entries and candidates in, a :class:`RemPlan` out); :func:`rem` reads the
window's dailies, plans, asks the model for the summary and returns a frozen :class:`RemResult`;
:func:`apply_rem` is the thin executor that changes the candidate pool (reinforcement, corrections).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lifelong import llm, prompts
from lifelong.contracts import PluginContext
from lifelong.errors import LLMOffline
from lifelong.update_model import applies_to, update_probabilities

from .candidates import Candidate, CandidatePool
from .dailies import list_dailies, shared_candidates
from .themes import Entry, Theme, find_corrections, find_themes, topic_terms


def offline_summary(themes: list[Any] | tuple[Any, ...]) -> str:
    if not themes:
        return "No theme recurred across days."
    parts = [f"{t.tag} ({t.days} days, {t.entries} entries)" for t in themes[:6]]
    return "Recurring: " + ", ".join(parts) + "."


def _entry_terms(text: str, heading: str) -> frozenset[str]:
    section = heading.split(" > ")[-1] if heading else ""
    return topic_terms(f"{section}. {text}" if section else text)


@dataclass(frozen=True)
class Revision:
    """A later note revising an earlier candidate: a staged one is superseded, a promoted one is
    marked in MEMORY.md: struck through when the later line surely updates it
    (:func:`lifelong.facts.surely_updates`, ``sure``), else marked contested (both stay)."""

    earlier: str
    earlier_text: str
    later: str
    later_text: str
    shared: tuple[str, ...]
    sure: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "earlier": self.earlier,
            "earlier_text": self.earlier_text,
            "later": self.later,
            "later_text": self.later_text,
            "shared": list(self.shared),
            "sure": self.sure,
        }


@dataclass(frozen=True)
class RemPlan:
    themes: tuple[Theme, ...]
    reinforce: tuple[str, ...]  # staged keys that carry a recurring theme (one REM boost per night)
    truths: tuple[dict[str, Any], ...]  # reinforced candidates seen on two days or more
    supersede: tuple[Revision, ...]  # staged candidates a later note corrected
    outdated: tuple[Revision, ...]  # promoted candidates a later note corrected


@dataclass(frozen=True)
class RemConfig:
    min_days: int
    min_entries: int
    max_themes: int

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> RemConfig:
        return cls(cfg["theme_min_days"], cfg["theme_min_entries"], cfg["max_themes"])


def plan_rem(
    entries: list[Entry],
    candidates: Mapping[str, Candidate],
    recall_days: Mapping[str, set[str]],
    today: dt.date,
    tz: dt.tzinfo,
    config: RemConfig,
    learned: Callable[[list[tuple[str, str]]], dict[tuple[str, str], float] | None] | None = None,
) -> RemPlan:
    """Themes, reinforcement and corrections over the window's ``entries`` (pure, but for
    ``learned``: the learned update reader, see :func:`themes.find_corrections`)."""
    themes = find_themes(
        entries, min_days=config.min_days, min_entries=config.min_entries, limit=config.max_themes
    )
    theme_tags = {t.tag for t in themes}
    entry_days: dict[str, set[dt.date]] = {}
    entry_themes: dict[str, set[str]] = {}
    for e in entries:
        entry_days.setdefault(e.key, set()).add(e.day)
        entry_themes.setdefault(e.key, set()).update(e.terms & theme_tags)
    reinforce, truths = [], []
    for key, tags in entry_themes.items():
        c = candidates.get(key)
        if c is None or c.status != "staged" or not tags:
            continue
        if c.rem_last is not None and dt.datetime.fromtimestamp(c.rem_last, tz).date() == today:
            continue  # one REM boost per night
        reinforce.append(key)
        days = {d.isoformat() for d in entry_days[key]} | recall_days.get(key, set())
        if len(days) >= 2:
            truths.append({"key": key, "text": c.text, "themes": sorted(tags), "source": c.citation})

    # corrections: a later note revising an earlier candidate
    known = {
        c.key: Entry(c.key, dt.date.fromisoformat(c.day), c.text, _entry_terms(c.text, c.heading))
        for c in candidates.values()
        if c.status in ("staged", "promoted") and c.day
    }
    status: dict[str, str] = {}  # what the plan has decided so far, over the candidates' state
    corrected_by: dict[str, str | None] = {}
    supersede, outdated = [], []
    for corr in find_corrections(entries, known, learned):
        c = candidates[corr.earlier]
        later = candidates.get(corr.later)
        later_text = later.text if later else ""
        item = Revision(corr.earlier, c.text, corr.later, later_text, tuple(corr.shared), corr.sure)
        now_status = status.get(c.key, c.status)
        if now_status == "staged" and corr.confidence < STAGED_SUPERSEDE_CONFIDENCE:
            continue  # a fact not yet promoted is set aside only on a sure update: else both stay staged
        if now_status == "staged":
            status[c.key], corrected_by[c.key] = "superseded", corr.later
            supersede.append(item)
        elif now_status == "promoted" and corrected_by.get(c.key, c.superseded_by) != corr.later:
            if not corr.sure and c.superseded_by and not c.contested:
                continue  # struck on a sure reading: a weaker one does not undo that
            corrected_by[c.key] = corr.later
            outdated.append(item)
    return RemPlan(tuple(themes), tuple(reinforce), tuple(truths), tuple(supersede), tuple(outdated))


# a staged fact is superseded (never promoted) only when the later line surely updates it; a
# promoted one is marked (and struck through once its correction is in MEMORY.md) from
# themes.CORRECTION_CONFIDENCE
STAGED_SUPERSEDE_CONFIDENCE = 0.9


@dataclass(frozen=True)
class RemResult:
    """What the REM phase found: its plan, the themes' summary (model or offline) and its report."""

    plan: RemPlan
    summary: str
    report: dict[str, Any]

    @property
    def themes(self) -> tuple[Theme, ...]:
        return self.plan.themes


def window_entries(ctx: PluginContext, run: Any, pool: CandidatePool, reader: Any) -> list[Entry]:
    """The snippets of the dailies in REM's window, as theme entries."""
    cfg = run.config
    today = run.now.date()
    since = None if run.backfill else today - dt.timedelta(days=cfg["rem_lookback_days"])
    entries: list[Entry] = []
    for rel in list_dailies(ctx.workspace, since, today):
        for s in reader.snippets(rel) or []:
            if s.day is None:
                continue
            key = pool.alias.get(s.key, s.key)
            entries.append(Entry(key, s.day, s.text, _entry_terms(s.text, s.heading)))
    return entries


def summarise(
    ctx: PluginContext, run: Any, pool: CandidatePool, themes: tuple[Theme, ...]
) -> tuple[str, str, str]:
    """(summary, its source: offline | model, a note when the model was unavailable)."""
    cfg = run.config
    summary, source, note = offline_summary(themes), "offline", ""
    if not (run.model and cfg["use_model"] and themes):
        return summary, source, note
    prompt = prompts.render(
        "dreaming_rem_themes.md.j2",
        ctx.workspace,
        today=run.now.date().isoformat(),
        timezone=str(ctx.workspace.timezone),
        themes=[t.as_json() for t in themes],
        samples=[
            {"tag": t.tag, "texts": [pool.candidates[k].text for k in t.keys[:3] if k in pool.candidates]}
            for t in themes[:6]
        ],
    )
    try:
        reply = llm.complete(
            [{"role": "user", "content": prompt}],
            model=run.model,
            deadline_s=cfg["model_timeout_s"],
            **run.llm_kwargs,
        )
        if reply.strip():
            summary, source = reply.strip()[:1500], "model"
    except LLMOffline as exc:
        note = f"model unavailable, offline summary used ({exc})"
    return summary, source, note


def learned_reader(
    ctx: PluginContext,
) -> Callable[[list[tuple[str, str]]], dict[tuple[str, str], float] | None] | None:
    """The learned update reader on the workspace's embedder, or None (another embedder, none,
    or a misconfigured one: the rules alone)."""
    try:
        embedder = ctx.embedder
    except Exception:
        return None
    if not applies_to(embedder):
        return None
    return lambda pairs: update_probabilities(embedder, pairs)


def rem(ctx: PluginContext, run: Any, pool: CandidatePool, reader: Any) -> RemResult:
    """Read the window, plan (:func:`plan_rem`), summarise; changes nothing."""
    cfg = run.config
    entries = window_entries(ctx, run, pool, reader)
    recall_days: dict[str, set[str]] = {}
    for sig in pool.new_signals.values():
        recall_days.setdefault(sig.key, set()).add(sig.day)
    plan = plan_rem(
        entries,
        shared_candidates(pool, reader),  # nothing of a private note is themed or reported
        recall_days,
        run.now.date(),
        ctx.workspace.timezone,
        RemConfig.from_config(cfg),
        learned_reader(ctx),
    )
    summary, source, note = summarise(ctx, run, pool, plan.themes)
    report = {
        "phase": "rem",
        "lookback_days": None if run.backfill else cfg["rem_lookback_days"],
        "entries": len(entries),
        "themes": [t.as_json() for t in plan.themes],
        "lasting_truths": list(plan.truths[:50]),
        "corrections": [r.as_json() for r in plan.supersede],
        "possibly_outdated_in_memory": [r.as_json() for r in plan.outdated],
        "reinforced": len(plan.reinforce),
        "summary": summary,
        "summary_source": source,
        "summary_note": note,
    }
    return RemResult(plan, summary, report)


def apply_rem(pool: CandidatePool, plan: RemPlan, run_id: str, now_ts: float) -> None:
    """The plan's effects on the pool (saved with the run): a REM boost for each reinforced
    candidate, corrected staged candidates superseded, corrected promoted ones marked."""
    for key in plan.reinforce:
        c = pool.candidates[key]
        c.rem_hits += 1
        c.rem_last = now_ts
        c.dirty = True
    for r in plan.supersede:
        pool.candidates[r.earlier].superseded_by = r.later
        pool.set_status(r.earlier, "superseded", run_id, f"corrected by {r.later}")
    for r in plan.outdated:
        c = pool.candidates[r.earlier]
        c.superseded_by = r.later
        c.contested = not r.sure
        c.dirty = True
