"""REM phase: recurring themes over the last week, possible lasting truths, corrections, and
reinforcement fed back into the candidates. With a model configured it may also summarise the
themes (prompts/rem_themes.md.j2); offline the summary is the deterministic tag statistics."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from lifelong import llm
from lifelong.errors import LLMOffline
from lifelong.templates import PromptTemplates

from .candidates import list_dailies
from .themes import Entry, find_corrections, find_themes, topic_terms

PROMPTS = PromptTemplates(Path(__file__).parent / "prompts")


def offline_summary(themes: list[Any]) -> str:
    if not themes:
        return "No theme recurred across days."
    parts = [f"{t.tag} ({t.days} days, {t.entries} entries)" for t in themes[:6]]
    return "Recurring: " + ", ".join(parts) + "."


def _entry_terms(text: str, heading: str) -> frozenset[str]:
    section = heading.split(" > ")[-1] if heading else ""
    return topic_terms(f"{section}. {text}" if section else text)


def rem_phase(ctx: Any, run: Any) -> dict[str, Any]:
    cfg = run.config
    pool, reader = run.pool, run.reader
    today = run.now.date()
    now_ts = run.now.timestamp()
    since = None if run.backfill else today - dt.timedelta(days=cfg["rem_lookback_days"])
    entries: list[Entry] = []
    for rel in list_dailies(ctx.workspace, since, today):
        for s in reader.snippets(rel) or []:
            if s.day is None:
                continue
            key = pool.alias.get(s.key, s.key)
            entries.append(Entry(key, s.day, s.text, _entry_terms(s.text, s.heading)))
    themes = find_themes(
        entries,
        min_days=cfg["theme_min_days"],
        min_entries=cfg["theme_min_entries"],
        limit=cfg["max_themes"],
    )
    theme_tags = {t.tag for t in themes}
    run.themes = themes

    # reinforcement: candidates in the window that carry a recurring theme
    entry_days: dict[str, set[dt.date]] = {}
    entry_themes: dict[str, set[str]] = {}
    for e in entries:
        entry_days.setdefault(e.key, set()).add(e.day)
        entry_themes.setdefault(e.key, set()).update(e.terms & theme_tags)
    recall_days: dict[str, set[str]] = {}
    for sig in pool.new_signals.values():
        recall_days.setdefault(sig.key, set()).add(sig.day)
    reinforced = []
    truths = []
    for key, tags in entry_themes.items():
        c = pool.candidates.get(key)
        if c is None or c.status != "staged" or not tags:
            continue
        if (
            c.rem_last is not None
            and dt.datetime.fromtimestamp(c.rem_last, ctx.workspace.timezone).date() == today
        ):
            continue  # one REM boost per night
        c.rem_hits += 1
        c.rem_last = now_ts
        c.dirty = True
        reinforced.append(key)
        days = {d.isoformat() for d in entry_days[key]} | recall_days.get(key, set())
        if len(days) >= 2:
            truths.append({"key": key, "text": c.text, "themes": sorted(tags), "source": c.citation})

    # corrections: a later note revising an earlier candidate
    known = {
        c.key: Entry(c.key, dt.date.fromisoformat(c.day), c.text, _entry_terms(c.text, c.heading))
        for c in pool.candidates.values()
        if c.status in ("staged", "promoted") and c.day
    }
    corrections = []
    outdated = []
    for corr in find_corrections(entries, known):
        c = pool.candidates[corr.earlier]
        later = pool.candidates.get(corr.later)
        item = {
            "earlier": corr.earlier,
            "earlier_text": c.text,
            "later": corr.later,
            "later_text": later.text if later else "",
            "shared": list(corr.shared),
        }
        if c.status == "staged":
            c.superseded_by = corr.later
            pool.set_status(corr.earlier, "superseded", run.run_id, f"corrected by {corr.later}")
            corrections.append(item)
        elif c.status == "promoted" and c.superseded_by != corr.later:
            c.superseded_by = corr.later
            c.dirty = True
            outdated.append(item)

    summary, summary_source, summary_note = offline_summary(themes), "offline", ""
    if run.model and cfg["use_model"] and themes:
        prompt = PROMPTS.render(
            "rem_themes.md.j2",
            today=today.isoformat(),
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
                summary, summary_source = reply.strip()[:1500], "model"
        except LLMOffline as exc:
            summary_note = f"model unavailable, offline summary used ({exc})"
    run.rem_summary = summary
    return {
        "phase": "rem",
        "lookback_days": None if run.backfill else cfg["rem_lookback_days"],
        "entries": len(entries),
        "themes": [t.as_json() for t in themes],
        "lasting_truths": truths[:50],
        "corrections": corrections,
        "possibly_outdated_in_memory": outdated,
        "reinforced": len(reinforced),
        "summary": summary,
        "summary_source": summary_source,
        "summary_note": summary_note,
    }
