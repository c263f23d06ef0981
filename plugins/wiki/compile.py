"""Compile the wiki (pure planning): source lines → claims with evidence → entity and concept
pages → the text of every page that changes.

1. Subjects: recurring names (entities) and recurring headings / ``#tags`` (concepts), over
   MEMORY.md and the dailies (:mod:`.extract`).
2. Seeds: every MEMORY.md bullet (a promoted item brings the daily lines it cites as evidence,
   plus its own line as the promotion's evidence) and every daily bullet that names a subject.
3. Claims: seeds with the same normalised key are one claim; on each page, near-duplicates
   (content Jaccard ≥ ``corroboration_similarity``) whose values do not conflict
   (:func:`lifelong.facts.compare`) corroborate one claim, so their evidence adds up.
4. Pages: one per subject with claims, claims and evidence in a fixed order; a page on disk
   keeps its title, aliases, extra frontmatter keys and everything outside the generated
   region (the human block). Only pages whose text changes are returned.

A model (``use_model``) may name each seed's subject and restate it as a claim
(:mod:`.model_extract`); evidence always points at the real source lines.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from lifelong import facts
from lifelong.safety import only_about_a_secret, screen, strip_invisible
from lifelong.text import content_tokens, jaccard
from lifelong.workspace import replace_region

from .confidence import ConfidenceRule, confidence, newest_date, parse_day
from .conflicts import contested_ids
from .extract import Subject, SubjectIndex, find_concepts, find_entities
from .sources import SourceLine
from .vault import Claim, Evidence, Page, PageFile, normalise_key, render_page, slug

FALLBACK_SUBJECT = Subject("concept.durable-memory", "concept", "Durable memory")
INDEX_REGION = "wiki-index"
NOT_STATED = "cited line does not state the claim"  # lint reports it; it adds no confidence
INDEX_HEADER = "# Wiki\n\nDurable beliefs, one page per subject, each claim with evidence pointers.\n"


@dataclass(frozen=True)
class CompileConfig:
    rule: ConfidenceRule
    daily_weight: float = 1.0
    memory_weight: float = 1.0
    promotion_weight: float = 0.5
    corroboration_similarity: float = 0.6
    min_mentions: int = 2

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> CompileConfig:
        return cls(
            ConfidenceRule.from_config(cfg),
            float(cfg["daily_weight"]),
            float(cfg["memory_weight"]),
            float(cfg["promotion_weight"]),
            float(cfg["corroboration_similarity"]),
            int(cfg["min_mentions"]),
        )


@dataclass
class Seed:
    text: str
    evidence: dict[tuple[str, int, int], Evidence]
    sticky: bool = False
    from_memory: bool = False
    first_date: str = "9999-99-99"
    subject_hint: str | None = None  # a model's subject name
    struck: bool = False  # a MEMORY.md item struck through: superseded
    contested: bool = False  # a MEMORY.md item REM marked "(contested by …)"


@dataclass
class CompilePlan:
    pages: list[Page]
    writes: dict[str, str]  # workspace path -> new text (changed files only)
    unchanged: list[str] = field(default_factory=list)
    subjects: int = 0
    claims: int = 0
    skipped: list[str] = field(default_factory=list)  # pages left alone (broken frontmatter)
    orphans: list[str] = field(default_factory=list)  # compiled pages whose subject has no claims now


def claim_id(key: str) -> str:
    return "claim." + hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]


def _evidence(line: SourceLine, weight: float, note: str) -> Evidence:
    return Evidence(line.citation, line.path, line.lines, line.sha256, round(weight, 3), note, line.date)


def screened(text: str) -> str | None:
    """The text a claim may carry: invisible characters stripped, secrets redacted; None when it
    reads as an instruction to an agent or says nothing but that there is a secret (the wiki is
    served to agents as trusted memory)."""
    result = screen(strip_invisible(text))
    if only_about_a_secret(text):
        return None  # a line about a key or a password and nothing else is no claim to serve
    return result.text if result.trusted else None


def cited_line(
    item: SourceLine,
    path: str,
    start: int,
    end: int,
    by_location: dict[tuple[str, int, int], SourceLine],
    bullets: list[SourceLine],
) -> SourceLine | None:
    """The daily bullet a MEMORY.md citation points at now. The bullet at (or around) the cited
    lines when it shares a content word with the item (consolidation cites every line stating the
    fact, in other words too); else, when the lines moved, the bullet most like the item
    (content Jaccard >= 0.5); else None (lint then reports the evidence)."""
    want = content_tokens(item.text)
    there = by_location.get((path, start, end)) or next(
        (d for d in bullets if d.start <= start and end <= d.end), None
    )
    if there is not None and want & content_tokens(there.text) and facts.states(there.text, item.text):
        return there
    best, score = None, 0.5
    for d in bullets:
        s = jaccard(want, content_tokens(d.text))
        if s >= score and facts.states(d.text, item.text):
            best, score = d, s
    return best


def build_seeds(
    memory: list[SourceLine],
    dailies: list[SourceLine],
    index: SubjectIndex,
    cfg: CompileConfig,
    hints: dict[str, str] | None = None,
) -> list[Seed]:
    """Seeds in a fixed order: MEMORY.md items first (file order), then daily bullets by date."""
    by_location = {(d.path, d.start, d.end): d for d in dailies}
    by_path: dict[str, list[SourceLine]] = {}
    for d in dailies:
        by_path.setdefault(d.path, []).append(d)
    seeds: list[Seed] = []
    hints = hints or {}
    for item in memory:
        ev: dict[tuple[str, int, int], Evidence] = {}
        for path, start, end in item.cites:
            cited = cited_line(item, path, start, end, by_location, by_path.get(path, []))
            if cited is not None:
                note = f"daily note cited by MEMORY.md item key:{item.key}"
                ev[(cited.path, cited.start, cited.end)] = _evidence(cited, cfg.daily_weight, note)
            else:  # cited lines that are gone or do not state the item: kept, weightless, for lint
                loc = f"{path}#L{start}-L{end}"
                day = path.split("/")[-1][:10]
                there = by_location.get((path, start, end))
                ev[(path, start, end)] = Evidence(
                    loc,
                    path,
                    f"L{start}-L{end}",
                    "",
                    0.0 if there is not None or path in by_path else cfg.daily_weight,
                    NOT_STATED if there is not None else "cited daily lines not found",
                    day if parse_day(day) else None,
                )
        if item.key:
            run = f" by dream run {item.run_id}" if item.run_id else ""
            note = f"promoted into MEMORY.md{run} (key:{item.key})"
            weight = cfg.promotion_weight
        else:
            note = "written in MEMORY.md"
            weight = cfg.memory_weight
        ev[(item.path, item.start, item.end)] = _evidence(item, weight, note)
        dates = sorted(e.date for e in ev.values() if e.date)
        text = screened(item.text)
        if text is None:
            continue
        seeds.append(
            Seed(
                text,
                ev,
                item.sticky,
                True,
                dates[0] if dates else "9999-99-99",
                hints.get(item.citation),
                item.struck,
                item.contested,
            )
        )
    for line in sorted(dailies, key=lambda d: (d.date or "", d.path, d.start)):
        if not line.bullet:  # a paragraph line is read as evidence, not made a claim of its own
            continue
        hint = hints.get(line.citation)
        if hint is None and not index.mentions(line.text):
            continue
        text = screened(line.text)
        if text is None:
            continue
        ev = {(line.path, line.start, line.end): _evidence(line, cfg.daily_weight, "daily note")}
        seeds.append(Seed(text, ev, False, False, line.date or "9999-99-99", hint))
    return seeds


@dataclass
class Cluster:
    text: str
    key: str
    tokens: frozenset[str]
    day: str
    evidence: dict[tuple[str, int, int], Evidence]
    sticky: bool
    from_memory: bool
    _statement: facts.Statement | None = None
    # its MEMORY.md items: some struck through (superseded), some marked contested, some neither
    # (the fact still holds)
    struck: bool = False
    live_item: bool = False
    contested_item: bool = False
    settled_item: bool = False

    @property
    def superseded(self) -> bool:
        """Every MEMORY.md item of it is struck through: a later note replaced it (the daily lines
        it cites are its history, not a claim that it holds)."""
        return self.struck and not self.live_item

    @property
    def contested(self) -> bool:
        """Every MEMORY.md item of it that is not struck is marked contested: a later note may
        have changed it (REM could not tell surely)."""
        return self.contested_item and not self.settled_item

    @property
    def statement(self) -> facts.Statement:
        if self._statement is None:
            self._statement = _statement(self.text, self.day)
        return self._statement


def _statement(text: str, day: str | None) -> facts.Statement:
    when = parse_day(day)
    return facts.extract(text, now=dt.datetime(when.year, when.month, when.day) if when else None)


def cluster_seeds(seeds: list[Seed], threshold: float) -> list[Cluster]:
    """Same key: one claim. Near-duplicates that do not conflict: one claim (first text wins)."""
    clusters: list[Cluster] = []
    by_key: dict[str, Cluster] = {}
    by_token: dict[str, list[Cluster]] = {}
    for seed in seeds:
        key = normalise_key(seed.text)
        if not key:
            continue
        target = by_key.get(key)
        toks = content_tokens(seed.text)
        statement = None
        if target is None and toks:
            seen: set[int] = set()
            for t in sorted(toks):
                for c in by_token.get(t, ()):
                    if id(c) in seen:
                        continue
                    seen.add(id(c))
                    if jaccard(toks, c.tokens) < threshold:
                        continue
                    statement = statement or _statement(seed.text, seed.first_date)
                    if not facts.compare(statement, c.statement).conflicts:
                        target = c
                        break
                if target is not None:
                    break
        if target is None:
            target = Cluster(
                seed.text, key, toks, seed.first_date, {}, seed.sticky, seed.from_memory, statement
            )
            clusters.append(target)
            for t in toks:
                by_token.setdefault(t, []).append(target)
        by_key.setdefault(key, target)
        for loc, ev in seed.evidence.items():
            target.evidence.setdefault(loc, ev)
        target.sticky = target.sticky or seed.sticky
        if seed.from_memory:
            target.struck = target.struck or seed.struck
            target.live_item = target.live_item or not seed.struck
            target.contested_item = target.contested_item or seed.contested
            target.settled_item = target.settled_item or not (seed.struck or seed.contested)
    return clusters


def make_claim(cluster: Cluster, rule: ConfidenceRule) -> Claim:
    evidence = tuple(sorted(cluster.evidence.values(), key=lambda e: (e.path, e.start, e.end)))
    newest = newest_date(evidence)
    days = sorted(d for d in (parse_day(e.date) for e in evidence) if d is not None)
    return Claim(
        id=claim_id(cluster.key),
        key=cluster.key,
        text=cluster.text,
        status=status_of(cluster),
        confidence=confidence(evidence, newest or dt.date(1970, 1, 1), rule),
        evidence=evidence,
        updated_at=newest.isoformat() if newest else None,
        valid_from=days[0].isoformat() if days else None,
    )


def status_of(cluster: Cluster) -> str:
    if cluster.sticky:
        return "rule"
    return "superseded" if cluster.superseded else "contested" if cluster.contested else "active"


def subjects_of(memory: list[SourceLine], dailies: list[SourceLine], min_mentions: int) -> list[Subject]:
    texts = [s.text for s in (*memory, *dailies)]
    entities = find_entities(texts, min_mentions)
    concepts = find_concepts(((d.path, d.heading) for d in dailies if d.heading), texts, min_mentions)
    taken = {s.id for s in entities}
    return [*entities, *(c for c in concepts if c.id not in taken)]


def plan_compile(
    memory: list[SourceLine],
    dailies: list[SourceLine],
    existing: dict[str, PageFile],
    existing_text: dict[str, str],
    cfg: CompileConfig,
    *,
    hints: dict[str, str] | None = None,
    index_text: str | None = None,
) -> CompilePlan:
    """Pure: the pages the sources give and the text of each file that changes."""
    subjects = subjects_of(memory, dailies, cfg.min_mentions)
    hints = hints or {}
    for name in sorted(set(hints.values())):
        sid = f"entity.{slug(name)}"
        if not any(s.id == sid for s in subjects):
            subjects.append(Subject(sid, "entity", name))
    index = SubjectIndex(subjects)
    by_id = {s.id: s for s in subjects}
    seeds = build_seeds(memory, dailies, index, cfg, hints)
    homed: dict[str, list[Seed]] = {}
    for seed in seeds:
        home = by_id.get(f"entity.{slug(seed.subject_hint)}") if seed.subject_hint else None
        home = home or index.home_of(seed.text) or (FALLBACK_SUBJECT if seed.from_memory else None)
        if home is None:
            continue
        by_id.setdefault(home.id, home)
        homed.setdefault(home.id, []).append(seed)
    claims_by_page: dict[str, list[Claim]] = {}
    for pid, page_seeds in homed.items():
        clusters = cluster_seeds(page_seeds, cfg.corroboration_similarity)
        claims_by_page[pid] = sorted((make_claim(c, cfg.rule) for c in clusters), key=lambda c: (c.key, c.id))
    # a claim below the threshold that disagrees with another is contested, not stated as current
    disputed = contested_ids(
        [(pid, c) for pid, cs in claims_by_page.items() for c in cs], cfg.rule.active_threshold
    )
    if disputed:
        claims_by_page = {
            pid: [replace(c, status="contested") if c.id in disputed else c for c in cs]
            for pid, cs in claims_by_page.items()
        }
    mentions: dict[str, list[tuple[str, str]]] = {}
    related: dict[str, set[str]] = {}
    for pid, claims in claims_by_page.items():
        for claim in claims:
            for _, s in index.mentions(claim.text):
                if s.id != pid and s.id in claims_by_page:
                    mentions.setdefault(s.id, []).append((claim.id, claim.text))
                    related.setdefault(pid, set()).add(s.id)
                    related.setdefault(s.id, set()).add(pid)
    pages: list[Page] = []
    writes: dict[str, str] = {}
    unchanged: list[str] = []
    skipped: list[str] = []
    for pid in sorted(claims_by_page):
        subject = by_id[pid]
        claims = tuple(claims_by_page[pid])
        page = Page(
            id=pid,
            page_type=subject.page_type,
            title=subject.title,
            aliases=subject.aliases,
            claims=claims,
            source_ids=tuple(sorted({e.source_id for c in claims for e in c.evidence})),
            updated_at=max((c.updated_at for c in claims if c.updated_at), default=None),
            related=tuple(sorted(related.get(pid, ()))),
            mentions=tuple(sorted(set(mentions.get(pid, [])))),
        )
        old = existing.get(page.path)
        if old is not None and old.error is not None:  # a page a human broke is never overwritten
            skipped.append(f"{page.path}: {old.error} (not regenerated until fixed)")
            continue
        if old is not None:
            keep = {k: v for k, v in old.front.items() if k not in _OWNED}
            aliases = tuple(sorted({*page.aliases, *old.aliases} - {old.title or page.title}))
            page = replace(page, title=old.title or page.title, aliases=aliases, extra=keep)
        text = render_page(page, cfg.rule.active_threshold, old.body if old is not None else None)
        pages.append(page)
        if existing_text.get(page.path) == text:
            unchanged.append(page.path)
        else:
            writes[page.path] = text
    index_body = render_index(pages)
    new_index = replace_region(
        index_text if index_text is not None else INDEX_HEADER, INDEX_REGION, index_body
    )
    if new_index != index_text:
        writes["wiki/index.md"] = new_index
    produced = {p.path for p in pages}
    orphans = sorted(
        path
        for path, f in existing.items()
        if path not in produced and f.error is None and f.front.get("page_type") in ("entity", "concept")
    )
    return CompilePlan(
        pages, writes, unchanged, len(claims_by_page), sum(len(p.claims) for p in pages), skipped, orphans
    )


_OWNED = frozenset({"id", "page_type", "title", "aliases", "source_ids", "updated_at", "claims"})


def render_index(pages: list[Page]) -> str:
    lines = ["## Pages (generated)", ""]
    for ptype, label in (("entity", "Entities"), ("concept", "Concepts")):
        group = [p for p in pages if p.page_type == ptype]
        if not group:
            continue
        lines += [f"### {label}", ""]
        lines += [f"- [[{p.id}]] {p.title} — {len(p.claims)} claim(s)" for p in group]
        lines.append("")
    lines += [
        "Reports: `wiki/reports/lint.md`, `wiki/reports/contradictions.md`, "
        "`wiki/reports/open-questions.md`, `wiki/reports/low-confidence.md`, `wiki/reports/stale-pages.md`."
    ]
    return "\n".join(lines) + "\n"
