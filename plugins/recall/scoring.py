"""Scoring and ranking (pure): BM25 mapping, hybrid score, temporal decay, MMR, FTS query text."""

from __future__ import annotations

import math
import re
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain, islice
from typing import Any

from lifelong.contracts import Candidate
from lifelong.decay import decay_factor as decay_factor  # the suite's one decay, re-exported
from lifelong.lazy import numpy as np
from lifelong.markdown import strip_bookkeeping, strip_comments
from lifelong.text import CHATTER, STOPWORDS, fold, fts_text, stem, word_marks, words

QUERY_STOPWORDS = STOPWORDS | CHATTER


@lru_cache(maxsize=100_000)
def token_set(text: str) -> frozenset[str]:
    """The words of ``text`` without stop words (unstemmed) nor the suite's bookkeeping: what MMR
    compares candidates on. Every promoted MEMORY.md item's ``<!-- key:… src:… -->`` made them
    alike; a wiki claim's trailer made the daily line and its copy in the wiki differ, so the
    same line took two or three of a search's results (a struck copy too: the better ranked
    stands for all)."""
    return frozenset(w for w in words(strip_bookkeeping(text)) if w not in STOPWORDS)


def bm25_score(rank: float) -> float:
    """Map an FTS5 bm25() rank (negative; more negative is better) to [0, 1): r/(1+r), r=-rank.
    Monotonic: a better rank always maps higher; a non-match (rank >= 0) maps to 0."""
    r = -rank
    return r / (1.0 + r) if r > 0 else 0.0


def term_of(word: str) -> str:
    """The term a word counts as: its stem, or for a word joined by ``_ - . / :`` its parts joined
    by "_" ("ERR_LOCK_77", "err-lock-77" and "err.lock.77" are one identifier)."""
    if _JOINED.search(word):
        return "_".join(PART_RE.findall(word))
    return stem(word)


def query_terms(text: str) -> list[str]:
    """The terms of the query's content words (:func:`term_of`), once each, in order (stop words
    and chatter dropped): what the units' lexical score matches on. A joined identifier counts
    whole and by its parts, as :func:`term_counts` stores a unit ("os_path_join" finds
    "os.path.join", "http-503" finds "HTTP 503"), but for two words of letters joined by a
    hyphen ("ice-cream"): prose, matched whole."""
    out: list[str] = []
    for w in words(text):
        if w in QUERY_STOPWORDS:
            continue
        out.append(term_of(w))
        out.extend(stem(part) for part in identifier_parts(w) if part not in STOPWORDS)
    return list(dict.fromkeys(out))


@lru_cache(maxsize=100_000)
def term_counts(text: str) -> tuple[dict[str, int], int]:
    """Stem -> count in ``text`` (its HTML comments left out), and its length in words (cached:
    units recur across queries)."""
    counts: dict[str, int] = {}
    n = 0
    for w in words(strip_comments(text)):
        n += 1
        if w in STOPWORDS:
            continue
        s = term_of(w)
        counts[s] = counts.get(s, 0) + 1
        if _JOINED.search(
            w
        ):  # an identifier counts whole and by its parts: "err_lock_77", "err", "lock", "77"
            for part in PART_RE.findall(w):
                if part not in STOPWORDS:
                    p = stem(part)
                    counts[p] = counts.get(p, 0) + 1
    return counts, n


def encode_terms(text: str) -> str:
    """What the index stores per unit so a search need not tokenise it: the length in words,
    then the stems of its non-stop words (``"6 bug bug tw-418 bug"``)."""
    counts, n = term_counts(text)
    return " ".join([str(n), *(t for t, c in counts.items() for _ in range(c))])


@lru_cache(maxsize=100_000)
def decode_terms(encoded: str) -> tuple[dict[str, int], int]:
    """The inverse of :func:`encode_terms`: (stem -> count, length in words)."""
    parts = encoded.split(" ")
    counts: dict[str, int] = {}
    for t in parts[1:]:
        if t:
            counts[t] = counts.get(t, 0) + 1
    return counts, int(parts[0])


def idf(doc_freq: int, total_docs: int) -> float:
    """BM25's idf, never negative: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (max(total_docs, doc_freq) - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_coverage(
    terms: Sequence[str],
    weights: dict[str, float],
    counts: dict[str, int],
    length: int,
    avg_length: float,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> float:
    """BM25 normalised by the query's own maximum, on [0, 1]: sum over matched terms of
    idf x tf(k1+1)/(tf + k1(1-b+b*len/avg)), divided by the summed idf of all query terms. A
    text holding every query term once at average length scores ~1, one holding only the rarest
    term scores that term's share of the query's idf: a decisive rare-word match stays decisive
    (unlike r/(1+r) of a raw rank), and the score does not depend on the other candidates."""
    total = sum(weights.get(t, 0.0) for t in terms)
    if total <= 0 or not counts:
        return 0.0
    norm = k1 * (1.0 - b + b * length / max(avg_length, 1.0))
    got = 0.0
    for t in terms:
        tf = counts.get(t)
        if tf:
            got += weights.get(t, 0.0) * tf * (k1 + 1.0) / (tf + norm)
    return min(1.0, got / total)


def period_factor(
    source_date: float, period: tuple[float, float], miss: float, slack_s: float = 0.0
) -> float:
    """How well a source dated ``source_date`` fits the period a query names (``[start, end)``,
    epoch seconds): 1 inside it; ``miss`` outside it, except in the ``slack_s`` seconds after its
    end, where the factor falls linearly from 1 to ``miss`` (a note written in the days after an
    event recounts it: "yesterday I...", "last week we...")."""
    start, end = period
    if start <= source_date < end:
        return 1.0
    if slack_s > 0 and end <= source_date < end + slack_s:
        return 1.0 - (1.0 - miss) * (source_date - end) / slack_s
    return miss


def centred_cosine(cosine: float | None, background: float) -> float | None:
    """How much more similar than the average passage, on [0, 1]: 2*(cos - b)/(1 - b), clipped,
    where b = query . centroid is the query's mean cosine to the corpus. Embedders such as e5
    put nearly every passage at cos 0.75-0.85 to any query; centring spreads that narrow band, so
    an unrelated passage scores near 0 instead of like a half match, and a passage halfway from
    the average to identical counts as a full match."""
    if cosine is None:
        return None
    if background <= 0.0 or background >= 1.0:
        return max(0.0, cosine)
    return min(1.0, max(0.0, 2.0 * (cosine - background) / (1.0 - background)))


def hybrid_score(cosine: float | None, bm25: float | None, vector_weight: float, text_weight: float) -> float:
    """Weighted sum with the weights renormalised to 1. A missing leg counts as 0; when no
    vector leg exists at all (FTS-only index) the caller passes vector_weight 0."""
    total = vector_weight + text_weight
    if total <= 0:
        return 0.0
    vw, tw = vector_weight / total, text_weight / total
    return vw * max(0.0, cosine or 0.0) + tw * (bm25 or 0.0)


# a word: letters, digits and the marks inside words (Python's \w excludes Thai or Devanagari
# vowel signs, which the index's tokenizer keeps, see tables.py)
_WORD = rf"(?:[^\W_]|[{re.escape(word_marks())}])+"  # "_" splits, as the FTS5 tokenizer does
UNIT_RE = re.compile(rf"{_WORD}(?:[-_./:'’]{_WORD})*", re.UNICODE)
PART_RE = re.compile(_WORD, re.UNICODE)
_JOINED = re.compile(r"[^\W_][-_./:][^\W_]")


# two words of letters joined by a hyphen ("ice-cream", "dairy-free"): prose, matched whole (by
# its parts it lost 0.004 of LoCoMo's multi-hop all@5); three parts or more ("safe-cron-merge-sh")
# read as an identifier typed with other separators
_PROSE_COMPOUND = re.compile(r"[^\W\d_]+-[^\W\d_]+")


def identifier_parts(word: str) -> list[str]:
    """The parts of a query word read as an identifier, joined by ``- _ . / :`` ("err_lock_77":
    "err", "lock", "77"; "v2.3", "TW-418"), which a search matches by its parts; [] for any other
    word, a prose compound included."""
    if not _JOINED.search(word) or _PROSE_COMPOUND.fullmatch(word):
        return []
    return PART_RE.findall(word)


def fts_term(part: str) -> str:
    """A word as the index's tokenizer stores it (the term its vocabulary counts): folded, Latin
    accents removed (``unicode61 remove_diacritics 2``: "münchen" is "munchen")."""
    decomposed = unicodedata.normalize("NFKD", fold(part))
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not 0x300 <= ord(ch) <= 0x36F))


def fts_terms(word: str) -> tuple[str, ...]:
    """The index terms of one word (``TW-418``: "tw", "418")."""
    return tuple(fts_term(p) for p in PART_RE.findall(fts_text(word)))


@dataclass(frozen=True)
class FtsPlan:
    """How the lexical leg asks FTS5 (see ``fts_plan``)."""

    match: str  # every kept term, OR-ed
    quorum: str | None = None  # chunks holding at least two of the rarest terms
    quorum_divisor: int = 1  # FTS5's bm25 counts a chunk matching m terms m-1 times over
    fill: str | None = None  # the rarest terms within the postings budget, OR-ed


def _quote(unit: str) -> str:
    return '"' + unit.replace('"', '""') + '"'


def fts_plan(
    text: str,
    *,
    doc_freq: Callable[[list[str]], dict[str, int]] | None = None,
    forms: Callable[[str], list[tuple[str, int]]] | None = None,
    total_docs: int = 0,
    max_df_ratio: float = 0.2,
    max_terms: int = 12,
    max_postings: int = 0,
    quorum_terms: int = 6,
) -> FtsPlan | None:
    """The FTS5 MATCH expressions for a query. A unit is a word, or a joined identifier such as
    ``TW-418`` or ``v2.3`` kept as a phrase (the FTS tokenizer splits it the same way).
    A word the index holds only in other forms (``forms``: the index terms sharing its stem,
    commonest first) is asked as its commonest form ("camped": "camping"). Stopwords, terms
    absent from the index and very-high-df terms are dropped (they make OR
    queries ~100x slower and carry no signal); the rarest term is always kept, and the rarest
    ``max_terms`` survive. None when nothing is left.

    FTS5 scores every chunk an OR query matches before it can rank them, so on a large index a
    few mid-frequency terms cost 100+ ms. When the kept terms' summed document frequency exceeds
    ``max_postings`` (> 0), the plan adds a quorum query, chunks holding at least two of the
    ``quorum_terms`` rarest terms (any pair, AND-ed: FTS5 intersects doclists instead of scoring
    every posting), whose bm25 counts a chunk matching m of those k terms m-1 times: divided by
    k-1, a chunk holding them all scores as under OR and a partial match is discounted. Slots the
    quorum leaves empty are filled from ``fill``: the rarest terms whose frequencies sum within
    the budget (at least one), OR-ed."""
    units: dict[str, tuple[str, ...]] = {}
    for unit in UNIT_RE.findall(fts_text(text)):  # as the index holds text: NFKC, CJK bigrams
        parts = tuple(fts_term(p) for p in PART_RE.findall(unit))
        if not parts or (len(parts) == 1 and parts[0] in QUERY_STOPWORDS):
            continue
        units.setdefault(" ".join(parts), parts)
    if not units:
        return None
    df: dict[str, int] = {}
    if doc_freq is not None:
        df_parts = doc_freq(sorted({p for parts in units.values() for p in parts}))
        df = {u: min(df_parts.get(p, 0) for p in parts) for u, parts in units.items()}
        if forms is not None:  # a word the index holds only in other forms: its commonest form
            for u, parts in list(units.items()):
                if df[u] == 0 and len(parts) == 1 and (found := forms(stem(parts[0]))):
                    form, freq = found[0]
                    del units[u], df[u]
                    if form not in units:
                        units[form], df[form] = (form,), freq
    order = list(units)
    if doc_freq is None or total_docs < 100:  # in a tiny index every term is "common"
        return FtsPlan(" OR ".join(_quote(u) for u in order[:max_terms]))
    limit = max(1, int(total_docs * max_df_ratio))
    present = [u for u in order if df[u] > 0]
    if not present:
        return None
    kept = [u for u in present if df[u] <= limit] or [min(present, key=lambda u: df[u])]
    order = sorted(kept, key=lambda u: df[u])[:max_terms]
    match = " OR ".join(_quote(u) for u in order)
    if max_postings <= 0 or len(order) < 2 or sum(df[u] for u in order) <= max_postings:
        return FtsPlan(match)
    total, within = 0, list[str]()
    for u in order:
        total += df[u]
        if within and total > max_postings:
            break
        within.append(u)
    rare = order[: max(2, quorum_terms)]
    pairs = " OR ".join(f"({_quote(a)} AND {_quote(b)})" for i, a in enumerate(rare) for b in rare[i + 1 :])
    return FtsPlan(match, pairs, len(rare) - 1, " OR ".join(_quote(u) for u in within))


def fts_query(text: str, **kwargs: Any) -> str | None:
    """The plain OR expression of ``fts_plan`` (its ``match``)."""
    plan = fts_plan(text, **kwargs)
    return plan.match if plan else None


def jaccard_matrix(sets: Sequence[frozenset[str]]) -> np.ndarray:
    """Pairwise :func:`lifelong.text.jaccard` of token sets, as a float64 matrix with the same
    values as the set operations. The sets become bit rows; for up to 128 sets the intersections are popcounts of
    their ANDs (no BLAS, whose worker threads would spin on the core the parallel lexical leg
    uses), above that one incidence-matrix product."""
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in tokens_] for tokens_ in sets]
    lengths = [len(x) for x in ids]
    n = len(sets)
    incidence = np.zeros((n, 64 * max(1, -(-len(vocab) // 64))), dtype=bool)
    if vocab:
        rows = np.repeat(np.arange(n), lengths)
        incidence[rows, np.fromiter(chain.from_iterable(ids), dtype=np.intp, count=sum(lengths))] = True
    if n <= 128:  # a search's head of candidates: popcounts, no BLAS
        words = np.packbits(incidence, axis=1).view(np.uint64)  # (n, vocab/64)
        inter = np.bitwise_count(words[:, None, :] & words[None, :, :]).sum(axis=2).astype(np.float64)
    else:  # large requests: one float32 product (counts are exact in float32)
        as_float = incidence.astype(np.float32)
        inter = (as_float @ as_float.T).astype(np.float64)
    sizes = np.asarray(lengths, dtype=np.float64)
    union = sizes[:, None] + sizes[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1.0), 0.0)


_VOCAB: dict[str, int] = {}  # token -> a number, for the process (what token_ids are made of)
_VOCAB_LOCK = threading.Lock()


@lru_cache(maxsize=100_000)
def token_ids(text: str) -> np.ndarray:
    """The numbers of :func:`token_set`'s tokens (cached: a unit meets many queries)."""
    with _VOCAB_LOCK:
        return np.array([_VOCAB.setdefault(t, len(_VOCAB)) for t in token_set(text)], dtype=np.int64)


def token_bits(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The token sets of ``texts`` as bit rows (n, words of 64 bits) and their sizes: what
    :func:`jaccard_row` compares."""
    ids = [token_ids(t) for t in texts]
    lengths = np.array([len(x) for x in ids], dtype=np.intp)
    n = len(texts)
    every = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    vocab, column = np.unique(every, return_inverse=True)
    incidence = np.zeros((n, 64 * max(1, -(-len(vocab) // 64))), dtype=bool)
    incidence[np.repeat(np.arange(n), lengths), column] = True
    return np.packbits(incidence, axis=1).view(np.uint64), lengths.astype(np.float64)


def jaccard_row(bits: np.ndarray, sizes: np.ndarray, i: int) -> np.ndarray:
    """The Jaccard similarity of set ``i`` to every set (a row of :func:`jaccard_matrix`, the
    same values: popcounts of the ANDed bit rows, no BLAS)."""
    inter = np.bitwise_count(bits & bits[i]).sum(axis=1).astype(np.float64)
    union = sizes + sizes[i] - inter
    return np.where(union > 0, inter / np.maximum(union, 1.0), 0.0)


def mmr_order(
    candidates: Sequence[Candidate], *, lam: float, drop_above: float = 0.85, floor: float | None = None
) -> Iterator[tuple[Candidate, float, float]]:
    """Maximal marginal relevance over token-set Jaccard similarity, lazily: repeatedly pick the
    candidate maximising lam*score - (1-lam)*max_similarity_to_picked and yield it with its
    penalty (that similarity) and that value. Near-duplicates of an already picked candidate
    sink, and those at or above ``drop_above`` similarity are dropped (an overlapping chunk or a
    copied paragraph); a dropped one dated on another day than the pick it duplicates adds that
    day to the pick's ``also_dates`` (on the candidate itself: a pick yielded earlier learns of
    its duplicates as the walk goes on). The picks do not depend on how many are taken, and their
    values never rise (each candidate's value only falls as picks are added, and the best is
    taken each time).

    Each candidate's highest similarity to the picks so far is kept up to date from the pick's
    row of similarities, computed when it is picked: the cost is O(picks x candidates). With a
    ``floor``, the order stops once no candidate scoring at least ``floor`` is left (a caller
    that keeps only those need not order the rest)."""
    pool = sorted(candidates, key=lambda c: c.score, reverse=True)
    if not pool:
        return
    if _on_sets(len(pool)):
        yield from _mmr_order_sets(pool, lam=lam, drop_above=drop_above, floor=floor)
        return
    bits, sizes = token_bits([c.text for c in pool])
    scores = np.array([c.score for c in pool], dtype=np.float64)
    relevance = lam * scores
    max_sim = np.zeros(len(pool), dtype=np.float64)
    alive = np.ones(len(pool), dtype=bool)
    left = len(pool) if floor is None else int(np.count_nonzero(scores >= floor))
    picked: list[int] = []
    while left > 0:
        value = np.where(alive, relevance - (1 - lam) * max_sim, -np.inf)
        best = int(np.argmax(value))  # the first of equals, as the candidates are ordered
        alive[best] = False
        left -= floor is None or scores[best] >= floor
        if picked and max_sim[best] >= drop_above:
            _join_day(pool, picked, best, lambda i: jaccard_row(bits, sizes, i))
            continue
        picked.append(best)
        yield pool[best], float(max_sim[best]), float(value[best])
        np.maximum(max_sim, jaccard_row(bits, sizes, best), out=max_sim)


MMR_SETS_MAX = 256  # up to this many candidates, mmr_order may compare Python sets (no numpy)


def _on_sets(n: int) -> bool:
    """Whether :func:`mmr_order` compares Python sets (the same results as numpy's bit rows):
    for a pool of up to :data:`MMR_SETS_MAX` in a process that has not imported numpy (a CLI
    search without vectors, for which importing numpy costs more than the sets do). A process
    that has numpy (vectors, a warm server) uses its bit rows, faster on a large pool."""
    return n <= MMR_SETS_MAX and "numpy" not in sys.modules


def _mmr_order_sets(
    pool: list[Candidate], *, lam: float, drop_above: float, floor: float | None
) -> Iterator[tuple[Candidate, float, float]]:
    """:func:`mmr_order` over Python sets for a pool of up to :data:`MMR_SETS_MAX` (best
    first): the same picks, penalties and values, in float64 as numpy computes them (a Jaccard
    similarity is a ratio of two whole numbers), without importing numpy, which an FTS-only
    CLI search would otherwise pay for (a fifth of its cold start)."""
    sets = [token_set(c.text) for c in pool]
    sizes = [float(len(s)) for s in sets]
    scores = [float(c.score) for c in pool]
    relevance = [lam * s for s in scores]
    n = len(pool)
    max_sim = [0.0] * n
    alive = [True] * n
    left = n if floor is None else sum(1 for s in scores if s >= floor)
    picked: list[int] = []

    def row(i: int) -> list[float]:  # what jaccard_row computes from the bit rows
        out = []
        for j in range(n):
            inter = float(len(sets[i] & sets[j]))
            union = sizes[j] + sizes[i] - inter
            out.append(inter / max(union, 1.0) if union > 0 else 0.0)
        return out

    while left > 0:
        best, best_value = -1, -math.inf
        for i in range(n):
            if alive[i]:
                value = relevance[i] - (1 - lam) * max_sim[i]
                if best < 0 or value > best_value:  # the first of equals, as np.argmax
                    best, best_value = i, value
        alive[best] = False
        left -= floor is None or scores[best] >= floor
        if picked and max_sim[best] >= drop_above:
            _join_day(pool, picked, best, row)
            continue
        picked.append(best)
        yield pool[best], max_sim[best], best_value
        max_sim = [s if s >= r else r for s, r in zip(max_sim, row(best), strict=True)]


def mmr(
    candidates: Sequence[Candidate],
    *,
    lam: float,
    limit: int,
    drop_above: float = 0.85,
) -> list[Candidate]:
    """The first ``limit`` picks of :func:`mmr_order`, each with its ``mmr_penalty`` and the days of
    the duplicates dropped on the way (``also_dates``); picks keep their original score."""
    picks = list(islice(mmr_order(candidates, lam=lam, drop_above=drop_above), limit))
    return [replace(c, mmr_penalty=p, also_dates=c.also_dates) for c, p, _value in picks]


def fold_duplicates(ranked: Sequence[Candidate], *, drop_above: float = 0.85) -> list[Candidate]:
    """``ranked`` (best first) without the candidates at or above ``drop_above`` token-set
    Jaccard similarity to a better one, each folded into the one it is most similar to: its day,
    when another, joins that one's ``also_dates`` (what :func:`mmr` does to the duplicates it
    drops, for a list that is not re-ranked: an answer of the concept index). The candidates
    kept are returned as given, or copied with their new ``also_dates``."""
    if len(ranked) < 2:
        return list(ranked)
    sim = jaccard_matrix([token_set(c.text) for c in ranked])
    kept: list[int] = []
    also: dict[int, set[float]] = {}
    for i, c in enumerate(ranked):
        if kept:
            nearest = max(kept, key=lambda k: sim[i, k])
            if sim[i, nearest] >= drop_above:
                day = _other_day(c, ranked[nearest])
                if day is not None:
                    also.setdefault(nearest, set()).add(day)
                continue
        kept.append(i)
    return [
        replace(ranked[k], also_dates=tuple(sorted(set(ranked[k].also_dates) | also[k])))
        if k in also
        else ranked[k]
        for k in kept
    ]


def _join_day(
    pool: list[Candidate], picked: list[int], best: int, row: Callable[[int], Sequence[float]]
) -> None:
    """MMR dropped ``pool[best]`` as a duplicate: when it is dated on another day, that day joins
    the pick it is most similar to (``row(i)``: candidate i's similarities to the pool), so the
    same line written on four days is one result listing the other three."""
    duplicate = pool[best]
    if duplicate.evergreen or duplicate.source_date is None:
        return
    sims = row(best)
    owner = pool[max(picked, key=lambda k: sims[k])]
    day = _other_day(duplicate, owner)
    if day is not None:
        owner.also_dates = tuple(sorted({*owner.also_dates, day}))


def _other_day(duplicate: Candidate, pick: Candidate) -> float | None:
    """The source date of ``duplicate`` when it is dated on another day than ``pick`` (an
    undated or evergreen text has none; an overlapping chunk of the same note has the same)."""
    if duplicate.evergreen or duplicate.source_date is None:
        return None
    if pick.source_date is not None and not pick.evergreen and duplicate.source_date == pick.source_date:
        return None
    return duplicate.source_date
