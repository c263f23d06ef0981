"""Light phase: stage snippets from recent dailies and from recall events, attribute each recall
to the snippet its query matched (:mod:`attribution`), de-duplicate near-identical snippets
(:class:`candidates.NearDuplicateIndex`), record reinforcement.

State lives in a :class:`candidates.CandidatePool` loaded from the dreaming tables
(:func:`state.load_pool`); phases change it in memory and the run saves it in one transaction
(a dry run never saves).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lifelong.contracts import PluginContext, RecallEvent, RecallStore
from lifelong.errors import LifelongError
from lifelong.workspace import daily_date

from . import state
from .attribution import EventGroup, apply_credits, corroborate, credits_by_search
from .candidates import CandidatePool, revived
from .dailies import DailyReader, list_dailies
from .facts import fact_cosine
from .linemap import LineMaps, line_hashes


@dataclass
class LightReport:
    dailies: list[str] = field(default_factory=list)
    snippets: int = 0
    new_candidates: int = 0
    merged_near_duplicates: int = 0
    revived: int = 0
    events_read: int = 0
    events_counted: int = 0
    events_attributed: int = 0
    events_unattributed: int = 0
    events_moved: int = 0  # lines that moved between the search and the run (attributed where they are now)
    events_not_daily: int = 0
    credits_dropped_in_search: int = 0
    corroborated: int = 0  # weak lines credited because the search returned another statement of their fact
    signals: int = 0
    reinforced: int = 0
    skipped_marker_lines: int = 0
    skipped_report_junk: int = 0
    skipped_managed_lines: int = 0
    private_dailies: int = 0  # private notes (lifelong.privacy) in the window: never staged
    unreadable: dict[str, str] = field(default_factory=dict)


def read_events(recall: RecallStore | None, after_ts: float, until_ts: float) -> list[RecallEvent]:
    """The searches recall recorded in (after_ts, until_ts] that returned lines of memory/ (none
    without a recall index)."""
    if recall is None:
        return []
    return recall.events(after=after_ts, until=until_ts, path_prefix="memory/")


@dataclass(frozen=True)
class LightResult:
    """What the light phase did: the candidate pool it loaded and changed (in memory, saved by the
    run), the reader of the dailies it parsed, the candidates it touched, the watermark past the
    recall events it read, and its report."""

    pool: CandidatePool
    reader: DailyReader
    touched: frozenset[str]
    event_watermark_next: float
    report: dict[str, Any]


def stage_dailies(
    ctx: PluginContext, run: Any, pool: CandidatePool, reader: DailyReader, report: LightReport
) -> set[str]:
    """Stage the snippets of the dailies in the lookback window (every daily in a backfill);
    private notes are skipped. Returns the candidate keys they resolved to."""
    cfg, today = run.config, run.now.date()
    touched: set[str] = set()
    since = None if run.backfill else today - dt.timedelta(days=cfg["lookback_days"])
    for rel in list_dailies(ctx.workspace, since, today):
        snippets = reader.snippets(rel)
        if snippets is None:
            continue
        if reader.is_private(rel):
            report.private_dailies += 1
            continue
        report.dailies.append(rel)
        for s in snippets:
            touched.add(pool.resolve(s, run.now.timestamp(), run.run_id))
        report.snippets += len(snippets)
    return touched


def locate_events(
    ctx: PluginContext, events: list[RecallEvent], today: dt.date, sources: set[str], report: LightReport
) -> dict[EventGroup, list[RecallEvent]]:
    """The counted recall events (a counted source, on a daily up to today), each moved to where
    its lines are now (lines may have moved since the search: read against the snapshot it
    saw), grouped per (daily, lines, query)."""
    ws, store = ctx.workspace, ctx.store
    groups: dict[EventGroup, list[RecallEvent]] = defaultdict(list)
    counted = []
    for ev in events:
        if ev.source not in sources:
            continue
        day = daily_date(ev.path)
        if day is None or day > today:
            report.events_not_daily += 1
            continue
        report.events_counted += 1
        counted.append(ev)
    paths = {ev.path for ev in counted}
    current: dict[str, list[str]] = {}
    for rel in paths:
        try:
            current[rel] = line_hashes(ws.read_text(rel))
        except (LifelongError, OSError):
            continue
    maps = LineMaps(store, paths, current)
    for ev in counted:
        where = maps.locate(ev.path, ev.start_line, ev.end_line, ev.ts)
        if where is None:
            report.events_unattributed += 1
            continue
        if where != (ev.start_line, ev.end_line):
            ev = ev._replace(start_line=where[0], end_line=where[1])  # where: (start_line, end_line)
        groups[(ev.path, ev.start_line, ev.end_line, ev.query_hash)].append(ev)
    report.events_moved = maps.moved
    return groups


def light_boost(
    pool: CandidatePool, touched: set[str], now: dt.datetime, tz: Any, report: LightReport
) -> None:
    """One light-phase boost per staged candidate touched tonight (a re-run the same night adds
    nothing)."""
    night = now.date().isoformat()
    now_ts = now.timestamp()
    for key in touched:
        c = pool.candidates[key]
        if c.status != "staged":
            continue
        if (
            c.light_last is not None
            and dt.datetime.fromtimestamp(c.light_last, tz).date().isoformat() == night
        ):
            continue  # one light boost per night: a re-run the same night adds nothing
        c.light_hits += 1
        c.light_last = now_ts
        c.dirty = True
        report.reinforced += 1


def light(ctx: PluginContext, run: Any) -> LightResult:
    """Stage the snippets of recent dailies and attribute the recall events since the last run
    (the run's ``event_watermark``) to them: stage, locate the events' lines, credit each
    search's snippets, apply the credits, and give touched candidates their nightly boost."""
    cfg = run.config
    now = run.now
    now_ts = now.timestamp()
    store = ctx.store
    pool = state.load_pool(store, cfg["dedupe_jaccard"])
    reader = DailyReader(ctx, cfg)
    report = LightReport()
    before_revived = revived(pool.status_changes)

    touched = stage_dailies(ctx, run, pool, reader, report)
    watermark = run.event_watermark
    events = read_events(ctx.recall, watermark, now_ts)
    report.events_read = len(events)
    groups = locate_events(ctx, events, now.date(), set(cfg["count_sources"]), report)
    searches, weak = credits_by_search(groups, pool, reader, cfg, report)

    def cosine_of(texts: dict[str, str]) -> Callable[[str, str], float | None] | None:
        return fact_cosine(ctx, cfg, texts)[0]

    for search, credits in corroborate(weak, pool, cosine_of, cfg).items():
        searches[search].extend(credits)
        report.corroborated += len(credits)
    touched |= apply_credits(searches, groups, pool, reader, cfg, now_ts, run.run_id, report)
    report.signals = len(pool.new_signals)
    watermark_next = max([watermark, *(e.ts for e in events)]) if events else watermark
    light_boost(pool, touched, now, ctx.workspace.timezone, report)

    report.new_candidates = sum(1 for c in pool.candidates.values() if c.is_new)
    report.merged_near_duplicates = pool.merged
    report.revived = revived(pool.status_changes) - before_revived
    report.skipped_marker_lines = reader.stats.skipped_marker
    report.skipped_report_junk = reader.stats.skipped_junk
    report.skipped_managed_lines = reader.stats.skipped_managed_lines
    report.unreadable = dict(reader.errors)
    data = {
        "phase": "light",
        "lookback_days": None if run.backfill else cfg["lookback_days"],
        **report.__dict__,
    }
    staged_new = [c for c in pool.candidates.values() if c.is_new][:50]
    data["staged"] = [{"key": c.key, "text": c.text, "source": c.citation} for c in staged_new]
    return LightResult(
        pool, reader, frozenset(touched), watermark_next, json.loads(json.dumps(data, default=str))
    )
