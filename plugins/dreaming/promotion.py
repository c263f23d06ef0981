"""Deep phase: score every staged candidate, then read the inputs of the plan (MEMORY.md, each
passing fact's live daily text, the model's merged sentence, ``before_message_write``'s decision),
plan with :class:`plan.PromotionPlanner` (pure) and apply the plan: the survivors are appended to
MEMORY.md in their managed sections (journaled, under the workspace lock), compaction keeps the
file within its byte budget, and candidate statuses follow."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from lifelong import llm, prompts
from lifelong.contracts import PluginContext, WriteCandidate, WriteDecision
from lifelong.errors import LLMOffline
from lifelong.facts import relate, typed_value_pair

from . import state
from .candidates import Candidate, CandidatePool, Occurrence
from .dailies import DailyReader, shared_candidates
from .facts import (
    RULES_VERSION,
    FactPairCache,
    GroupingConfig,
    completeness,
    fact_cosine,
    fact_view,
    group_facts_known,
    names_seen,
    values_of,
    view_fingerprint,
)
from .memory_file import human_edits
from .plan import (
    MemoryWrite,
    PlanConfig,
    PlannedPromotion,
    PromotionPlan,
    PromotionPlanner,
    Proposal,
    Scored,
    Statement,
    plan_memory_write,
    related_memories,
)
from .scoring import ScoreConfig, Signals, score
from .screening import screen_statement
from .snippets import Snippet, carries_marker, is_report_junk, words
from .themes import asserted_tags, concept_tags, is_date_tag, richness

DAY_S = 86400.0
DAY_BOUND = re.compile(
    r"\b(today|tonight|tonite|this (morning|afternoon|evening)|tomorrow|tmrw|yesterday|yday)\b", re.I
)


class Recall(NamedTuple):
    """One recall of a candidate: a search at ``ts`` on ``day`` that credited it."""

    ts: float
    day: str
    query_hash: str
    score: float
    event_id: int | None = None


def load_signals(store: Any, pool: CandidatePool, keys: list[str]) -> dict[str, list[Recall]]:
    """The recalls of each candidate key: stored signals plus this run's."""
    out: dict[str, list[Recall]] = defaultdict(list)
    if keys:
        for key, ts, day, qh, sc, eid in state.stored_signals(store, keys):
            out[key].append(Recall(ts, day, qh, sc, eid))
    for s in pool.new_signals.values():  # events past the watermark: never stored before
        out[s.key].append(Recall(s.ts, s.day, s.query_hash, s.score, s.event_id))
    return out


def union_recalls(recalls: dict[str, list[Recall]], keys: Iterable[str]) -> list[Recall]:
    """The recalls of a fact: its members' recall events, each event once (the best-scored)."""
    seen: dict[Any, Recall] = {}
    for k in keys:
        for r in recalls.get(k, []):
            ident = r.event_id
            if ident not in seen or r.score > seen[ident].score:
                seen[ident] = r
    return list(seen.values())


def fact_groups(ctx: PluginContext, run: Any, candidates: list[Candidate]) -> dict[str, list[str]]:
    """Group id -> member keys for ``candidates`` (see facts.py)."""
    occ = run.pool.occurrence_index()
    names = names_seen(c.text for c in candidates)
    views = [
        fact_view(c.key, c.text, {o.path for o in occ.get(c.key, [])} or {c.path}, names) for c in candidates
    ]
    cosine, model = fact_cosine(ctx, run.config, {c.key: c.text for c in candidates})
    cfg = GroupingConfig.from_config(run.config)
    # the pairs of candidates unchanged since the last grouping are reused (same result, see
    # facts.group_facts_known): a night compares only its new lines
    cache = FactPairCache(ctx.store, json.dumps([model, cfg.__dict__, RULES_VERSION], sort_keys=True))
    fps, known = cache.load()
    now = {v.key: view_fingerprint(v) for v in views}
    unchanged = {k for k, fp in now.items() if fps.get(k) == fp}
    grouping = group_facts_known(views, cosine, cfg, known, unchanged)
    if not run.dry_run:  # a dry run writes nothing to the dreaming tables
        cache.save(now, grouping.pairs)
    groups: dict[str, list[str]] = defaultdict(list)
    for key, gid in grouping.ids.items():
        groups[gid].append(key)
    return groups


def _noon_ts(day: str, tz: dt.tzinfo) -> float:
    d = dt.date.fromisoformat(day)
    return dt.datetime(d.year, d.month, d.day, 12, tzinfo=tz).timestamp()


def build_signals(
    c: Candidate,
    recalls: Iterable[tuple],
    occurrences: list[Occurrence],
    now_ts: float,
    tz: dt.tzinfo,
    today: dt.date,
) -> Signals:
    """``recalls``: :class:`Recall` rows, or plain (ts, day, query_hash, score) tuples."""
    rows = [Recall(*r) for r in recalls]
    written = {o.day for o in occurrences if o.day and o.day <= today.isoformat()}
    recall_days = {r.day for r in rows}
    days = sorted(written | recall_days)
    # a look-up on the day a thing was first written down is the burst around writing it ("where
    # did I leave the umbrella" the day it was left), not evidence that it lasts: the recall-days
    # gate counts the days after it
    first_written = min(written, default=None)
    later_recall_days = {d for d in recall_days if first_written is None or d > first_written}
    last = max([r.ts for r in rows] + [_noon_ts(d, tz) for d in written], default=None)
    contexts = len({(r.query_hash, r.day) for r in rows}) + len(written)
    span = (dt.date.fromisoformat(days[-1]) - dt.date.fromisoformat(days[0])).days if days else 0
    return Signals(
        recalls=len(rows),
        unique_queries=len({r.query_hash for r in rows}),
        recall_days=len(later_recall_days),
        contexts=contexts,
        mean_score=sum(r.score for r in rows) / len(rows) if rows else 0.0,
        written_days=len(written),
        distinct_days=len(days),
        span_days=float(span),
        days_since_last=max(0.0, (now_ts - last) / DAY_S) if last is not None else 1e6,
        richness=richness(c.text),
        light_hits=c.light_hits,
        light_age_days=(now_ts - c.light_last) / DAY_S if c.light_last else None,
        rem_hits=c.rem_hits,
        rem_age_days=(now_ts - c.rem_last) / DAY_S if c.rem_last else None,
    )


@dataclass(frozen=True)
class PoolScores:
    scored: list[Scored]  # best first
    fact_groups: dict[str, list[str]]  # group id -> member keys
    joined: dict[str, str]  # staged key -> the promoted key of its fact


def split_corrections(pool: CandidatePool, groups: Iterable[list[str]]) -> list[list[str]]:
    """``groups`` with each staged line REM read as a correction of a promoted member of its group
    (the member's ``superseded_by``) taken out as a fact of its own, when the rules read it as an
    update of the member too (:func:`lifelong.facts.relate`; the learned reader alone took "My GP:
    Dr. Keller, practice on Kastanienallee" for a change of "Dr. Keller is my family doctor, at the
    Kastanienallee practice") and it states a name, amount, time or identifier the member lacks,
    beyond a day ("Bridge … at the Sailing Club instead … from now on" after "Bridge is at the
    Methodist hall"). Fact grouping joins such a line to the item as "the
    same fact" (the same person, the same thing); scored on its own it is due at once, a change
    of a fact already judged durable, and the item is marked. A care log's "Fri 5 May: 08:15 —
    carer" after "Thu 4 May: 08:15 — carer" states only another day, and stays joined."""
    out: list[list[str]] = []
    for members in groups:
        cands = [pool.candidates[k] for k in members]
        corrected = {c.superseded_by: c for c in cands if c.status == "promoted" and c.superseded_by}
        alone = [
            k
            for k in members
            if k in corrected
            and pool.candidates[k].status == "staged"
            and relate(corrected[k].text, pool.candidates[k].text).kind == "update"
            and asserts_more_than_its_day(pool.candidates[k].text, corrected[k].text)
        ]
        out.extend([[k] for k in alone])
        out.append([k for k in members if k not in alone])
    return out


def asserts_more_than_its_day(later: str, earlier: str) -> bool:
    """``later`` states a value ``earlier`` lacks (:func:`lifelong.facts.typed_values`: an amount,
    a time, a phone number, an identifier…) other than a date or a weekday, or a name or other
    concept tag (:func:`themes.concept_tags`, less its negated clauses) other than a date."""
    later_values, earlier_values = typed_value_pair(later, earlier)
    values = later_values - earlier_values
    if any(shape not in ("date", "weekday") for shape, _ in values):
        return True
    fresh = asserted_tags(later) - concept_tags(earlier)
    return any(not is_date_tag(t) for t in fresh)


def score_pool(ctx: PluginContext, run: Any) -> PoolScores:
    """Score every fact with a staged member: its members' signals together (recall events once
    each, occurrences of every member, the strongest reinforcement). A fact already promoted
    (a member in MEMORY.md) is not scored again: its new statements join it (``joined``)."""
    pool: CandidatePool = run.pool
    sc = ScoreConfig.from_config(run.config, backfill=run.backfill)
    occ = pool.occurrence_index()
    # a candidate only ever written in private notes is not scored: never promoted or reported
    shared = shared_candidates(pool, run.reader)
    live = [c for c in shared.values() if c.status in ("staged", "promoted")]
    staged_any = any(c.status == "staged" for c in live)
    groups = fact_groups(ctx, run, live) if staged_any else {}
    joined: dict[str, str] = {}
    keys = [k for members in groups.values() for k in members]
    recalls = load_signals(ctx.store, pool, keys)
    tz = ctx.workspace.timezone
    now_ts = run.now.timestamp()
    out = []
    for members in split_corrections(pool, groups.values()):
        cands = [pool.candidates[k] for k in members]
        staged = [c for c in cands if c.status == "staged"]
        if not staged:
            continue
        promoted = [c for c in cands if c.status == "promoted"]
        if promoted:
            for c in staged:
                joined[c.key] = promoted[0].key
            continue
        rep = max(staged, key=lambda c: (*completeness(c.text), c.day, c.key))
        merged = replace(
            rep,
            light_hits=max(c.light_hits for c in staged),
            light_last=max((c.light_last for c in staged if c.light_last), default=None),
            rem_hits=max(c.rem_hits for c in staged),
            rem_last=max((c.rem_last for c in staged if c.rem_last), default=None),
        )
        occurrences = [o for c in staged for o in occ.get(c.key, [])]
        found = union_recalls(recalls, [c.key for c in staged])
        if all(DAY_BOUND.search(c.text) for c in staged):
            # "the plumber comes today": about the day it was written; later look-ups of it are not
            # evidence that it lasts
            written = {o.day for o in occurrences}
            found = [r for r in found if r.day in written]
        sig = build_signals(merged, found, occurrences, now_ts, tz, run.now.date())
        sig = replace(sig, richness=max(richness(c.text) for c in staged))
        result = score(sig, sc)
        ordered = (rep.key, *sorted(c.key for c in staged if c.key != rep.key))
        out.append(Scored(rep, sig, result, ordered))
    out.sort(key=lambda s: (-s.score.total, s.candidate.key))
    return PoolScores(out, groups, joined)


def live_snippet(reader: DailyReader, occurrences: list[Occurrence]) -> Snippet | None:
    """The candidate's text as it is in the daily right now (latest occurrence first)."""
    for occ in sorted(occurrences, key=lambda o: (o.day, o.path), reverse=True):
        snippets = reader.snippets(occ.path, fresh=True)
        for s in snippets or []:
            if s.key == occ.snippet_key:
                return s
    return None


def merged_statement(ctx: PluginContext, run: Any, statements: list[str], fallback: str) -> str | None:
    """One sentence for a fact written several ways, from the model (prompts/dreaming_fact_merge.md.j2).
    None — keep the most complete statement — when the model is unavailable or its sentence drops
    a name, date or amount of that statement, runs over the snippet limit, or reads as the suite's
    own output."""
    prompt = prompts.render("dreaming_fact_merge.md.j2", ctx.workspace, statements=statements)
    try:
        reply = llm.complete(
            [{"role": "user", "content": prompt}],
            model=run.model,
            deadline_s=run.config["model_timeout_s"],
            **run.llm_kwargs,
        )
    except LLMOffline as exc:
        ctx.log("dreaming", f"run {run.run_id}: fact merge without the model ({exc})")
        return None
    sentence = re.sub(r"\s+", " ", (reply or "").strip().strip("\"'")).lstrip("-*+ ").strip()
    if not sentence or "\n" in (reply or "").strip() or len(sentence) > run.config["max_snippet_chars"]:
        return None
    if carries_marker(sentence) or is_report_junk(sentence) or "<!--" in sentence:
        return None
    must = values_of(fallback) | {t for t in concept_tags(fallback) if not any(ch.isdigit() for ch in t)}
    have = values_of(sentence) | concept_tags(sentence) | {w.lower() for w in words(sentence)}
    low = sentence.lower()
    if any(m not in have and m not in low for m in must):
        return None
    return sentence


def candidate_json(s: Scored) -> dict[str, Any]:
    c, sig = s.candidate, s.signals
    return {
        "key": c.key,
        "text": c.text,
        "source": c.citation,
        "score": s.score.as_json(),
        "recalls": sig.recalls,
        "unique_queries": sig.unique_queries,
        "distinct_days": sig.distinct_days,
    }


def read_statement(ctx: PluginContext, run: Any, s: Scored, occ: dict[str, list[Occurrence]]) -> Statement:
    """How the dailies state fact ``s`` right now: its first live member (the representative when
    it is still there), the model's one sentence when several members are live, every live
    member's citation."""
    members = s.members or (s.candidate.key,)
    lives = [(k, live_snippet(run.reader, occ.get(k, []))) for k in members]
    lives = [(k, x) for k, x in lives if x is not None]
    if not lives:
        return Statement(None, None, paths=tuple(sorted({o.path for k in members for o in occ.get(k, [])})))
    live, merged_by = lives[0][1], "member"
    if len(lives) > 1 and run.model and run.config["use_model"]:
        statements = [x.text for _, x in sorted(lives, key=lambda kx: kx[1].day or dt.date.min)]
        sentence = merged_statement(ctx, run, statements, live.text)
        if sentence is not None:
            live, merged_by = replace(live, text=sentence), "model"
    ordered = sorted(lives, key=lambda kx: (kx[1].day or dt.date.min, kx[1].path, kx[1].start_line))
    sources = tuple(dict.fromkeys(x.citation for _, x in ordered))
    return Statement(lives[0][0], live, sources, merged_by)


def ask_write_hook(ctx: PluginContext, run: Any, p: Proposal, memory: list, target: str) -> WriteDecision:
    """``before_message_write``'s decision on a planned promotion."""
    live = p.live
    payload = WriteCandidate(
        text=live.text,
        target=target,
        source="dreaming",
        key=p.speaker.key,
        path=live.path,
        start_line=live.start_line,
        end_line=live.end_line,
        heading=live.heading,
        written_on=live.day,
        run_id=run.run_id,
        score=round(p.scored.score.total, 4),
    )
    return ctx.host.decide_write(payload, related_memories(memory, p.tokens, target))


def record_scores(scored: list[Scored]) -> None:
    for s in scored:
        c = s.candidate
        c.last_score = round(s.score.total, 4)
        c.components = json.dumps(s.score.as_json()["components"])
        c.dirty = True


def build_plan(ctx: PluginContext, run: Any, pool_scores: PoolScores, memory_text: str) -> PromotionPlan:
    """Walk the planner over ``scored``, reading each due fact's statement and asking the write
    hook about each proposal (not in a dry run)."""
    pool: CandidatePool = run.pool
    ws = ctx.workspace
    config = PlanConfig.from_config(run.config, backfill=run.backfill, dry_run=run.dry_run)
    planner = PromotionPlanner(pool_scores.scored, memory_text, config, pool.candidates, pool_scores.joined)
    target = ws.relpath(ws.memory_file) if ws.memory_file.exists() else "MEMORY.md"
    occ = pool.occurrence_index()
    for s in planner.due():
        proposal = planner.consider(s, read_statement(ctx, run, s, occ))
        if proposal is not None:
            decision = None if run.dry_run else ask_write_hook(ctx, run, proposal, planner.memory, target)
            planner.accept(proposal, decision)
    return planner.plan()


def struck_pointers(run: Any, plan: PromotionPlan, *, contested: bool = False) -> dict[str, str]:
    """For each promoted item a later note changed (``contested``: may have changed): what the
    strike-through (the contested mark) names, the new statement (shortened) and the night that
    saw it."""
    texts = {p.key: p.live.text for p in plan.promote}
    out: dict[str, str] = {}
    for earlier, later in plan.contested if contested else plan.struck:
        cand = run.pool.candidates.get(later)
        text = " ".join((texts.get(later) or (cand.text if cand else later)).split())
        # a correction promoted on an earlier night is quoted from the daily: screened like it was
        safe, _, rules = screen_statement(text)
        text = later if rules else safe
        text = text if len(text) <= 80 else text[:79] + "…"
        out[earlier] = f'"{text.replace("~~", "")}", {run.now.date().isoformat()}'
    return out


def write_memory(ctx: PluginContext, run: Any, plan: PromotionPlan, hashes: dict[str, str]) -> MemoryWrite:
    """Apply the plan's items to MEMORY.md as it is under the lock (journaled; not in a dry run)."""
    ws, cfg = ctx.workspace, run.config
    with ws.lock("write", timeout=10.0) if not run.dry_run else contextlib.nullcontext():
        current = ws.memory_file.read_text("utf-8") if ws.memory_file.exists() else ""
        write = plan_memory_write(
            current,
            plan.items(run.now),
            budget=cfg["memory_max_bytes"],
            max_evict_fraction=cfg.get("max_evict_fraction", 0.1),
            written=hashes,
            struck=struck_pointers(run, plan),
            contested=struck_pointers(run, plan, contested=True),
        )
        if not run.dry_run:
            run.journal.write(ws.memory_file, write.text)
    return write


def apply_statuses(run: Any, plan: PromotionPlan, write: MemoryWrite | None) -> None:
    pool: CandidatePool = run.pool
    for change in plan.statuses:
        pool.set_status(change.key, change.status, run.run_id, change.reason)
    if write is None or run.dry_run:
        return
    for p in plan.promote:
        s, decision = p.scored, p.decision
        note = f"S={s.score.total:.3f}"
        if decision is not None and decision.action != "allow":
            note += f"; {decision.action}: {decision.reason}"
        pool.set_status(p.key, "promoted", run.run_id, note)
        for k in s.members:
            if k != p.key:
                pool.set_status(k, "promoted", run.run_id, f"same fact as {p.key}")
    for ev in write.compaction.evicted:
        if ev["key"] in pool.candidates:
            pool.set_status(ev["key"], "evicted", run.run_id, "compacted out of MEMORY.md")


def promoted_json(p: PlannedPromotion) -> dict[str, Any]:
    entry = {
        **candidate_json(p.scored),
        "text": p.live.text,
        "source": p.live.citation,
        "sources": list(p.sources),
        "members": list(p.scored.members),
        "statement": p.merged_by,
        "section": p.section,
    }
    if p.decision is not None:
        entry["decision"] = {
            "action": p.decision.action,
            "reason": p.decision.reason,
            "supersedes": list(p.decision.supersedes),
            "source": p.decision.source,
        }
    return entry


@dataclass(frozen=True)
class DeepResult:
    """What the deep phase did: the scores, the plan it applied, the MEMORY.md write (None when
    nothing was promoted), the human edits found in MEMORY.md, and its report."""

    scores: PoolScores
    plan: PromotionPlan
    write: MemoryWrite | None
    human_edits: list[dict[str, str]]
    promoted: list[dict[str, Any]]
    report: dict[str, Any]


def deep(ctx: PluginContext, run: Any) -> DeepResult:
    """Read the inputs, plan (``plan.PromotionPlanner``), apply; candidate statuses and the
    journaled MEMORY.md write are the only effects."""
    cfg = run.config
    ws = ctx.workspace
    scores = score_pool(ctx, run)
    scored = scores.scored
    record_scores(scored)
    memory_path = ws.memory_file
    memory_text = memory_path.read_text("utf-8") if memory_path.exists() else ""
    plan = build_plan(ctx, run, scores, memory_text)
    hashes = state.written_hashes(ctx.store)
    write = write_memory(ctx, run, plan, hashes) if plan.promote or plan.struck or plan.contested else None
    apply_statuses(run, plan, write)
    edits = write.human_edits if write else human_edits(memory_text, hashes)
    promoted = [promoted_json(p) for p in plan.promote]
    near_misses = [
        candidate_json(s) | {"failed_gates": list(s.score.failed_gates)} for s in scored if not s.score.passed
    ][:10]
    report = {
        "phase": "deep",
        "mode": "backfill" if run.backfill else "nightly",
        "thresholds": {
            k: v
            for k, v in ScoreConfig.from_config(cfg, backfill=run.backfill).__dict__.items()
            if k.startswith("min_")
        },
        "scored": len(scored),
        "passed_gates": sum(1 for s in scored if s.score.passed),
        "promoted": promoted,
        "struck": [{"key": earlier, "by": later} for earlier, later in plan.struck],
        "contested": [{"key": earlier, "by": later} for earlier, later in plan.contested],
        "already_present": [o.as_json() for o in plan.already],
        "dropped": [o.as_json() for o in plan.dropped],
        "blocked": [o.as_json() for o in plan.blocked],
        "warnings": [p for p in promoted if p.get("decision", {}).get("action") in ("warn", "supersede")],
        "expired": len(plan.expired),
        "near_misses": near_misses,
        "compaction": write.compaction.as_json() if write else None,
        "human_edits": edits,
        "memory_file": ws.relpath(memory_path) if memory_path.exists() else "MEMORY.md",
        "memory_bytes": len(write.text.encode("utf-8")) if write else len(memory_text.encode("utf-8")),
        "written_at": run.now.timestamp(),
    }
    return DeepResult(scores, plan, write, edits, promoted, report)
