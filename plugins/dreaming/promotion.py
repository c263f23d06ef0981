"""Deep phase: score every staged candidate, apply the gates, re-read the live daily, ask
``before_message_write``, and append the survivors to MEMORY.md in this run's managed region
(journaled). Compaction keeps MEMORY.md within its byte budget."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from lifelong import llm
from lifelong.contracts import RelatedFact, WriteCandidate, WriteDecision
from lifelong.errors import LLMOffline

from .candidates import Candidate, CandidatePool, DailyReader, Occurrence
from .facts import (
    FactVectors,
    GroupingConfig,
    completeness,
    fact_view,
    group_facts,
    names_seen,
    values_of,
)
from .memory_file import (
    Item,
    add_items,
    compact,
    existing_keys,
    human_edits,
    item_hash,
    memory_lines,
    topic_of,
)
from .rem import PROMPTS
from .scoring import Score, ScoreConfig, Signals, score
from .screening import screen_statement
from .snippets import Snippet, carries_marker, is_report_junk, jaccard, similarity_tokens, words
from .themes import concept_tags, richness

DAY_S = 86400.0
DAY_BOUND = re.compile(r"\b(today|tonight|this (morning|afternoon|evening)|tomorrow|yesterday)\b", re.I)
COVERED_JACCARD = 0.6


@dataclass(frozen=True)
class Scored:
    candidate: Candidate  # the group's representative: its most complete statement
    signals: Signals
    score: Score
    members: tuple[str, ...] = ()  # every candidate key stating the fact (the representative's included)


def load_signals(store: Any, pool: CandidatePool, keys: list[str]) -> dict[str, list[tuple]]:
    """(ts, day, query_hash, score, event_id) per candidate key: stored signals plus this run's."""
    out: dict[str, list[tuple]] = defaultdict(list)
    if keys:
        for key, ts, day, qh, sc, eid in store.conn.execute(
            "SELECT key, ts, day, query_hash, score, event_id FROM dream_signals"
            " WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(keys),),
        ):
            out[key].append((ts, day, qh, sc, eid))
    for s in pool.new_signals.values():  # events past the watermark: never stored before
        out[s.key].append((s.ts, s.day, s.query_hash, s.score, s.event_id))
    return out


def union_recalls(recalls: dict[str, list[tuple]], keys: Iterable[str]) -> list[tuple]:
    """The recalls of a fact: its members' recall events, each event once."""
    seen: dict[Any, tuple] = {}
    for k in keys:
        for r in recalls.get(k, []):
            ident = r[4] if len(r) > 4 else (r[0], r[2])
            if ident not in seen or r[3] > seen[ident][3]:
                seen[ident] = r
    return list(seen.values())


def fact_groups(ctx: Any, run: Any, candidates: list[Candidate]) -> dict[str, list[str]]:
    """Group id -> member keys for ``candidates`` (see facts.py)."""
    occ = run.pool.occurrence_index()
    names = names_seen(c.text for c in candidates)
    views = [
        fact_view(c.key, c.text, {o.path for o in occ.get(c.key, [])} or {c.path}, names) for c in candidates
    ]
    cosine = None
    if run.config.get("fact_embeddings", True):
        vectors = FactVectors(ctx.store, ctx.embedder, lambda m: ctx.log("dreaming", m))
        vectors.load({c.key: c.text for c in candidates})
        cosine = None if vectors.failed else vectors.cosine
    ids = group_facts(views, cosine, GroupingConfig.from_config(run.config))
    groups: dict[str, list[str]] = defaultdict(list)
    for key, gid in ids.items():
        groups[gid].append(key)
    return groups


def _noon_ts(day: str, tz: dt.tzinfo) -> float:
    d = dt.date.fromisoformat(day)
    return dt.datetime(d.year, d.month, d.day, 12, tzinfo=tz).timestamp()


def build_signals(
    c: Candidate,
    recalls: list[tuple],
    occurrences: list[Occurrence],
    now_ts: float,
    tz: dt.tzinfo,
    today: dt.date,
) -> Signals:
    written = {o.day for o in occurrences if o.day and o.day <= today.isoformat()}
    recall_days = {r[1] for r in recalls}
    days = sorted(written | recall_days)
    last = max([r[0] for r in recalls] + [_noon_ts(d, tz) for d in written], default=None)
    contexts = len({(r[2], r[1]) for r in recalls}) + len(written)
    span = (dt.date.fromisoformat(days[-1]) - dt.date.fromisoformat(days[0])).days if days else 0
    return Signals(
        recalls=len(recalls),
        unique_queries=len({r[2] for r in recalls}),
        recall_days=len(recall_days),
        contexts=contexts,
        mean_score=sum(r[3] for r in recalls) / len(recalls) if recalls else 0.0,
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


def score_pool(ctx: Any, run: Any) -> list[Scored]:
    """Score every fact with a staged member: its members' signals together (recall events once
    each, occurrences of every member, the strongest reinforcement). A fact already promoted
    (a member in MEMORY.md) is not scored again: its new statements join it (``run.joined``)."""
    pool: CandidatePool = run.pool
    sc = ScoreConfig.from_config(run.config, backfill=run.backfill)
    live = [c for c in pool.candidates.values() if c.status in ("staged", "promoted")]
    staged_any = any(c.status == "staged" for c in live)
    groups = fact_groups(ctx, run, live) if staged_any else {}
    run.fact_groups = groups
    run.joined = {}
    keys = [k for members in groups.values() for k in members]
    recalls = load_signals(ctx.store, pool, keys)
    occ = pool.occurrence_index()
    tz = ctx.workspace.timezone
    now_ts = run.now.timestamp()
    out = []
    for members in groups.values():
        cands = [pool.candidates[k] for k in members]
        staged = [c for c in cands if c.status == "staged"]
        if not staged:
            continue
        promoted = [c for c in cands if c.status == "promoted"]
        if promoted:
            for c in staged:
                run.joined[c.key] = promoted[0].key
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
            found = [r for r in found if r[1] in written]
        sig = build_signals(merged, found, occurrences, now_ts, tz, run.now.date())
        sig = replace(sig, richness=max(richness(c.text) for c in staged))
        result = score(sig, sc)
        ordered = (rep.key, *sorted(c.key for c in staged if c.key != rep.key))
        out.append(Scored(rep, sig, result, ordered))
    out.sort(key=lambda s: (-s.score.total, s.candidate.key))
    return out


def live_snippet(reader: DailyReader, occurrences: list[Occurrence]) -> Snippet | None:
    """The candidate's text as it is in the daily right now (latest occurrence first)."""
    for occ in sorted(occurrences, key=lambda o: (o.day, o.path), reverse=True):
        snippets = reader.snippets(occ.path, fresh=True)
        for s in snippets or []:
            if s.key == occ.snippet_key:
                return s
    return None


def related_memories(
    lines: list[tuple[int, str, frozenset[str]]], tokens: frozenset[str], target: str, limit: int = 5
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


def merged_statement(ctx: Any, run: Any, statements: list[str], fallback: str) -> str | None:
    """One sentence for a fact written several ways, from the model (prompts/fact_merge.md.j2).
    None — keep the most complete statement — when the model is unavailable or its sentence drops
    a name, date or amount of that statement, runs over the snippet limit, or reads as the suite's
    own output."""
    prompt = PROMPTS.render("fact_merge.md.j2", statements=statements)
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


def written_hashes(store: Any) -> dict[str, str]:
    """key -> hash of the text each promoted item had when a run wrote it."""
    return dict(store.conn.execute("SELECT key, sha FROM dream_items").fetchall())


def deep_phase(ctx: Any, run: Any) -> dict[str, Any]:
    cfg = run.config
    pool: CandidatePool = run.pool
    ws = ctx.workspace
    scored = score_pool(ctx, run)
    run.scored = scored
    now_ts = run.now.timestamp()
    expired = 0
    for s in scored:
        c = s.candidate
        c.last_score = round(s.score.total, 4)
        c.components = json.dumps(s.score.as_json()["components"])
        c.dirty = True
        if not s.score.passed and s.signals.days_since_last > cfg["candidate_ttl_days"]:
            pool.set_status(c.key, "expired", run.run_id, f"no signal for {cfg['candidate_ttl_days']} days")
            expired += 1

    memory_path = ws.memory_file
    memory_text = memory_path.read_text("utf-8") if memory_path.exists() else ""
    present = existing_keys(memory_text)
    mem = [(n, t, similarity_tokens(t)) for n, t in memory_lines(memory_text)]
    chosen: list[tuple[Scored, Snippet, WriteDecision | None]] = []
    chosen_tokens: list[tuple[str, str, frozenset[str]]] = []
    merged_how: dict[str, str] = {}
    already, dropped, blocked = [], [], []
    occ = pool.occurrence_index()
    for s in scored:
        if not s.score.passed:
            continue
        cap = cfg.get("backfill_max_promotions", 200) if run.backfill else cfg["max_promotions_per_run"]
        if len(chosen) >= cap:
            break
        c = s.candidate
        if c.superseded_by:
            continue
        if c.key in present:
            pool.set_status(c.key, "promoted", run.run_id, "already in MEMORY.md")
            already.append({"key": c.key, "text": c.text, "reason": "key already in MEMORY.md"})
            continue
        members = s.members or (c.key,)
        lives = [(k, live_snippet(run.reader, occ.get(k, []))) for k in members]
        lives = [(k, x) for k, x in lives if x is not None]
        live = lives[0][1] if lives else None
        if live is None:
            paths = sorted({o.path for k in members for o in occ.get(k, [])})
            reason = (
                f"text no longer in {', '.join(paths) or 'any daily'} (edited or deleted since it was staged)"
            )
            for k in members:
                pool.set_status(k, "dropped", run.run_id, reason)
            dropped.append({"key": c.key, "text": c.text, "reason": reason})
            continue
        if lives[0][0] != c.key:  # the most complete statement was edited away: the next one speaks
            c = pool.candidates[lives[0][0]]
        merged_by = "member"
        if len(lives) > 1 and run.model and cfg["use_model"]:
            sentence = merged_statement(
                ctx,
                run,
                [x.text for _, x in sorted(lives, key=lambda kx: kx[1].day or dt.date.min)],
                live.text,
            )
            if sentence is not None:
                live = replace(live, text=sentence)
                merged_by = "model"
        safe_text, secrets, rules = screen_statement(live.text)
        if rules:  # reads as instructions to an agent, or carries the suite's own tags: never promoted
            reason = f"reads as instructions to an agent ({', '.join(rules)}); never promoted"
            for k in members:
                pool.set_status(k, "blocked", run.run_id, reason)
            blocked.append({"key": c.key, "text": live.text, "reason": reason, "by": "safety"})
            if hasattr(run, "safety"):
                run.safety.refused += 1
                run.safety.refused_keys.append(c.key)
            continue
        if secrets:  # the daily keeps its text; the promoted statement carries it redacted
            live = replace(live, text=safe_text)
            if hasattr(run, "safety"):
                run.safety.secrets_redacted += secrets
        tokens = similarity_tokens(live.text)
        others = [(f"MEMORY.md line {n}", text, t) for n, text, t in mem]
        others += [(f"{k}, promoted in this run", text, t) for k, text, t in chosen_tokens]
        covered = covered_by(live.text, tokens, others, cfg["dedupe_jaccard"])
        if covered:
            reason = f"already covered by {covered}"
            for k in members:
                pool.set_status(k, "promoted", run.run_id, reason)
            already.append({"key": c.key, "text": live.text, "reason": reason})
            continue
        decision = None
        if not run.dry_run:
            target = ws.relpath(memory_path) if memory_path.exists() else "MEMORY.md"
            payload = WriteCandidate(
                text=live.text,
                target=target,
                source="dreaming",
                key=c.key,
                path=live.path,
                start_line=live.start_line,
                end_line=live.end_line,
                heading=live.heading,
                written_on=live.day,
                run_id=run.run_id,
                score=round(s.score.total, 4),
            )
            decision = ctx.host.decide_write(payload, related_memories(mem, tokens, target))
            if decision.action == "block":
                reason = decision.reason or "blocked by before_message_write"
                for k in members:
                    pool.set_status(k, "blocked", run.run_id, reason)
                blocked.append({"key": c.key, "text": live.text, "reason": reason, "by": decision.source})
                continue
        sources = tuple(
            dict.fromkeys(
                x.citation
                for _, x in sorted(
                    lives, key=lambda kx: (kx[1].day or dt.date.min, kx[1].path, kx[1].start_line)
                )
            )
        )
        chosen.append((replace(s, candidate=c), live, decision, sources))
        merged_how[c.key] = merged_by
        chosen_tokens.append((c.key, live.text, tokens))
    for key, into in getattr(run, "joined", {}).items():
        if not run.dry_run:
            pool.set_status(key, "promoted", run.run_id, f"same fact as {into} (already in MEMORY.md)")
        already.append({"key": key, "text": pool.candidates[key].text, "reason": f"same fact as {into}"})

    items = [
        Item(s.candidate.key, live.text, ",".join(sources), run.now.date().isoformat(), topic_of(live.text))
        for s, live, _, sources in chosen
    ]
    compaction = None
    written_bytes = len(memory_text.encode("utf-8"))
    hashes = written_hashes(ctx.store)
    edits = human_edits(memory_text, hashes)
    if items:
        keep_keys = {i.key for i in items}
        with ws.lock("write", timeout=10.0) if not run.dry_run else contextlib.nullcontext():
            current = memory_path.read_text("utf-8") if memory_path.exists() else ""
            new_text, run.memory_regions = add_items(current, items)
            new_text, compaction = compact(
                new_text,
                cfg["memory_max_bytes"],
                keep=set(),
                keep_keys=keep_keys,
                max_evict_fraction=cfg.get("max_evict_fraction", 0.1),
                written=hashes,
            )
            edits = human_edits(current, hashes)
            if not run.dry_run:
                run.journal.write(memory_path, new_text)
            written_bytes = len(new_text.encode("utf-8"))
        if not run.dry_run:
            for s, _live, decision, _sources in chosen:
                note = f"S={s.score.total:.3f}"
                if decision is not None and decision.action != "allow":
                    note += f"; {decision.action}: {decision.reason}"
                pool.set_status(s.candidate.key, "promoted", run.run_id, note)
                for k in s.members:
                    if k != s.candidate.key:
                        pool.set_status(k, "promoted", run.run_id, f"same fact as {s.candidate.key}")
            for ev in compaction.evicted if compaction else []:
                if ev["key"] in pool.candidates:
                    pool.set_status(ev["key"], "evicted", run.run_id, "compacted out of MEMORY.md")
    run.compaction = compaction
    run.item_hashes = {i.key: item_hash(i.text) for i in items}
    run.human_edits = edits
    promoted = []
    for s, live, decision, sources in chosen:
        entry = {
            **candidate_json(s),
            "text": live.text,
            "source": live.citation,
            "sources": list(sources),
            "members": list(s.members),
            "statement": merged_how.get(s.candidate.key, "member"),
            "section": topic_of(live.text),
        }
        if decision is not None:
            entry["decision"] = {
                "action": decision.action,
                "reason": decision.reason,
                "supersedes": list(decision.supersedes),
                "source": decision.source,
            }
        promoted.append(entry)
    run.promoted = promoted
    near_misses = [
        candidate_json(s) | {"failed_gates": list(s.score.failed_gates)} for s in scored if not s.score.passed
    ][:10]
    return {
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
        "already_present": already,
        "dropped": dropped,
        "blocked": blocked,
        "warnings": [p for p in promoted if p.get("decision", {}).get("action") in ("warn", "supersede")],
        "expired": expired,
        "near_misses": near_misses,
        "compaction": compaction.as_json() if compaction else None,
        "human_edits": edits,
        "memory_file": ws.relpath(memory_path) if memory_path.exists() else "MEMORY.md",
        "memory_bytes": written_bytes,
        "written_at": now_ts,
    }
