"""The search pipeline: retrieval_pre -> FTS5 + vector legs (validity predicate inside the SQL of
both) -> hybrid score x decay -> retrieval_post -> corpus_supplement merge -> MMR -> min_score
(with the lexical rescue) -> top-k -> recall events."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from lifelong import clock
from lifelong.contracts import Candidate, SearchRequest
from lifelong.lazy import numpy as np
from lifelong.markdown import estimate_tokens, strip_comments
from lifelong.privacy import corpus_predicate
from lifelong.text import fold, is_stopword, jaccard, stem, words
from lifelong.workspace import daily_date

from .answer import asked_kind
from .index import RecallIndex, is_generated_path
from .messages import Messages
from .scoring import (
    fold_duplicates,
    fts_plan,
    fts_terms,
    idf,
    mmr_order,
    query_terms,
    term_of,
    token_set,
)
from .speakers import USER_ROLES, pronoun_query, speakers_in, turn_openers
from .unit_scoring import QueryTerms, UnitRow, UnitScoring, score_units, unit_candidates
from .vector_store import SENTENCE_DTYPE
from .vectors import pack_codes
from .when import QueryTime, query_time

__all__ = ["Candidate", "SearchOutcome", "SearchRequest", "Searcher", "result_json"]

_legs_pool: ThreadPoolExecutor | None = None
_legs_lock = threading.Lock()


def _legs() -> ThreadPoolExecutor:
    """The worker thread that runs the lexical leg beside the vector leg (made on first use)."""
    global _legs_pool
    with _legs_lock:
        if _legs_pool is None:
            _legs_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="recall-fts")
        return _legs_pool


def _dot(rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """rows @ vector without BLAS: OpenBLAS's worker threads, woken for a product of a few
    hundred rows, spin on the core the parallel lexical leg needs (measured at 100k chunks: the
    vector leg took 7.1 ms p50 with them, 3.3 ms without)."""
    return np.einsum("ij,j->i", rows, vector.astype(rows.dtype, copy=False))


def _passing(conn: Any, ids: list[int], where: str, params: list[Any]) -> set[int]:
    """Which of these chunk ids pass the validity and corpus predicates."""
    sql = f"SELECT c.id FROM chunks c WHERE c.id IN (SELECT value FROM json_each(?)) AND {where}"
    return {r[0] for r in conn.execute(sql, [json.dumps(ids), *params])}


@dataclass
class SearchOutcome:
    request: SearchRequest
    results: list[Candidate]
    elapsed_ms: float
    legs: dict[str, Any] = field(default_factory=dict)
    short_circuit: bool = False


def validity_sql(mode: str, at: float) -> tuple[str, list[Any]]:
    if mode == "current":
        return "(c.validity_end IS NULL OR c.validity_end > ?)", [at]
    if mode == "valid-at":
        return (
            "(c.validity_start IS NULL OR c.validity_start <= ?) AND (c.validity_end IS NULL OR c.validity_end > ?)",
            [at, at],
        )
    return "1", []


def hidden_after(now: dt.datetime) -> float | None:
    """The instant after which dated notes are hidden: a pinned clock's (``--now``, a replay, an
    eval: time travel, where a note dated after it is not written yet), None on the real clock,
    where a note dated after today is a plan and is found (marked ``upcoming``)."""
    return now.timestamp() if clock.is_pinned() else None


def written_by_sql(now: float | None) -> tuple[str, list[Any]]:
    """Notes dated after ``now`` (a daily's name, a frontmatter date) do not exist yet: a search
    with ``--now`` in the past sees the workspace as it was. Undated files (evergreen) always do;
    with ``now`` None (the real clock, :func:`hidden_after`) every note does."""
    if now is None:
        return "1", []
    return "(c.evergreen = 1 OR c.source_date IS NULL OR c.source_date <= ?)", [now]


def dated_after(c: Candidate, now: float) -> bool:
    """The same rule for a candidate a plugin supplied (the concept index, the wiki)."""
    return not c.evergreen and c.source_date is not None and c.source_date > now


def mark_upcoming(results: list[Candidate], now: dt.datetime) -> list[Candidate]:
    """Mark the results dated after ``now`` (plans, found on the real clock) as ``upcoming``."""
    for c in results:
        c.upcoming = dated_after(c, now.timestamp())
    return results


SPEAKER_PROBE = 16  # chunks read to decide whether a word the query holds names a transcript's speaker


def normalise_claim(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def claim_hash(text: str) -> str:
    return hashlib.sha256(normalise_claim(text).encode("utf-8")).hexdigest()[:32]


def snippet_of(text: str, limit: int, terms: Sequence[str] = ()) -> str:
    """``text`` within ``limit`` characters: whole when it fits, else a window cut at spaces,
    starting at the text's beginning or, when ``terms`` (stems) are given and the first of them
    found lies past the first window, centred on it (``…`` marks each cut end). HTML comments
    are left out (a MEMORY.md item's key and sources are the suite's bookkeeping)."""
    text = strip_comments(text).strip()
    if len(text) <= limit:
        return text
    start = 0
    if terms:
        hit = _first_match(text, terms)
        if hit is not None and hit > limit * 0.6:
            start = max(0, min(hit - limit // 3, len(text) - limit + 2))
            space = text.rfind(" ", 0, start + 1)
            start = space + 1 if space > start - 40 else start
    lead = "…" if start else ""
    cut = text[start : start + limit - 1 - len(lead)]
    if start + len(cut) >= len(text):
        return lead + cut.rstrip()
    space = cut.rfind(" ")
    if space > len(cut) * 0.6:
        cut = cut[:space]
    return lead + cut.rstrip() + "…"


def _first_match(text: str, terms: Sequence[str]) -> int | None:
    """Character offset of the first word of ``text`` whose stem is one of ``terms``."""
    wanted = set(terms)
    for m in re.finditer(r"\w+", text):
        if stem(fold(m.group(0))) in wanted:
            return m.start()
    return None


def snippet_limit(c: Candidate, snippet_chars: int) -> int:
    """How much of a result's text is returned: all of a message it was widened to (a token
    budget paid for it), up to ``snippet_chars`` per fragment it merges, else ``snippet_chars``."""
    if c.extra.get("context") == "message":
        return max(snippet_chars, len(c.text))
    return snippet_chars * max(1, len(c.parts))


def result_tokens(c: Candidate, snippet_chars: int, terms: Sequence[str] = ()) -> int:
    """The tokens of a result's snippet as returned (what a token budget counts)."""
    return estimate_tokens(snippet_of(c.text, snippet_limit(c, snippet_chars), terms))


def within_budget(
    ranked: Sequence[Candidate], max_tokens: int, snippet_chars: int, terms: Sequence[str] = ()
) -> list[Candidate]:
    """The leading results whose snippets (as returned) fit ``max_tokens`` together; when not even
    the first fits, the first with its text cut to the budget."""
    out: list[Candidate] = []
    used = 0
    for c in ranked:
        cost = result_tokens(c, snippet_chars, terms)
        if used + cost > max_tokens:
            break
        used += cost
        out.append(c)
    if not out and ranked:
        first = ranked[0]
        out.append(
            replace(first, text=snippet_of(first.text, max(8, min(snippet_chars, max_tokens * 4 - 4))))
        )
        while len(out[0].text) > 8 and estimate_tokens(out[0].text) > max_tokens:
            out[0] = replace(out[0], text=out[0].text[: len(out[0].text) * 3 // 4].rstrip() + "…")
    return out


_CAND_COLS = (
    "id, path, corpus, start_line, end_line, heading, text, source_date, evergreen, generated, "
    "validity_end, superseded_by"
)


def _candidate(row: tuple) -> Candidate:
    return Candidate(
        chunk_id=row[0],
        path=row[1],
        corpus=row[2],
        start_line=row[3],
        end_line=row[4],
        heading=row[5],
        text=row[6],
        source_date=row[7],
        evergreen=bool(row[8]),
        generated=bool(row[9]),
        validity_end=row[10],
        superseded_by=row[11],
    )


def as_candidate(c: Candidate | dict[str, Any]) -> Candidate:
    """A plugin may hand back candidates or their fields as a mapping."""
    return c if isinstance(c, Candidate) else Candidate(**c)


def cap_per_corpus(ranked: list[Candidate], req: SearchRequest) -> list[Candidate]:
    """At most ceil(k/2) per corpus first, then backfill by score."""
    cap = math.ceil(req.max_results / 2)
    counts: dict[str, int] = {}
    picked: list[Candidate] = []
    rest: list[Candidate] = []
    for c in ranked:
        if counts.get(c.corpus, 0) < cap and len(picked) < req.max_results:
            picked.append(c)
            counts[c.corpus] = counts.get(c.corpus, 0) + 1
        else:
            rest.append(c)
    picked.extend(rest[: req.max_results - len(picked)])
    return sorted(picked, key=lambda c: c.score, reverse=True)


def select_answered(candidates: list[Candidate], req: SearchRequest, cfg: dict[str, Any]) -> list[Candidate]:
    """Pure: what a ``retrieval_pre`` answer returns: best first, ``min_score``, near-duplicates
    folded into the best of them (the same line on four days is one result listing the other
    dates), then the token budget or the count."""
    ranked = [c for c in sorted(candidates, key=lambda c: c.score, reverse=True) if c.score >= req.min_score]
    ranked = fold_duplicates(ranked, drop_above=cfg["mmr_duplicate_threshold"])
    if req.max_tokens is not None:
        return within_budget(ranked, req.max_tokens, cfg["snippet_chars"], query_terms(req.query))
    return ranked[: req.max_results]


RESULTS_CEILING = 100  # the most results a request may ask for (max_results' maximum, plugin.yaml)


MIN_UNIT_TOKENS = 8  # a budget of N tokens may take N / 8 units (lines of a few words)


def mmr_pool_size(max_tokens: int | None = None) -> int:
    """How many of the best candidates MMR orders: sized for the largest k a request may ask
    (``RESULTS_CEILING``), never from the request's own k, so MMR sees the same pool whatever
    k is (its picks are taken lazily, so a small k does not pay for the large pool); for a
    token budget, enough units of short lines to fill it. (``mmr_pool``, at most 64, no longer
    changes it.)"""
    size = 3 * RESULTS_CEILING
    return size if max_tokens is None else max(size, max_tokens // MIN_UNIT_TOKENS)


def chunk_pool_size(cfg: dict[str, Any], max_tokens: int | None = None) -> int:
    """How many chunks each leg fetches: ``candidate_pool`` whatever k is; for a token budget,
    at least twice the chunks it could fill."""
    size = cfg["candidate_pool"]
    return size if max_tokens is None else max(size, -(-2 * max_tokens // cfg["chunk_tokens"]))


def ordering_score(value: float, lam: float) -> float:
    """An MMR value on the relevance scale: relevance - (1 - lam) / lam x penalty (clipped at 0),
    what orders the results: it never rises down the list, and equals the relevance of a
    result nothing picked before resembles."""
    return max(0.0, value / lam) if lam > 0 else 0.0


def relevance_of(c: Candidate) -> float:
    """A candidate's score before MMR."""
    return c.score if c.relevance is None else c.relevance


class MessageShaper:
    """Fragments of one message returned as one result (:mod:`.messages`). When a unit is picked
    whose message holds other units of the pool that pass ``min_score``, the result holds them
    all: their lines from the first to the last, the lines between them that matched nothing
    written "…" (``extra.matched`` lists the units' line ranges); given room in a token budget
    for the whole message, the result is the whole message (``extra.context`` "message"). A
    later pick inside a returned result is left out. The pool does not depend on k, so neither
    does what a result holds."""

    def __init__(
        self, pool: Sequence[Candidate], min_score: float, messages: Messages | None, snippet_chars: int
    ):
        self.messages = messages
        self.snippet_chars = snippet_chars
        self.by_path: dict[str, list[Candidate]] = {}
        for c in pool:
            if c.score >= min_score and c.chunk_id >= 0:
                self.by_path.setdefault(c.path, []).append(c)
        self.covered: dict[str, list[tuple[int, int]]] = {}

    def absorbed(self, c: Candidate) -> bool:
        return any(a <= c.start_line and c.end_line <= b for a, b in self.covered.get(c.path, ()))

    def shape(self, pick: Candidate, room: int | None = None, terms: Sequence[str] = ()) -> Candidate:
        """The result a pick gives: with ``room`` (tokens left in a budget), its whole message
        when that fits; else the fragments of its message merged; else the pick itself."""
        m = (
            self.messages.of(pick.path, pick.start_line, pick.end_line)
            if self.messages is not None and pick.chunk_id >= 0
            else None
        )
        if m is None:
            return pick
        units = {(pick.start_line, pick.end_line): pick}
        for u in self.by_path.get(pick.path, ()):
            if m[0] <= u.start_line and u.end_line <= m[1] and not self.absorbed(u):
                units.setdefault((u.start_line, u.end_line), u)
        ranges = sorted(units)
        ranges = [r for r in ranges if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in ranges)]
        parts = tuple(units[r] for r in ranges)
        matched = [list(r) for r in ranges]
        if room is not None and m != (pick.start_line, pick.end_line):
            whole = replace(
                pick,
                start_line=m[0],
                end_line=m[1],
                text=self.messages.text(pick.path, *m),  # type: ignore[union-attr]
                parts=parts,
                extra={**pick.extra, "matched": matched, "context": "message"},
            )
            if result_tokens(whole, self.snippet_chars, terms) <= room:
                return whole
        if len(ranges) == 1:
            return pick
        return replace(
            pick,
            start_line=ranges[0][0],
            end_line=max(b for _, b in ranges),
            text=self.messages.joined(pick.path, ranges),  # type: ignore[union-attr]
            parts=parts,
            extra={**pick.extra, "matched": matched},
        )

    def accept(self, c: Candidate) -> None:
        """``c`` is returned: later picks inside it are left out."""
        spans = self.covered.setdefault(c.path, [])
        if c.extra.get("context") == "message" or not c.parts:
            spans.append((c.start_line, c.end_line))
        else:
            spans.extend((p.start_line, p.end_line) for p in c.parts)


def select_results(
    candidates: list[Candidate], req: SearchRequest, cfg: dict[str, Any], messages: Messages | None = None
) -> list[Candidate]:
    """:func:`ranked_results`, each result carrying the days of the duplicates MMR dropped while
    walking to it and past it (:func:`scoring.mmr_order` records them on the candidate)."""
    by_key = {c.key: c for c in candidates}
    out = []
    for r in ranked_results(candidates, req, cfg, messages):
        src = by_key.get(r.key)
        out.append(
            replace(r, also_dates=src.also_dates) if src is not None and src.also_dates != r.also_dates else r
        )
    return out


def ranked_results(
    candidates: list[Candidate], req: SearchRequest, cfg: dict[str, Any], messages: Messages | None = None
) -> list[Candidate]:
    """Pure: the hybrid search's results from its scored candidates. The best
    :func:`mmr_pool_size` (a size that does not depend on k) are ordered by MMR, taken lazily
    until enough results are found; each result's ``score`` is its MMR value on the relevance
    scale (:func:`ordering_score`: scores never rise down the list; ``relevance`` keeps the
    score before MMR), and ``min_score`` applies to the relevance. Fragments of one message
    become one result (:class:`MessageShaper`). The lexical rescue (openclaw#25183) keeps an
    exact keyword hit from vanishing under ``min_score``: rescued results only fill the slots
    the passing ones leave free (never displace a stronger strict result). Then the count: the
    results for k are the first k of the results for any larger k, scores included; or the
    token budget: results in rank order until the next would overflow it (the first one cut to
    the budget when not even it fits); or for corpus ``all`` a cap per corpus."""
    pool = sorted(candidates, key=lambda c: c.score, reverse=True)[: mmr_pool_size(req.max_tokens)]
    lam, snippet_chars = cfg["mmr_lambda"], cfg["snippet_chars"]
    budget = req.max_tokens if req.corpus != "all" else None
    want = req.max_results if budget is None else None
    cap = math.ceil(req.max_results / 2)  # corpus all: enough once cap_per_corpus can pick k
    per_corpus: Counter[str] = Counter()
    terms = query_terms(req.query) if budget is not None else ()
    shaper = MessageShaper(pool, req.min_score, messages, snippet_chars)
    results: list[Candidate] = []
    used = 0

    def take(c: Candidate) -> bool:
        """Add ``c`` (shaped) unless an earlier result holds it; False when the results are full."""
        nonlocal used
        if shaper.absorbed(c):
            return True
        if budget is None:
            r = shaper.shape(c)
        else:
            r = shaper.shape(c, budget - used, terms)
            cost = result_tokens(r, snippet_chars, terms)
            if used + cost > budget:
                if not results:
                    results.extend(within_budget([r], budget, snippet_chars, terms))
                return False
            used += cost
        shaper.accept(r)
        results.append(r)
        if req.corpus == "all":
            per_corpus[r.corpus] += 1
            return sum(min(n, cap) for n in per_corpus.values()) < req.max_results
        return want is None or len(results) < want

    # MMR orders the whole pool (a pick below min_score still penalises what resembles it), up
    # to the last candidate passing min_score
    drop_above = cfg["mmr_duplicate_threshold"]
    for c, penalty, value in mmr_order(pool, lam=lam, drop_above=drop_above, floor=req.min_score):
        if c.score >= req.min_score:
            pick = replace(c, mmr_penalty=penalty, relevance=c.score, score=ordering_score(value, lam))
            if not take(pick):
                return cap_per_corpus(results, req) if req.corpus == "all" else results
    # the rescue: the pool's best keyword hits (not near-duplicates of a result), when below min_score
    shown = [token_set(r.text) for r in results]
    hits = (
        c
        for c in sorted((c for c in pool if c.bm25), key=lambda c: c.bm25 or 0.0, reverse=True)
        if all(jaccard(token_set(c.text), t) < drop_above for t in shown)
    )
    best = next(hits, None)
    strong = [
        c for c in (best, next(hits, None)) if c is not None and (c.bm25 or 0.0) >= cfg["lexical_rescue_min"]
    ]
    if best is not None and not strong and not any(c.score >= req.min_score for c in pool):
        strong = [best]
    rescued: list[Candidate] = []
    for c in strong:
        if c.score < req.min_score:
            floor = (rescued or results)[-1].score if (rescued or results) else c.score
            rescued.append(replace(c, rescued=True, relevance=c.score, score=min(c.score, floor)))
    if req.corpus == "all":
        capped = cap_per_corpus(results, req)
        return capped + rescued[: max(0, req.max_results - len(capped))]
    for c in rescued:
        if not take(c):
            break
    return results


class Searcher:
    def __init__(self, index: RecallIndex):
        self.index = index
        self.ctx = index.ctx
        self.config = index.config
        self.conn = index.store.conn
        self._read: list[tuple[str, int, str]] = []  # the chunks the last search read

    # legs -----------------------------------------------------------------------------------
    def _doc_freq(self, terms: list[str], conn: Any = None) -> dict[str, int]:
        q = ",".join("?" * len(terms))
        return {
            t: d
            for t, d in (conn or self.conn).execute(
                f"SELECT term, doc FROM chunks_vocab WHERE term IN ({q})", terms
            )
        }

    def _stem_doc_freq(self, stems: list[str]) -> dict[str, int]:
        """stem -> the document frequency of its most frequent form in the index vocabulary
        (the terms that begin with the stem and stem to it; the FTS5 vocabulary holds words as
        written), for the stems that have one."""
        out: dict[str, int] = {}
        for t in stems:
            forms = self._stem_forms(t)
            if forms:
                out[t] = forms[0][1]
        return out

    def _stem_forms(self, t: str, conn: Any = None) -> list[tuple[str, int]]:
        """The index terms that stem to ``t`` (and begin with it), commonest first, with their
        document frequencies."""
        rows = (
            (conn or self.conn)
            .execute(
                "SELECT term, doc FROM chunks_vocab WHERE term >= ? AND term < ? LIMIT 64",
                [t, t + "\U0010ffff"],
            )
            .fetchall()
        )
        return sorted(((term, d) for term, d in rows if stem(term) == t), key=lambda r: -r[1])

    def _total_docs(self, conn: Any = None) -> int:
        """The number of chunks, counted once per index generation (one entry per index)."""
        conn = conn or self.conn
        generation = conn.execute("SELECT value FROM index_meta WHERE key = 'generation'").fetchone()
        generation = generation[0] if generation else "0"
        cached = self.index.total_docs
        if cached is None or cached[0] != generation:
            cached = self.index.total_docs = (
                generation,
                conn.execute("SELECT count(*) FROM chunks").fetchone()[0],
            )
        return cached[1]

    def named_speakers(self, query: str) -> set[str]:
        """The words of ``query`` that name a speaker of the indexed transcripts: a word that
        marks the speaker of a line (``- [D1:3] Caroline: ...``) in at least half of the first
        chunks holding it. A name once used as a label (``Emma: prefers tea``) among notes that
        mention Emma otherwise is not one; a chat role (``User:``) is not a name."""
        out: set[str] = set()
        for w in dict.fromkeys(words(query)):
            if is_stopword(w) or len(w) < 2 or not w.isalpha() or w in USER_ROLES:
                continue
            ids = [
                r[0]
                for r in self.conn.execute(
                    "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?",
                    ['"' + w.replace('"', '""') + '"', SPEAKER_PROBE],
                )
            ]
            if not ids:
                continue
            spoken = sum(
                w in speakers_in(text)
                for (text,) in self.conn.execute(
                    "SELECT text FROM chunks WHERE id IN (SELECT value FROM json_each(?))", [json.dumps(ids)]
                )
            )
            if 2 * spoken >= len(ids):
                out.add(w)
        return out

    def fts_leg(
        self, req: SearchRequest, where: str, params: list[Any], limit: int, conn: Any = None
    ) -> dict[int, float]:
        conn = conn or self.conn
        plan = fts_plan(
            req.query,
            doc_freq=lambda terms: self._doc_freq(terms, conn),
            forms=lambda t: self._stem_forms(t, conn),
            total_docs=self._total_docs(conn),
            max_df_ratio=self.config["fts_max_df_ratio"],
            max_postings=self.config["fts_max_postings"],
        )
        if plan is None:
            return {}
        if plan.quorum is None:
            return dict(self._fts_rows(conn, plan.match, where, params, limit))
        quorum = self._fts_rows(conn, plan.quorum, where, params, limit)
        ranks = {cid: rank / plan.quorum_divisor for cid, rank in quorum}
        if len(ranks) < limit and plan.fill:
            for cid, rank in self._fts_rows(conn, plan.fill, where, params, limit):
                if len(ranks) >= limit:
                    break
                ranks.setdefault(cid, rank)
        return ranks

    def _fts_rows(
        self, conn: Any, match: str, where: str, params: list[Any], limit: int
    ) -> list[tuple[int, float]]:
        # FTS5 answers "ORDER BY rank LIMIT n" on the bare table without sorting every match
        # (rank is bm25 with the heading column at half weight, configured in tables.py); the
        # validity and corpus predicates are applied to that best-first window, which widens
        # until enough rows pass or the matches run out.
        window = limit * 4
        while True:
            best = conn.execute(
                "SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
                [match, window],
            ).fetchall()
            passing = _passing(conn, [r[0] for r in best], where, params)
            rows = [r for r in best if r[0] in passing][:limit]
            if len(rows) >= limit or len(best) < window:
                return rows
            window *= 8

    def _timed_fts_leg(
        self, req: SearchRequest, where: str, params: list[Any], limit: int, reader: Any
    ) -> tuple[dict[int, float], float]:
        t0 = time.monotonic()
        if reader is None:
            out = self.fts_leg(req, where, params, limit)
        else:
            with self.index.store.reader_lock:
                out = self.fts_leg(req, where, params, limit, reader)
        return out, (time.monotonic() - t0) * 1000

    def vector_leg(self, qvec: np.ndarray, where: str, params: list[Any], limit: int) -> dict[int, float]:
        """The ``pool`` nearest codes, re-ranked exactly by cosine (reading only their vectors),
        then the validity and corpus predicates checked best-first in batches; the pool widens
        when the predicates remove too many."""
        matrix = self.index.code_matrix()
        n = matrix.size
        if n == 0:
            return {}
        pool = max(self.config["vector_pool"], limit * 4)
        centroid = self.index.centroid()
        qcode = pack_codes(qvec[None, :].astype(np.float32), centroid)[0]
        centred = qvec - centroid if centroid is not None else qvec
        while True:
            ids = matrix.shortlist(qcode, centred, self.config["coarse_pool"], pool)
            rows = self.conn.execute(
                "SELECT chunk_id, embedding FROM chunk_vectors WHERE chunk_id IN (SELECT value FROM json_each(?))",
                [json.dumps(ids.tolist())],
            ).fetchall()
            out: dict[int, float] = {}
            if rows:
                vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                sims = _dot(vecs, qvec)
                ranked = [(rows[i][0], float(sims[i])) for i in np.argsort(-sims)]
                step = max(2 * limit, 16)
                for start in range(0, len(ranked), step):
                    batch = ranked[start : start + step]
                    ok = _passing(self.conn, [cid for cid, _ in batch], where, params)
                    out.update((cid, sim) for cid, sim in batch if cid in ok)
                    if len(out) >= limit:
                        return dict(list(out.items())[:limit])
            if pool >= n:
                return out
            pool = min(n, pool * 4)  # the filters removed too many: widen the coarse pool

    def period_leg(
        self, qvec: np.ndarray, when: QueryTime, where: str, params: list[Any]
    ) -> dict[int, float]:
        """The ``period_pool`` chunks of the dailies dated inside a period the query names ("in
        October 2023", "last week"; up to ``period_slack_days`` after it) nearest the query,
        whatever their rank in the whole index: a daily of that week that shares no word with the
        question and sits below the vector leg's pool is still a candidate ("what was Dave doing
        in the first weekend of October" -> "Last Friday I went to the car show"). Skipped for an
        open period ("as of", "before") and when the period's dailies hold more than
        ``period_max_chunks`` chunks (the legs and the period factor rank those). Reads the
        dailies at the top of memory/ (``memory/2023-10-07.md``), a range of the path index."""
        if when.period is None:
            return {}
        start, end = when.period
        if start <= 0:
            return {}
        end += self.config["period_slack_days"] * 86400.0
        tz = self.index.ws.timezone
        first = dt.datetime.fromtimestamp(start, tz).date()
        last = dt.datetime.fromtimestamp(end, tz).date() + dt.timedelta(days=1)
        cap = self.config["period_max_chunks"]
        # dailies are named memory/YYYY-MM-DD[-topic].md: the period's are one range of the path
        # index, whatever the size of the index
        rows = self.conn.execute(
            "SELECT id, path FROM chunks WHERE path >= ? AND path < ? LIMIT ?",
            [f"memory/{first.isoformat()}", f"memory/{last.isoformat()}", cap + 1],
        ).fetchall()
        if len(rows) > cap:
            return {}
        ids = []
        for cid, path in rows:
            day = daily_date(path)
            if (
                day is not None
                and start <= dt.datetime(day.year, day.month, day.day, tzinfo=tz).timestamp() < end
            ):
                ids.append(cid)
        if not ids:
            return {}
        sims = self.cosines(qvec, ids)
        ok = _passing(self.conn, list(sims), where, params)
        best = sorted(((sim, cid) for cid, sim in sims.items() if cid in ok), reverse=True)
        return {cid: sim for sim, cid in best[: self.config["period_pool"]]}

    def cosines(self, qvec: np.ndarray, ids: list[int]) -> dict[int, float]:
        """chunk id -> cosine with the query, for the chunks of ``ids`` that have a vector."""
        return self._stored_cosines(
            "SELECT chunk_id, embedding FROM chunk_vectors WHERE chunk_id", qvec, ids
        )[0]

    def _stored_cosines(
        self, select: str, qvec: np.ndarray, ids: list[int]
    ) -> tuple[dict[int, float], list[tuple]]:
        """``select`` (id, embedding, ... rows; fixed SQL up to the id column) restricted to
        ``ids``: id -> cosine of the embedding, and the rows (for their other columns)."""
        if not ids:
            return {}, []
        rows = self.conn.execute(
            f"{select} IN (SELECT value FROM json_each(?))", [json.dumps(ids)]
        ).fetchall()
        if not rows:
            return {}, []
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        sims = _dot(vecs, qvec)
        return {rows[i][0]: float(sims[i]) for i in range(len(rows))}, rows

    def _units_of(self, chunk_ids: list[int]) -> dict[int, list[UnitRow]]:
        """chunk id -> its units, in line order."""
        out: dict[int, list[UnitRow]] = {}
        for uid, cid, a, b, heading, text, terms in self.conn.execute(
            "SELECT id, chunk_id, start_line, end_line, heading, text, terms FROM units WHERE chunk_id IN "
            "(SELECT value FROM json_each(?)) ORDER BY chunk_id, start_line",
            [json.dumps(chunk_ids)],
        ):
            out.setdefault(cid, []).append(UnitRow(uid, a, b, heading, text, terms))
        return out

    def _unit_cosines(self, qvec: np.ndarray, unit_ids: list[int]) -> dict[int, float]:
        """unit id -> cosine with the query: of the unit's own vector, or of its best sentence
        when that is higher (``sentence_vectors``: one matching sentence of a long turn or
        paragraph is not diluted by the rest)."""
        if not self.config["sentence_vectors"]:
            return self._stored_cosines(
                "SELECT unit_id, embedding FROM unit_vectors WHERE unit_id", qvec, unit_ids
            )[0]
        out, rows = self._stored_cosines(
            "SELECT unit_id, embedding, sentences FROM unit_vectors WHERE unit_id", qvec, unit_ids
        )
        dim = qvec.shape[0]
        size = dim * np.dtype(SENTENCE_DTYPE).itemsize
        owners = [r[0] for r in rows if r[2] for _ in range(len(r[2]) // size)]
        if owners:
            svecs = np.frombuffer(b"".join(r[2] for r in rows if r[2]), dtype=SENTENCE_DTYPE).astype(
                np.float32
            )
            for uid, sim in zip(owners, _dot(svecs.reshape(len(owners), dim), qvec).tolist(), strict=True):
                if sim > out[uid]:
                    out[uid] = sim
        return out

    def _unit_candidates(
        self,
        req: SearchRequest,
        rows: list[tuple],
        vec: dict[int, float],
        fts: dict[int, float],
        qvec: np.ndarray | None,
        background: float,
        vw: float,
        tw: float,
        at: dt.datetime,
        when: QueryTime,
    ) -> list[Candidate]:
        """Score every unit of the candidate chunks: its own cosine and lexical score, blended
        with its chunk's (``context_weight``), times the bounded decay (and the query's period).
        A chunk without units (an index built before units existed) is scored as one unit. The
        best :func:`mmr_pool_size` become candidates (a unit in two overlapping chunks once): a
        number that does not depend on k, five times the 60 of k = 6 before (so re-scoring
        plugins still lift a unit from well below the results into them). The chunks read are
        kept for :meth:`messages`."""
        cfg = self.config
        chunks = {row[0]: _candidate(row) for row in rows}
        self._read = [(c.path, c.start_line, c.text) for c in chunks.values()]
        units = self._units_of(list(chunks))
        ucos = (
            self._unit_cosines(qvec, [u.id for us in units.values() for u in us])
            if qvec is not None and cfg["unit_vectors"]
            else {}
        )
        terms = query_terms(req.query)
        query = QueryTerms(req.query, terms, self._term_weights(req.query, terms), when)
        params = UnitScoring.from_config(cfg, vw, tw, no_decay=when.no_decay)
        scored, decays = score_units(chunks, units, ucos, vec, query, background, params, at.timestamp())
        if not scored:
            return []
        kind = asked_kind(req.query) if params.answer_boost else None
        return unit_candidates(chunks, scored, decays, fts, mmr_pool_size(req.max_tokens), kind)

    def _term_weights(self, query: str, terms: list[str]) -> dict[str, float]:
        """Each query term's idf in the index: the document frequency of a word is its rarest
        FTS5 token's ("TW-418": "tw", "418"); a word the index holds only in other forms
        ("camped": "camping") weighs as its stem's most frequent form; a word no chunk holds in
        any form weighs nothing: it cannot tell candidates apart."""
        total = self._total_docs()
        parts: dict[str, tuple[str, ...]] = {}
        for w in words(query):
            parts.setdefault(term_of(w), fts_terms(w))
        wanted = sorted({p for ps in parts.values() for p in ps})
        df = self._doc_freq(wanted) if wanted else {}
        freqs = {t: min((df.get(p, 0) for p in parts.get(t, ())), default=0) for t in terms}
        unseen = [t for t in terms if not freqs[t] and len(parts.get(t, ())) == 1]
        if unseen:
            freqs.update(self._stem_doc_freq(unseen))
        return {t: idf(freqs[t], total) if freqs[t] else 0.0 for t in terms}

    # the pipeline ---------------------------------------------------------------------------
    def search(self, req: SearchRequest) -> SearchOutcome:
        """``retrieval_pre`` (a plugin may answer: the concept index), else both legs and the
        unit scores; then the plugins' pass (``retrieval_post``, ``corpus_supplement``) and the
        pure selection of what is returned (:func:`select_results`)."""
        req.validate()
        started = time.monotonic()
        now = self.ctx.now()
        pre = self.ctx.first("retrieval_pre", ctx=self.ctx, request=req)
        if pre is not None:
            # re-scoring plugins see these too (the supersede gate hides closed facts; task focus
            # leaves an answer of the concept index alone), and other corpora are merged as below
            answered = self._plugin_pass(req, [as_candidate(c) for c in pre], now)
            results = mark_upcoming(select_answered(answered, req, self.config), now)
            legs: dict[str, Any] = {"retrieval_pre": True}
            self._timed_record(req, results, now, legs)
            return SearchOutcome(req, results, (time.monotonic() - started) * 1000, legs, True)
        legs = {}
        candidates = self._hybrid_candidates(req, now, legs)
        if candidates is None:
            return SearchOutcome(req, [], (time.monotonic() - started) * 1000, legs)
        results = mark_upcoming(
            select_results(self._plugin_pass(req, candidates, now), req, self.config, self.messages()), now
        )
        self._timed_record(req, results, now, legs)
        return SearchOutcome(req, results, (time.monotonic() - started) * 1000, legs)

    def messages(self) -> Messages:
        """The messages of the chunks this search read (what a result's fragments belong to)."""
        return Messages(self._read, turn_openers)

    def _timed_record(
        self, req: SearchRequest, results: list[Candidate], now: dt.datetime, legs: dict[str, Any]
    ) -> None:
        """Record the recall events; ``legs["record_ms"]`` is how long that took (it waits for the
        write lock when another process holds it)."""
        t0 = time.monotonic()
        self._record(req, results, now)
        legs["record_ms"] = (time.monotonic() - t0) * 1000

    def _plugin_pass(
        self, req: SearchRequest, candidates: list[Candidate], now: dt.datetime
    ) -> list[Candidate]:
        """Re-scoring plugins (``retrieval_post``), other corpora (``corpus_supplement`` for wiki
        and all), then, under a pinned clock, nothing dated after ``now`` (:func:`hidden_after`)."""
        for post in self.ctx.hook("retrieval_post", ctx=self.ctx, request=req, candidates=candidates):
            if isinstance(post, list):
                candidates = post
        if req.corpus in ("wiki", "all"):
            for extra in self.ctx.hook("corpus_supplement", ctx=self.ctx, request=req):
                candidates.extend(as_candidate(c) for c in extra)
        cutoff = hidden_after(now)
        return [c for c in candidates if cutoff is None or not dated_after(c, cutoff)]

    def _hybrid_candidates(
        self, req: SearchRequest, now: dt.datetime, legs: dict[str, Any]
    ) -> list[Candidate] | None:
        """Both legs over the chunks the predicates allow, then every candidate chunk's units
        scored; None when neither leg found anything. Fills ``legs`` with timings and counts."""
        cfg = self.config
        at = (req.as_of or now) if req.mode == "valid-at" else now
        when = query_time(req.query, at, self.index.ws.timezone)  # the period the query names
        vwhere, vparams = validity_sql(req.mode, at.timestamp())
        cwhere, cparams = corpus_predicate(req.corpus, req.scope)
        dwhere, dparams = written_by_sql(hidden_after(now))
        where, params = f"{vwhere} AND {cwhere} AND {dwhere}", [*vparams, *cparams, *dparams]
        # the candidate pools never depend on max_results, so the results of a smaller k are the
        # head of a larger k's; a chunk holds several units, so a pool of chunks yields more
        # units than results
        pool = chunk_pool_size(cfg, req.max_tokens)

        embedder = self.index.embedder
        qvec = None
        vec: dict[int, float] = {}
        have_vectors = embedder is not None and self.index.meta("embedder") == self.index.embedder_id(
            embedder
        )
        # the lexical leg runs on the store's reader connection in another thread while this one
        # embeds the query and runs the vector leg (SQLite and numpy release the GIL)
        store = self.index.store
        reader = store.reader() if have_vectors and cfg["parallel_legs"] else None
        fts_job = _legs().submit(self._timed_fts_leg, req, where, params, pool, reader) if reader else None
        if fts_job is None:
            fts, legs["fts_ms"] = self._timed_fts_leg(req, where, params, pool, None)
        if have_vectors:
            t0 = time.monotonic()
            if req.query_vector is not None:
                qvec = np.asarray(req.query_vector, dtype=np.float32)
            else:
                text = req.query
                if cfg["speaker_pronoun"] and cfg["speaker_boost"]:
                    text = pronoun_query(text, self.named_speakers(text))
                    if text != req.query:
                        legs["embedded_query"] = text
                assert embedder is not None  # have_vectors
                qvec = embedder.embed_query(text)
            legs["embed_ms"] = (time.monotonic() - t0) * 1000
            t0 = time.monotonic()
            vec = self.vector_leg(qvec, where, params, pool)
            legs["vector_ms"] = (time.monotonic() - t0) * 1000
            if cfg["period_pool"]:
                t0 = time.monotonic()
                found = self.period_leg(qvec, when, where, params)
                if found:
                    legs["period_hits"] = len(found)
                    legs["period_ms"] = (time.monotonic() - t0) * 1000
                    for cid, sim in found.items():
                        vec.setdefault(cid, sim)
        if fts_job is not None:
            fts, legs["fts_ms"] = fts_job.result()
            legs["parallel_legs"] = True
        legs.update(fts_hits=len(fts), vector_hits=len(vec), vectors=have_vectors)

        ids = list(dict.fromkeys([*vec, *fts]))
        if not ids:
            return None
        rows = self.conn.execute(
            f"SELECT {_CAND_COLS} FROM chunks WHERE id IN (SELECT value FROM json_each(?))", [json.dumps(ids)]
        ).fetchall()
        missing_cos = [i for i in fts if i not in vec]
        if qvec is not None and missing_cos:
            vec.update(self.cosines(qvec, missing_cos))
        vw = cfg["vector_weight"] if have_vectors else 0.0
        tw = cfg["text_weight"]
        background = 0.0
        if qvec is not None and cfg["cosine_centering"]:
            mean = self.index.mean_vector()
            background = float(qvec @ mean) if mean is not None else 0.0
        legs["cosine_background"] = background
        t0 = time.monotonic()
        candidates = self._unit_candidates(req, rows, vec, fts, qvec, background, vw, tw, at, when)
        legs["units_ms"] = (time.monotonic() - t0) * 1000
        legs["units"] = len(candidates)
        return candidates

    def _record(self, req: SearchRequest, results: list[Candidate], now: dt.datetime) -> None:
        if not req.record or not self.config["record_events"] or not results:
            return
        tz = self.index.ws.timezone
        day = now.astimezone(tz).date().isoformat()
        qhash = hashlib.sha256(normalise_claim(req.query).encode("utf-8")).hexdigest()[:32]
        rows = []
        # a result that merges fragments of a message records each fragment (what matched), not
        # the lines around them
        for c in (p for r in results for p in (r.parts or (r,))):
            if c.generated or is_generated_path(c.path) or c.chunk_id < 0:
                continue  # never feed the suite's own output back into consolidation
            snip = snippet_of(c.text, self.config["snippet_chars"])
            rows.append(
                (
                    now.timestamp(),
                    day,
                    qhash,
                    req.query[:1000],
                    c.key,
                    claim_hash(snip),
                    c.path,
                    c.start_line,
                    c.end_line,
                    c.corpus,
                    # relevance before decay: consolidation weighs age itself
                    float(max(c.hybrid, relevance_of(c))),
                    req.source,
                )
            )
        if rows:
            with self.index.store.lock:
                self.conn.executemany(
                    "INSERT INTO recall_events(ts, day, query_hash, query, chunk_key, claim_hash, path, start_line,"
                    " end_line, corpus, score, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                self.conn.commit()


def result_json(
    c: Candidate, snippet_chars: int, explain: bool = False, tz: dt.tzinfo = dt.UTC, query: str | None = None
) -> dict[str, Any]:
    """A result as the tools and the CLI return it. The snippet is the result's lines (a unit:
    the lines that matched; fragments of one message merged; a whole message), cut to
    :func:`snippet_limit` around the first word of ``query`` when longer. ``score`` is what
    ordered the results (never rising down the list), ``relevance`` the score before MMR."""
    out: dict[str, Any] = {
        "path": c.path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "score": round(c.score, 4),
        "relevance": round(relevance_of(c), 4),
        "snippet": snippet_of(c.text, snippet_limit(c, snippet_chars), query_terms(query) if query else ()),
        "corpus": c.corpus,
        "heading": c.heading,
        "citation": f"Source: {c.citation}",
        "source_date": (
            dt.datetime.fromtimestamp(c.source_date, tz).date().isoformat()
            if c.source_date is not None and not c.evergreen
            else None
        ),
    }
    if c.upcoming:  # dated after today: a plan (found on the real clock only)
        out["upcoming"] = True
    if c.also_dates:  # the same line on other days, folded into this result
        out["also_dates"] = [dt.datetime.fromtimestamp(d, tz).date().isoformat() for d in c.also_dates]
    if c.extra:  # what a plugin attached: a wiki hit's claim id and evidence, a concept match
        out["extra"] = c.extra
    if c.superseded_by or c.validity_end is not None:
        out["superseded_by"] = c.superseded_by
        out["validity_end"] = (
            dt.datetime.fromtimestamp(c.validity_end, dt.UTC).isoformat()
            if c.validity_end is not None
            else None
        )
    if explain:
        keep = (
            "cosine",
            "similarity",
            "bm25",
            "fts_rank",
            "hybrid",
            "decay",
            "mmr_penalty",
            "rescued",
            "evergreen",
        )
        out["explain"] = {
            k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(c).items() if k in keep
        }
    return out
