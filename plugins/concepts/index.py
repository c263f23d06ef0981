"""The concept index: which chunks name which concept, kept beside the recall index in SQLite.

Occurrences (term -> chunk, with the chunk's day) are extracted from recall's ``chunks`` table (read
only: its public columns id, path, corpus, start_line, end_line, heading, text, source_date,
evergreen, validity_start, validity_end, superseded_by) — incrementally for the files a sync
changed, or all at once by :meth:`ConceptIndex.rebuild`. The *vocabulary* is the terms seen on at
least ``min_days`` distinct days, every heading term, and the names and aliases of wiki pages; each
concept row keeps its frequency, days, document frequency, last day seen and importance.

A query is answered here when the concepts it names carry it: ``confidence = coverage ×
specificity``, where coverage is the share of the query's content words that recognised concepts
cover and specificity the mean normalised IDF of those concepts (a name on every page says
little). At ``confidence_threshold`` or above, the chunks naming the concepts are returned (ranked
by how often they name them, weighted by IDF, then decayed by age as recall does), validity- and
corpus-filtered; below it, or when a concept is too common to be a shortcut, the hybrid search
runs. Each lookup is a few primary-key probes.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from lifelong.contracts import Candidate, SearchRequest
from lifelong.errors import LifelongError
from lifelong.host import Context
from lifelong.text import content_words
from lifelong.workspace import split_frontmatter

from .extract import concept_terms, importance, name_phrases, normalise_concept, script_of, should_prune

PLUGIN = "concepts"
KIND_RANK = {"term": 0, "name": 1, "heading": 2, "wiki": 3}


@dataclass(frozen=True)
class Occurrence:
    key: str
    count: int
    display: str
    script: str
    kind: str


def chunk_occurrences(text: str, heading: str) -> list[Occurrence]:
    """The concept terms of one chunk with how often it names each (pure)."""
    found: dict[str, Occurrence] = {}

    def add(key: str, display: str, script: str, kind: str, weight: int) -> None:
        prev = found.get(key)
        if prev is None:
            found[key] = Occurrence(key, weight, display, script, kind)
        else:
            better = kind if KIND_RANK[kind] > KIND_RANK[prev.kind] else prev.kind
            found[key] = Occurrence(key, prev.count + weight, prev.display, prev.script, better)

    section = heading.split(" > ")[-1] if heading else ""
    for term in concept_terms(section) + name_phrases(section):
        add(term.key, term.display, term.script, "heading", 2)
    section_key = normalise_concept(section)
    if 2 <= len(section_key.split()) <= 4 and all(w[:1].isupper() for w in section.split()):
        add(section_key, section, script_of(section), "heading", 2)  # a Title Case heading names something
    folded = text.casefold()
    for term in name_phrases(text):
        add(term.key, term.display, term.script, "name", max(1, folded.count(term.display.casefold())))
    for term in concept_terms(text):
        add(term.key, term.display, term.script, "term", max(1, folded.count(term.display.casefold())))
    return list(found.values())


def query_keys(query: str) -> dict[str, set[str]]:
    """Keys a query may name, each with the content words it covers: single terms, capitalised
    names, and adjacent term pairs (so "Gut Boltenhagen" matches written in lower case too)."""
    keys: dict[str, set[str]] = {}
    terms = concept_terms(query)
    for t in terms:
        keys.setdefault(t.key, set()).add(t.key)
    for t in name_phrases(query):
        keys.setdefault(t.key, set()).update(t.key.split())
    for a, b in zip(terms, terms[1:], strict=False):
        keys.setdefault(f"{a.key} {b.key}", set()).update((a.key, b.key))
    return keys


def decay(age_days: float | None, half_life: float, floor: float) -> float:
    if age_days is None or half_life <= 0:
        return 1.0
    return floor + (1.0 - floor) * 2.0 ** (-max(0.0, age_days) / half_life)


@dataclass
class Lookup:
    """What a lookup found: the recognised concepts, the confidence, and (when answered) the
    candidates. ``reason`` says why it fell through."""

    concepts: list[str] = field(default_factory=list)
    confidence: float = 0.0
    candidates: list[Candidate] = field(default_factory=list)
    reason: str = ""

    @property
    def answered(self) -> bool:
        return bool(self.candidates)


def validity_predicate(request: SearchRequest, now: dt.datetime) -> tuple[str, list[object]]:
    at = (request.as_of or now).timestamp() if request.mode == "valid-at" else now.timestamp()
    if request.mode == "current":
        where, params = "(c.validity_end IS NULL OR c.validity_end > ?)", [at]
    elif request.mode == "valid-at":
        where = "(c.validity_start IS NULL OR c.validity_start <= ?) AND (c.validity_end IS NULL OR c.validity_end > ?)"
        params = [at, at]
    else:
        where, params = "1", []
    if request.corpus != "all":
        where += " AND c.corpus = ?"
        params.append(request.corpus)
    return where, params


class ConceptIndex:
    def __init__(self, ctx: Context, config: dict[str, object]):
        self.ctx = ctx
        self.config = config
        self.conn = ctx.store.conn

    # building ---------------------------------------------------------------------------------
    def _chunks(self, paths: list[str] | None) -> list[tuple[int, str, str, str, float | None]]:
        """Chunks to extract from (the suite's own generated sections are left out: their
        headings are the suite's, not the user's concepts)."""
        sql = "SELECT id, path, heading, text, source_date FROM chunks WHERE generated = 0"
        if paths is None:
            return self.conn.execute(sql).fetchall()
        return self.conn.execute(
            sql + " AND path IN (SELECT value FROM json_each(?))", [json.dumps(paths)]
        ).fetchall()

    def _day(self, source_date: float | None) -> str:
        tz = self.ctx.workspace.timezone
        when = dt.datetime.fromtimestamp(source_date, tz) if source_date else self.ctx.now()
        return when.date().isoformat()

    def update(self, paths: Iterable[str]) -> int:
        """Re-extract the occurrences of ``paths`` (changed, new or deleted files) and refresh the
        concepts they touch. Returns the number of concepts refreshed."""
        paths = sorted(set(paths))
        if not paths:
            return 0
        with self.ctx.store.lock:
            touched = {
                r[0]
                for r in self.conn.execute(
                    "SELECT DISTINCT key FROM concept_occurrences WHERE path IN (SELECT value FROM json_each(?))",
                    [json.dumps(paths)],
                )
            }
            self.conn.execute(
                "DELETE FROM concept_occurrences WHERE path IN (SELECT value FROM json_each(?))",
                [json.dumps(paths)],
            )
            touched |= self._insert(self._chunks(paths))
            self._refresh(touched)
            self.conn.commit()
        return len(touched)

    def _insert(self, chunks: list[tuple[int, str, str, str, float | None]]) -> set[str]:
        rows = []
        for chunk_id, path, heading, text, source_date in chunks:
            day = self._day(source_date)
            for occ in chunk_occurrences(text, heading or ""):
                rows.append((occ.key, chunk_id, path, day, occ.count, occ.display, occ.script, occ.kind))
        self.conn.executemany(
            "INSERT OR REPLACE INTO concept_occurrences(key, chunk_id, path, day, count, display, script, kind)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return {r[0] for r in rows}

    def _wiki_names(self) -> dict[str, tuple[str, list[str]]]:
        """key -> (title, aliases) of every wiki page that has a title in its frontmatter."""
        out: dict[str, tuple[str, list[str]]] = {}
        wiki = self.ctx.workspace.wiki_dir
        for path in sorted(wiki.rglob("*.md")) if wiki.is_dir() else []:
            if "reports" in path.relative_to(wiki).parts:
                continue
            try:
                front, _, _ = split_frontmatter(path.read_text("utf-8"))
            except (OSError, UnicodeDecodeError, LifelongError):  # a page a human broke is skipped
                continue
            title = str(front.get("title") or "").strip()
            if title:
                aliases = [str(a) for a in front.get("aliases") or [] if str(a).strip()]
                out[normalise_concept(title)] = (title, aliases)
        return out

    def _refresh(self, keys: set[str], wiki: dict[str, tuple[str, list[str]]] | None = None) -> None:
        """Recompute the concept rows of ``keys`` from their occurrences (pure aggregation in SQL)."""
        if not keys:
            return
        min_days = int(self.config["min_days"])
        total = self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        rows = self.conn.execute(
            "SELECT key, min(display), min(script), max(CASE kind WHEN 'heading' THEN 2 WHEN 'name' THEN 1 ELSE 0 END),"
            " sum(count), count(DISTINCT day), count(*), max(day) FROM concept_occurrences"
            " WHERE key IN (SELECT value FROM json_each(?)) GROUP BY key",
            [json.dumps(sorted(keys))],
        ).fetchall()
        max_freq = max(
            [r[4] for r in rows]
            + [self.conn.execute("SELECT coalesce(max(frequency), 1) FROM concepts").fetchone()[0]]
        )
        today = self.ctx.now().date()
        wiki = wiki if wiki is not None else {}
        self.conn.execute(
            "DELETE FROM concepts WHERE key IN (SELECT value FROM json_each(?))", [json.dumps(sorted(keys))]
        )
        admitted = []
        for key, display, script, kind_rank, freq, days, doc_freq, last in rows:
            kind = (
                "wiki"
                if key in wiki
                else ("heading" if kind_rank == 2 else ("name" if kind_rank == 1 else "term"))
            )
            if days < min_days and kind not in ("heading", "wiki"):
                continue
            since = (today - dt.date.fromisoformat(last)).days
            value = importance(
                frequency=freq,
                max_frequency=max_freq,
                days_since_seen=since,
                doc_freq=doc_freq,
                total_docs=total,
            )
            if should_prune(since, value):
                continue
            admitted.append(
                (
                    key,
                    wiki[key][0] if key in wiki else display,
                    script,
                    kind,
                    freq,
                    days,
                    doc_freq,
                    last,
                    value,
                )
            )
        seen = {a[0] for a in admitted}
        for key in sorted(set(wiki) - seen):  # a wiki page names a concept even before notes do
            admitted.append(
                (key, wiki[key][0], script_of(wiki[key][0]), "wiki", 0, 0, 0, today.isoformat(), 0.4)
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO concepts(key, display, script, kind, frequency, days, doc_freq, last_seen, importance)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            admitted,
        )

    def rebuild(self) -> dict[str, int]:
        """Everything from scratch: occurrences of every chunk, the vocabulary with fresh importance
        (pruning what is unseen for 90 days and unimportant), wiki names and aliases."""
        with self.ctx.store.lock:
            self.conn.execute("DELETE FROM concept_occurrences")
            self.conn.execute("DELETE FROM concepts")
            self.conn.execute("DELETE FROM concept_aliases")
            keys = self._insert(self._chunks(None))
            wiki = self._wiki_names()
            self._refresh(keys | set(wiki), wiki)
            aliases = [
                (normalise_concept(alias), key)
                for key, (_, names) in wiki.items()
                for alias in names
                if normalise_concept(alias) != key
            ]
            self.conn.executemany("INSERT OR REPLACE INTO concept_aliases(alias, key) VALUES (?, ?)", aliases)
            self.conn.commit()
            concepts = self.conn.execute("SELECT count(*) FROM concepts").fetchone()[0]
            occurrences = self.conn.execute("SELECT count(*) FROM concept_occurrences").fetchone()[0]
        return {"concepts": concepts, "occurrences": occurrences, "aliases": len(aliases)}

    # looking up -------------------------------------------------------------------------------
    def lookup(self, request: SearchRequest) -> Lookup:
        candidates_keys = query_keys(request.query)
        if not candidates_keys:
            return Lookup(reason="the query names no concept term")
        probe = sorted(candidates_keys)
        found = {
            r[0]: r
            for r in self.conn.execute(
                "SELECT key, display, doc_freq FROM concepts WHERE key IN (SELECT value FROM json_each(?))",
                [json.dumps(probe)],
            )
        }
        for alias, key in self.conn.execute(
            "SELECT alias, key FROM concept_aliases WHERE alias IN (SELECT value FROM json_each(?))",
            [json.dumps(probe)],
        ):
            row = self.conn.execute(
                "SELECT key, display, doc_freq FROM concepts WHERE key = ?", (key,)
            ).fetchone()
            if row:
                found[alias] = row
        if not found:
            return Lookup(reason="no known concept in the query")
        content = {normalise_concept(w) for w in content_words(request.query)}
        covered = set().union(*(candidates_keys[k] for k in found)) & content if content else set()
        coverage = len(covered) / len(content) if content else 0.0
        total = max(2, self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        concepts = {row[0]: row for row in found.values()}
        idf = {key: math.log(total / max(1, row[2])) / math.log(total) for key, row in concepts.items()}
        specificity = sum(idf.values()) / len(idf)
        confidence = coverage * specificity
        names = sorted(row[1] for row in concepts.values())
        if confidence < float(self.config["confidence_threshold"]):
            return Lookup(names, confidence, reason=f"confidence {confidence:.2f} below the threshold")
        if max(row[2] for row in concepts.values()) > int(self.config["max_doc_freq"]):
            return Lookup(names, confidence, reason="a concept is too common to answer from the index")
        return Lookup(names, confidence, self._candidates(request, idf), "")

    def _candidates(self, request: SearchRequest, idf: dict[str, float]) -> list[Candidate]:
        now = self.ctx.now()
        where, params = validity_predicate(request, now)
        weights = {k: max(v, 0.01) for k, v in idf.items()}
        rows = self.conn.execute(
            "WITH w(key, idf) AS (SELECT key, value FROM json_each(?)), hits AS ("
            " SELECT o.chunk_id, sum(o.count * w.idf) AS weight, count(*) AS named FROM concept_occurrences o"
            " JOIN w ON w.key = o.key GROUP BY o.chunk_id ORDER BY named DESC, weight DESC LIMIT ?)"
            " SELECT c.id, c.path, c.corpus, c.start_line, c.end_line, c.heading, c.text, c.source_date, c.evergreen,"
            f" c.generated, c.validity_end, c.superseded_by, hits.weight, hits.named FROM hits JOIN chunks c ON c.id = hits.chunk_id WHERE {where}",
            [json.dumps(weights), int(self.config["pool"]), *params],
        ).fetchall()
        if not rows:
            return []
        recall = self.ctx.config("recall") if self.ctx.host.enabled("recall") else {}
        half_life = float(recall.get("half_life_days", 30))
        floor = float(recall.get("decay_floor", 0.5))
        top = max(r[12] * r[13] for r in rows)
        out = []
        for r in rows:
            age = None if r[8] or r[7] is None else (now.timestamp() - r[7]) / 86400.0
            factor = decay(age, half_life, floor)
            relevance = (r[12] * r[13]) / top
            out.append(
                Candidate(
                    chunk_id=r[0],
                    path=r[1],
                    corpus=r[2],
                    start_line=r[3],
                    end_line=r[4],
                    heading=r[5],
                    text=r[6],
                    source_date=r[7],
                    evergreen=bool(r[8]),
                    generated=bool(r[9]),
                    validity_end=r[10],
                    superseded_by=r[11],
                    hybrid=relevance,
                    decay=factor,
                    score=relevance * factor,
                    extra={"answered_by": PLUGIN},
                )
            )
        out.sort(key=lambda c: (-c.score, c.path, c.start_line))
        return out[: request.max_results]


def affected_paths(changes: object) -> list[str]:
    out: list[str] = []
    for name in ("new", "modified", "deleted"):
        out.extend(getattr(changes, name, ()) or ())
    return out
