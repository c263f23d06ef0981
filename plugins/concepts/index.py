"""The concept index: which chunks name which concept, kept beside the recall index in SQLite.

Occurrences (term -> chunk, with the chunk's day) are extracted from recall's chunks, read through
``ctx.recall`` (:class:`lifelong.contracts.RecallStore`, never recall's tables) — incrementally for
the files a sync changed, or all at once by :meth:`ConceptIndex.rebuild`. The *vocabulary* is the terms seen on at
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
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lifelong.contracts import Candidate, ChunkFilter, SearchRequest
from lifelong.errors import LifelongError
from lifelong.host import Context
from lifelong.text import content_words, fold, stem
from lifelong.workspace import split_frontmatter

from .extract import (
    Term,
    compact_key,
    concept_terms,
    exact_forms,
    identifies,
    importance,
    keys_named,
    name_phrases,
    normalise_concept,
    normalised_idf,
    script_of,
    should_prune,
)

PLUGIN = "concepts"
KIND_RANK = {"term": 0, "name": 1, "heading": 2, "wiki": 3}
ANSWER_HEAD = 5  # the lines an answer must hold the query's words in (recall@5 is what a caller reads)


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


_FENCE = re.compile(r"<!-- lifelong:[\w.:-]+?:(start|end) -->")
_TITLE = re.compile(r"^#\s")


def users_part(text: str, heading: str, *, suite_file: bool = False) -> tuple[str, str]:
    """The text and heading of a chunk that the user wrote (pure): lines inside the suite's managed
    regions (``<!-- lifelong:NAME:start/end -->``) left out, and the heading too when the chunk's
    first line is inside one (a chunk wholly inside one is ``generated`` and never read here, so
    the first fence a chunk holds tells whether it began inside one). In one of the suite's own
    files (``suite_file``: MEMORY.md, the wiki's index) the title is the file's name, no concept:
    its ``# Title`` line and a heading that is only the title are left out too."""
    lines = text.split("\n")
    fences = [m.group(1) for m in map(_FENCE.search, lines) if m]
    if fences:
        inside = fences[0] == "end"
        head_inside: bool | None = None
        kept = []
        for line in lines:
            m = _FENCE.search(line)
            if m:
                inside = m.group(1) == "start"
                continue
            if head_inside is None:
                head_inside = inside
            if not inside:
                kept.append(line)
        lines = kept
        if head_inside:
            heading = ""
    if suite_file:
        lines = [line for line in lines if not _TITLE.match(line)]
        heading = heading if " > " in heading else ""
    return "\n".join(lines), heading


def query_keys(query: str, terms: list[Term] | None = None) -> dict[str, set[str]]:
    """Keys a query may name, each with the content words it covers: single terms, capitalised
    names, and adjacent term pairs (so "Gut Boltenhagen" matches written in lower case too)."""
    keys: dict[str, set[str]] = {}
    terms = concept_terms(query) if terms is None else terms
    for t in terms:
        keys.setdefault(t.key, set()).add(t.key)
    for t in name_phrases(query):
        keys.setdefault(t.key, set()).update(t.key.split())
    for a, b in zip(terms, terms[1:], strict=False):
        keys.setdefault(f"{a.key} {b.key}", set()).update((a.key, b.key))
    return keys


def held_share(query: str, lines: list[Candidate]) -> float:
    """The share of the query's content words that ``lines`` hold, each as written or as its
    stem (``happy`` is held by "happiness"), by substring on the folded text: no tokenising of
    the lines, so the check costs microseconds on the hit path."""
    wanted = {(w, stem(w)) for w in content_words(query)}
    if not wanted:
        return 1.0
    text = fold("\n".join(f"{c.heading}\n{c.text}" for c in lines))
    return sum(1 for w, s in wanted if w in text or s in text) / len(wanted)


@dataclass
class Lookup:
    """What a lookup found: the recognised concepts, the confidence, and (when answered) the
    candidates. ``reason`` says why it fell through."""

    concepts: list[str] = field(default_factory=list)
    confidence: float = 0.0
    candidates: list[Candidate] = field(default_factory=list)
    reason: str = ""
    detail: dict[str, object] = field(default_factory=dict)

    @property
    def answered(self) -> bool:
        return bool(self.candidates)


class ConceptIndex:
    def __init__(self, ctx: Context, config: dict[str, object]):
        self.ctx = ctx
        self.config = config
        self.conn = ctx.store.conn

    # building ---------------------------------------------------------------------------------
    def _chunks(self, paths: list[str] | None) -> list[tuple[int, str, str, str, float | None]]:
        """Chunks to extract from (the suite's own generated sections are left out: their
        headings are the suite's, not the user's concepts; :func:`users_part` does the same for
        the part of a chunk inside one). None without a recall index."""
        recall = self.ctx.recall
        if recall is None:
            return []
        return [
            (c.id, c.path, c.heading, c.text, c.source_date)
            for c in recall.chunks(paths=paths, include_generated=False)
        ]

    def _day(self, source_date: float | None) -> int:
        tz = self.ctx.workspace.timezone
        when = dt.datetime.fromtimestamp(source_date, tz) if source_date else self.ctx.now()
        return when.date().toordinal()

    def built(self) -> bool:
        return self.conn.execute("SELECT 1 FROM concept_meta WHERE name = 'built'").fetchone() is not None

    def update(self, paths: Iterable[str]) -> int:
        """Re-extract the occurrences of ``paths`` (changed, new or deleted files) and refresh the
        concepts they touch (the first time, everything is extracted). Returns the number of
        concepts refreshed."""
        paths = sorted(set(paths))
        if not self.built():
            return self.rebuild()["concepts"]
        if not paths:
            return 0
        with self.ctx.store.lock:
            old = self.conn.execute(
                "SELECT chunk_id, keys FROM concept_chunks WHERE path IN (SELECT value FROM json_each(?))",
                [json.dumps(paths)],
            ).fetchall()
            touched: set[str] = set()
            pairs = []
            for chunk_id, keys in old:
                for key in json.loads(keys):
                    touched.add(key)
                    pairs.append((key, chunk_id))
            self.conn.executemany("DELETE FROM concept_occurrences WHERE key = ? AND chunk_id = ?", pairs)
            self.conn.executemany("DELETE FROM concept_chunks WHERE chunk_id = ?", [(r[0],) for r in old])
            touched |= self._insert(self._chunks(paths))
            self._count_chunks()
            self._refresh(touched)
            self.conn.commit()
        return len(touched)

    def _suite_files(self) -> set[str]:
        """The suite's own files, whose titles are their names: MEMORY.md and the wiki's index."""
        ws = self.ctx.workspace
        return {ws.relpath(ws.memory_file), ws.relpath(ws.wiki_dir / "index.md")}

    def _insert(self, chunks: list[tuple[int, str, str, str, float | None]]) -> set[str]:
        rows, forms, per_chunk = [], {}, []
        suite_files = self._suite_files()
        for chunk_id, path, heading, text, source_date in chunks:
            day = self._day(source_date)
            keys = []
            text, heading = users_part(text, heading or "", suite_file=path in suite_files)
            for occ in chunk_occurrences(text, heading):
                rows.append((occ.key, chunk_id, day, occ.count))
                keys.append(occ.key)
                kind = KIND_RANK[occ.kind]
                prev = forms.get(occ.key)
                if prev is None or kind > prev[3]:
                    forms[occ.key] = (occ.key, prev[1] if prev else occ.display, occ.script, kind)
            per_chunk.append((chunk_id, path, json.dumps(keys, ensure_ascii=False)))
        self.conn.executemany(
            "INSERT OR REPLACE INTO concept_occurrences(key, chunk_id, day, count) VALUES (?, ?, ?, ?)", rows
        )
        self.conn.executemany(
            "INSERT OR REPLACE INTO concept_chunks(chunk_id, path, keys) VALUES (?, ?, ?)", per_chunk
        )
        self.conn.executemany(
            "INSERT INTO concept_forms(key, display, script, kind) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(key) DO UPDATE SET kind = max(kind, excluded.kind)",
            list(forms.values()),
        )
        return set(forms)

    def _count_chunks(self) -> int:
        """Keep the corpus size the IDF needs in concept_meta (a lookup never counts 1M rows)."""
        total = self.ctx.recall.chunk_count() if self.ctx.recall is not None else 0
        self.conn.execute(
            "INSERT OR REPLACE INTO concept_meta(name, value) VALUES ('chunk_count', ?)", [str(total)]
        )
        return total

    def _total_chunks(self) -> int:
        row = self.conn.execute("SELECT value FROM concept_meta WHERE name = 'chunk_count'").fetchone()
        return int(row[0]) if row else self._count_chunks()

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

    def _refresh(self, keys: set[str] | None, wiki: dict[str, tuple[str, list[str]]] | None = None) -> None:
        """Recompute the concept rows of ``keys`` (None: every concept) from their occurrences
        (aggregation in SQL; the occurrences table is ordered by key, so it streams)."""
        if keys is not None and not keys:
            return
        min_days = int(self.config["min_days"])
        total = self._total_chunks()
        select = (
            "SELECT o.key, f.display, f.script, f.kind, sum(o.count), count(DISTINCT o.day), count(*), max(o.day)"
            " FROM concept_occurrences o JOIN concept_forms f ON f.key = o.key"
        )
        if keys is None:
            rows = self.conn.execute(select + " GROUP BY o.key").fetchall()
            self.conn.execute("DELETE FROM concepts")
        else:
            chosen = json.dumps(sorted(keys), ensure_ascii=False)
            rows = self.conn.execute(
                select + " WHERE o.key IN (SELECT value FROM json_each(?)) GROUP BY o.key", [chosen]
            ).fetchall()
            self.conn.execute("DELETE FROM concepts WHERE key IN (SELECT value FROM json_each(?))", [chosen])
        stored_max = self.conn.execute("SELECT coalesce(max(frequency), 1) FROM concepts").fetchone()[0]
        max_freq = max([r[4] for r in rows] + [stored_max])
        today = self.ctx.now().date()
        wiki = wiki if wiki is not None else {}
        kinds = {rank: name for name, rank in KIND_RANK.items()}
        admitted = []
        for key, display, script, kind_rank, freq, days, doc_freq, last in rows:
            kind = "wiki" if key in wiki else kinds[min(kind_rank, 2)]
            if days < min_days and kind not in ("heading", "wiki"):
                continue
            last_day = dt.date.fromordinal(last)
            since = (today - last_day).days
            value = importance(
                frequency=freq,
                max_frequency=max_freq,
                days_since_seen=since,
                doc_freq=doc_freq,
                total_docs=total,
            )
            if should_prune(since, value):
                continue
            title = wiki[key][0] if key in wiki else display
            admitted.append(
                (
                    key,
                    title,
                    script,
                    kind,
                    freq,
                    days,
                    doc_freq,
                    last_day.isoformat(),
                    value,
                    compact_key(key),
                )
            )
        seen = {a[0] for a in admitted}
        for key in sorted(set(wiki) - seen):  # a wiki page names a concept even before notes do
            admitted.append(
                (
                    key,
                    wiki[key][0],
                    script_of(wiki[key][0]),
                    "wiki",
                    0,
                    0,
                    0,
                    today.isoformat(),
                    0.4,
                    compact_key(key),
                )
            )
        self.conn.executemany(
            "INSERT OR REPLACE INTO concepts(key, display, script, kind, frequency, days, doc_freq, last_seen,"
            " importance, compact) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            admitted,
        )

    def _names_and_aliases(self) -> tuple[dict[str, tuple[str, list[str]]], list[tuple[str, str]]]:
        wiki = self._wiki_names()
        aliases = [
            (normalise_concept(alias), key)
            for key, (_, names) in wiki.items()
            for alias in names
            if normalise_concept(alias) != key
        ]
        return wiki, aliases

    def _store_aliases(self, aliases: list[tuple[str, str]]) -> None:
        self.conn.execute("DELETE FROM concept_aliases")
        self.conn.executemany("INSERT OR REPLACE INTO concept_aliases(alias, key) VALUES (?, ?)", aliases)

    def _counts(self, aliases: int) -> dict[str, int]:
        return {
            "concepts": self.conn.execute("SELECT count(*) FROM concepts").fetchone()[0],
            "occurrences": self.conn.execute("SELECT count(*) FROM concept_occurrences").fetchone()[0],
            "aliases": aliases,
        }

    def rebuild(self) -> dict[str, int]:
        """Everything from scratch: occurrences of every chunk, the vocabulary with fresh importance
        (pruning what is unseen for 90 days and unimportant), wiki names and aliases."""
        with self.ctx.store.lock:
            for table in ("concept_occurrences", "concept_chunks", "concept_forms", "concepts"):
                self.conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            self._insert(self._chunks(None))
            self._count_chunks()
            wiki, aliases = self._names_and_aliases()
            self._refresh(None, wiki)
            self._store_aliases(aliases)
            self.conn.execute(
                "INSERT OR REPLACE INTO concept_meta(name, value) VALUES ('built', ?)",
                [self.ctx.now().isoformat()],
            )
            self.conn.commit()
            return self._counts(len(aliases))

    def refresh(self) -> dict[str, int]:
        """The nightly pass: fresh importance and pruning for every concept, wiki names and aliases,
        from the occurrences kept current by every sync (no re-extraction; a never-built index is
        rebuilt)."""
        if not self.built():
            return self.rebuild()
        with self.ctx.store.lock:
            self._count_chunks()
            wiki, aliases = self._names_and_aliases()
            self._refresh(None, wiki)
            self._store_aliases(aliases)
            self.conn.commit()
            return self._counts(len(aliases))

    # looking up -------------------------------------------------------------------------------
    def lookup(self, request: SearchRequest) -> Lookup:
        exact = self.exact(request)
        if exact is not None:
            return exact
        terms = concept_terms(request.query)
        candidates_keys = query_keys(request.query, terms)
        if not candidates_keys:
            return Lookup(reason="the query names no concept term")
        probe = sorted(candidates_keys)
        found = {
            r[0]: r
            for r in self.conn.execute(
                "SELECT key, display, doc_freq, days FROM concepts WHERE key IN (SELECT value FROM json_each(?))",
                [json.dumps(probe)],
            )
        }
        for alias, key in self.conn.execute(
            "SELECT alias, key FROM concept_aliases WHERE alias IN (SELECT value FROM json_each(?))",
            [json.dumps(probe)],
        ):
            row = self.conn.execute(
                "SELECT key, display, doc_freq, days FROM concepts WHERE key = ?", (key,)
            ).fetchone()
            if row:
                found[alias] = row
        if not found:
            return Lookup(reason="no known concept in the query")
        content = {normalise_concept(w) for w in content_words(request.query)}
        total = max(2, self._total_chunks())
        concepts = {row[0]: row for row in found.values()}
        idf = {key: normalised_idf(row[2], total) for key, row in concepts.items()}
        min_idf = float(self.config["min_idf"])
        # a concept naming a large share of the corpus (the user's own name, a partner in every
        # conversation) is background: it covers no word of the query and lends no specificity
        counted = {k for k in found if idf[found[k][0]] >= min_idf}
        covered = set().union(*(candidates_keys[k] for k in counted)) & content if content else set()
        coverage = len(covered) / len(content) if content else 0.0
        distinct = [idf[found[k][0]] for k in counted]
        specificity = sum(distinct) / len(distinct) if distinct else 0.0
        confidence = coverage * specificity
        names = sorted(row[1] for row in concepts.values())
        detail: dict[str, object] = {
            "content": sorted(content),
            "uncovered": sorted(content - covered),
            "background": sorted(found[k][0] for k in set(found) - counted),
            "coverage": round(coverage, 4),
            "total": total,
            "found": {
                key: {"doc_freq": row[2], "days": row[3], "idf": round(idf[key], 4)}
                for key, row in concepts.items()
            },
        }
        if not counted:
            reason = "every concept the query names is too common to answer from the index"
            return Lookup(names, confidence, reason=reason, detail=detail)
        if coverage < float(self.config["min_coverage"]):
            reason = f"the concepts cover {coverage:.0%} of the query's words"
            return Lookup(names, confidence, reason=reason, detail=detail)
        if confidence < float(self.config["confidence_threshold"]):
            reason = f"confidence {confidence:.2f} below the threshold"
            return Lookup(names, confidence, reason=reason, detail=detail)
        distinctive = {found[k][0]: idf[found[k][0]] for k in counted}
        if max(concepts[key][2] for key in distinctive) > int(self.config["max_doc_freq"]):
            reason = "a concept is too common to answer from the index"
            return Lookup(names, confidence, reason=reason, detail=detail)
        # background concepts take no part in the answer either: no weight, and no scan of the
        # occurrences of a name on every page
        candidates = self._candidates(request, distinctive)
        answer_coverage = held_share(request.query, candidates[:ANSWER_HEAD])
        detail["answer_coverage"] = round(answer_coverage, 4)
        if candidates and answer_coverage < float(self.config["min_answer_coverage"]):
            reason = f"the index's best lines hold {answer_coverage:.0%} of the query's words"
            return Lookup(names, confidence, reason=reason, detail=detail)
        return Lookup(
            names, confidence, candidates, "" if candidates else "no current chunk names them", detail
        )

    def exact(self, request: SearchRequest) -> Lookup | None:
        """A query that is exactly one known identifier or name (:func:`identifies`), however its
        case and separators are typed ("ERR LOCK 77" for ``ERR_LOCK_77``), is answered from the
        lines naming it with confidence 1: the rarity rules (``min_idf``, the threshold) are
        for telling how much of a longer query its concepts carry, and would send a bare
        identifier written on many of a small workspace's days to the hybrid search. A concept
        above ``max_doc_freq`` is left to the usual rule. None when the query is no such concept."""
        forms = exact_forms(request.query)
        if not forms:
            return None
        rows = [
            r
            for r in self.conn.execute(
                "SELECT key, display, doc_freq, days, kind FROM concepts"
                " WHERE compact IN (SELECT value FROM json_each(?)) ORDER BY doc_freq DESC, key",
                [json.dumps(sorted(forms))],
            )
            if identifies(r[0], r[1], r[4])
        ]
        if not rows or max(r[2] for r in rows) > int(self.config["max_doc_freq"]):
            return None
        total = max(2, self._total_chunks())
        idf = {key: normalised_idf(df, total) for key, _, df, _, _ in rows}
        names = sorted(r[1] for r in rows)
        detail: dict[str, object] = {
            "exact": ", ".join(r[1] for r in rows),
            "coverage": 1.0,
            "total": total,
            "found": {
                key: {"doc_freq": df, "days": days, "idf": round(idf[key], 4)} for key, _, df, days, _ in rows
            },
        }
        candidates = self._candidates(request, idf)
        return Lookup(names, 1.0, candidates, "" if candidates else "no current chunk names them", detail)

    def _candidates(self, request: SearchRequest, idf: dict[str, float]) -> list[Candidate]:
        """The lines naming the concepts, best first. The chunks naming most of them (IDF-weighted)
        are ranked in SQL on the occurrences alone and scored with recall's decay on their days;
        the shortlist's chunks are read (validity- and corpus-filtered) and scored on their exact
        dates; then the best chunks' retrieval units (a list item, a turn, a paragraph)
        that name a concept are the answer, each scored by the IDF share of the query's concepts it
        names times its chunk's decay, so the caller gets the matching lines, and the newest of two
        equal statements first. A chunk without units answers whole."""
        recall = self.ctx.recall
        if recall is None:
            return []
        now = self.ctx.now()
        weights = {k: max(v, 0.01) for k, v in idf.items()}
        # the pool comes from the occurrences alone (the day of each is stored there): no chunk row
        # is read until the shortlist is known, which at 1M chunks is most of a lookup's cost
        pool = self.conn.execute(
            "WITH w(key, idf) AS (SELECT key, value FROM json_each(?))"
            " SELECT o.chunk_id, sum(o.count * w.idf) AS weight, sum(w.idf) AS named, max(o.day) AS day"
            " FROM concept_occurrences o JOIN w ON w.key = o.key GROUP BY o.chunk_id"
            " ORDER BY named DESC, weight DESC, day DESC LIMIT ?",
            [json.dumps(weights), int(self.config["pool"])],
        ).fetchall()
        if not pool:
            return []
        today = self._day(None)
        top = max(weight * named for _, weight, named, _ in pool)
        strength = {chunk_id: weight * named / top for chunk_id, weight, named, _ in pool}
        by_age = {day: recall.decay(today - day) for day in {r[3] for r in pool}}
        by_day = sorted(pool, key=lambda r: -strength[r[0]] * by_age[r[3]])
        keep = max(2 * request.max_results, 12)
        shortlist = [r[0] for r in by_day[: 2 * keep]]  # room for the validity filter
        stamp = now.timestamp()
        rows = {}
        scored = []
        for chunk in recall.chunks(ids=shortlist, where=ChunkFilter.for_request(request, now)):
            source_date = chunk.source_date
            age = None if chunk.evergreen or source_date is None else (stamp - source_date) / 86400.0
            factor = recall.decay(age)
            rows[chunk.id] = chunk
            scored.append(
                (
                    -(strength[chunk.id] * factor),
                    chunk.path,
                    chunk.start_line,
                    chunk.id,
                    strength[chunk.id],
                    factor,
                )
            )
        scored.sort()
        best = scored[:keep]
        units = recall.units([b[3] for b in best])
        total = sum(weights.values())
        out = []
        for _, _, _, chunk_id, relevance, factor in best:
            chunk = rows[chunk_id]
            parts = [(chunk.start_line, chunk.end_line, chunk.heading, chunk.text, relevance)]
            if units.get(chunk_id):
                parts = []
                for unit in units[chunk_id]:
                    named = keys_named(unit.text, weights)
                    if named:
                        share = sum(weights[k] for k in named) / total
                        parts.append(
                            (unit.start_line, unit.end_line, unit.heading or chunk.heading, unit.text, share)
                        )
            for p_start, p_end, p_heading, p_text, p_relevance in parts:
                out.append(
                    Candidate(
                        chunk_id=chunk_id,
                        path=chunk.path,
                        corpus=chunk.corpus,
                        start_line=p_start,
                        end_line=p_end,
                        heading=p_heading,
                        text=p_text,
                        source_date=chunk.source_date,
                        evergreen=chunk.evergreen,
                        generated=chunk.generated,
                        validity_end=chunk.validity_end,
                        superseded_by=chunk.superseded_by,
                        hybrid=p_relevance,
                        decay=factor,
                        score=p_relevance * factor,
                        extra={"answered_by": PLUGIN},
                    )
                )
        out.sort(key=lambda c: (-c.score, -(c.source_date or 0.0), c.path, c.start_line))
        return out[: request.max_results]


def affected_paths(changes: object) -> list[str]:
    out: list[str] = []
    for name in ("new", "modified", "deleted"):
        out.extend(getattr(changes, name, ()) or ())
    return out
