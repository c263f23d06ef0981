"""Choosing the results from the scored candidates (pure, no database): per-corpus caps, the
pool sizes (independent of k, so a smaller k's results are the head of a larger k's), the MMR
order and the message shaping that merges fragments of one message and widens to the whole
message within the budget."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lifelong.contracts import Candidate, SearchRequest
from lifelong.text import jaccard

from .messages import Messages
from .results import result_tokens, within_budget
from .scoring import (
    fold_duplicates,
    mmr_order,
    query_terms,
    token_set,
)


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


# for a token budget, each leg fetches this many times the chunks the budget could fill: a broad
# question's evidence is spread thin (BEAM 100K, 20 chats, evidence recall @5k: 2x 0.626, 4x
# 0.641, 8x 0.651; @2k 0.550 each, whose pool stays candidate_pool; search p95 134 ms at 8x)
BUDGET_CHUNK_FACTOR = 8


def chunk_pool_size(cfg: dict[str, Any], max_tokens: int | None = None) -> int:
    """How many chunks each leg fetches: ``candidate_pool`` whatever k is; for a token budget,
    at least :data:`BUDGET_CHUNK_FACTOR` times the chunks it could fill."""
    size = cfg["candidate_pool"]
    if max_tokens is None:
        return size
    return max(size, -(-BUDGET_CHUNK_FACTOR * max_tokens // cfg["chunk_tokens"]))


def ordering_score(value: float, lam: float) -> float:
    """An MMR value on the relevance scale: relevance - (1 - lam) / lam x penalty (clipped at 0),
    what orders the results: it never rises down the list, and equals the relevance of a
    result nothing picked before resembles."""
    return max(0.0, value / lam) if lam > 0 else 0.0


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
