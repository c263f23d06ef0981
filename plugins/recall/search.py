"""The search pipeline: retrieval_pre -> FTS5 + vector legs (validity predicate inside the SQL of
both) -> hybrid score x decay -> retrieval_post -> corpus_supplement merge -> MMR -> min_score
(with the lexical rescue) -> top-k -> recall events."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lifelong import clock
from lifelong.contracts import Candidate, SearchRequest
from lifelong.lazy import numpy as np
from lifelong.privacy import corpus_predicate
from lifelong.text import is_stopword, stem, words
from lifelong.workspace import daily_date

from .answer import asked_kind
from .index import RecallIndex
from .messages import Messages
from .results import claim_hash, normalise_claim, relevance_of, snippet_of
from .scan import is_generated_path
from .scoring import (
    fts_plan,
    fts_terms,
    identifier_parts,
    idf,
    query_terms,
    term_of,
)
from .selection import chunk_pool_size, mmr_pool_size, select_answered, select_results
from .speakers import USER_ROLES, pronoun_query, speakers_in, turn_openers
from .unit_scoring import QueryTerms, UnitRow, UnitScoring, score_units, unit_candidates
from .vector_store import SENTENCE_DTYPE
from .vectors import pack_codes
from .when import QueryTime, query_time

__all__ = ["Candidate", "SearchOutcome", "SearchRequest", "Searcher"]

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
        any form weighs nothing: it cannot tell candidates apart. A joined identifier weighs
        through its parts (:func:`scoring.query_terms`), its whole nothing: "os_path_join" gives
        "os.path.join" full credit, whatever the separators or case. Two words of letters joined
        by a hyphen ("ice-cream", "dairy-free") are prose and weigh whole as before: weighed by
        their parts they lost 0.004 of LoCoMo's multi-hop all@5."""
        total = self._total_docs()
        parts: dict[str, tuple[str, ...]] = {}
        joined: set[str] = set()  # identifiers, weighed by their parts
        for w in words(query):
            parts.setdefault(term_of(w), fts_terms(w))
            pieces = identifier_parts(w)
            if pieces:
                joined.add(term_of(w))
            for part in pieces:
                parts.setdefault(stem(part), fts_terms(part))
        wanted = sorted({p for ps in parts.values() for p in ps})
        df = self._doc_freq(wanted) if wanted else {}
        freqs = {t: min((df.get(p, 0) for p in parts.get(t, ())), default=0) for t in terms}
        unseen = [t for t in terms if not freqs[t] and len(parts.get(t, ())) == 1]
        if unseen:
            freqs.update(self._stem_doc_freq(unseen))
        return {t: idf(freqs[t], total) if freqs[t] and t not in joined else 0.0 for t in terms}

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
