"""Attribution (pure, no database): which note line each recall event was about.

A recall event names a chunk (path, lines) and the query that found it. Inside the chunk, each
snippet is scored by the query tokens it shares, each weighted by 1/(number of the chunk's
snippets holding it), so words every line shares (the section heading) count little. The best
snippet(s) get the credit; with no shared token, a chunk holding a single snippet is credited
only when the retrieval score is at least ``attribution_min_score_without_overlap``. A one-off
line sharing a chunk with a durable fact therefore gets no credit for the fact's recalls. Events
are grouped by (chunk, query) so each group is attributed once; the credits of one search are
then thinned to one per fact (:func:`credit_search`) and become the pool's signals
(:func:`apply_credits`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from lifelong.contracts import RecallEvent

from .candidates import CandidatePool, NearDuplicateIndex, Occurrence, Signal
from .facts import GroupingConfig, fact_view, names_seen, pair_strength
from .snippets import Snippet, content_tokens, jaccard, similarity_tokens, text_key

if TYPE_CHECKING:
    from .dailies import DailyReader
    from .light import LightReport

EventGroup = tuple[str, int, int, str]  # (daily, start line, end line, query hash)
SearchId = tuple[str, float]  # (query hash, time): one search


class Vocabulary:
    """Document frequencies of content tokens over every snippet known (candidates and the notes
    read this run): rare words say more about what a query was after than common ones."""

    def __init__(self) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        self.seen: set[str] = set()

    def add(self, key: str, tokens: frozenset[str]) -> None:
        if key in self.seen:
            return
        self.seen.add(key)
        self.n += 1
        self.df.update(tokens)

    def add_text(self, text: str, heading: str) -> None:
        """Count one note line (its words and its section heading's), once per distinct line."""
        section = heading.split(" > ")[-1] if heading else ""
        self.add(text_key(f"{section}\n{text}"), content_tokens(text) | content_tokens(section))

    def idf(self, token: str) -> float:
        d = self.df.get(token, 0)
        return math.log(1.0 + self.n / d) if d else 0.0


def attribute(
    query_tokens: frozenset[str],
    snippet_tokens: list[tuple[frozenset[str], frozenset[str]]],
    idf: Callable[[str], float],
    min_coverage: float = 0.5,
) -> list[tuple[int, float, float]]:
    """The best-matching snippets of one chunk for a query: (index, overlap, coverage) (pure).

    ``snippet_tokens`` holds, per snippet, (its text's tokens, its section heading's tokens).
    *Coverage* is the idf-weighted share of the query's known words a snippet holds, a word only in
    its section heading counting half (words no note contains are left out: no line can hold them);
    a snippet below ``min_coverage`` is not what the
    query was about. Among the others the *overlap* decides: a shared word weighs 1/(snippets of the
    chunk holding it), half that when only the section heading holds it."""
    weights = {t: idf(t) for t in query_tokens}
    total = sum(weights.values())
    if total <= 0:
        return []
    df = Counter(t for text, head in snippet_tokens for t in (text | head) & query_tokens)
    scored = []
    for i, (text, head) in enumerate(snippet_tokens):
        shared = (text | head) & query_tokens
        cov = (
            sum(weights[t] for t in text & query_tokens)
            + 0.5 * sum(weights[t] for t in (head - text) & query_tokens)
        ) / total
        if not shared or cov < min_coverage:
            continue
        overlap = sum(1.0 / df[t] for t in text & query_tokens) + sum(
            0.5 / df[t] for t in (head - text) & query_tokens
        )
        scored.append((i, overlap, cov))
    best = max((o for _, o, _ in scored), default=0.0)
    return [(i, o, c) for i, o, c in scored if o >= best - 1e-9]


def hand_over(
    credit: Credit,
    replaced_by: dict[str, str],
    occurrences: dict[str, list[Occurrence]],
    chunks: set[tuple[str, int, int]],
    reader: DailyReader,
) -> Credit:
    """A credit for a line REM found corrected goes to the correction when the same search
    returned the chunk holding it: the person asked about the thing, and the answer changed."""
    target = replaced_by.get(credit.key)
    if target is None:
        return credit
    for o in occurrences.get(target, ()):
        if not any(p == o.path and s <= o.end_line and o.start_line <= e for p, s, e in chunks):
            continue
        for snippet in reader.snippets(o.path) or []:
            if snippet.key == o.snippet_key:
                return Credit(credit.event, snippet, target, credit.overlap, credit.coverage)
    return credit


@dataclass(frozen=True)
class Credit:
    event: RecallEvent
    snippet: Snippet
    key: str  # the candidate key the snippet resolves to (its own key when not staged yet)
    overlap: float
    coverage: float
    corroborated: bool = False  # credited with another statement of its fact (:func:`corroborate`)


def credit_search(
    credits: list[Credit], *, sibling: float, relative: float, replaced_by: dict[str, str]
) -> list[Credit]:
    """The credits of one search (one query at one instant, over all the chunks it returned).

    - a line credited through several chunks or copies counts once;
    - a line REM found corrected gives its credit to the correction when the search returned both;
    - a line covering far fewer of the query's words than the best line of the search (below
      ``relative`` x the best coverage) is an incidental match, not what was looked up, unless
      the search ranked it above every other line it names ("medical practice address" ranked
      "My GP: Dr. Novak, practice on ..." first; a Quillmark "new address" line covers the rarer
      word but ranked below it), or another statement of its fact came with it (:func:`corroborate`);
    - of two credited lines that say nearly the same thing (Jaccard >= ``sibling``: last week's
      plumber visit and today's), the newer one keeps the credit (then the one ranked higher)."""
    here = {c.key for c in credits}
    exempt = {replaced_by[c.key] for c in credits if replaced_by.get(c.key) in here}
    credits = [c for c in credits if replaced_by.get(c.key) not in here]
    best = max((c.coverage for c in credits), default=0.0)
    top = max((c.event.score for c in credits), default=0.0)
    # newest first: asked again, the latest note about a recurring kind of thing is the one meant
    ranked = sorted(
        credits, key=lambda c: (c.snippet.day or dt.date.min, c.event.score, c.overlap), reverse=True
    )
    # siblings first: the newest line of each cluster of near-identical lines speaks for it, and
    # gets the credit when any of them matched well enough (yesterday's umbrella note does not
    # collect today's umbrella search)
    heads: list[tuple[Credit, frozenset[str]]] = []
    passed: list[bool] = []
    for c in ranked:
        ok = c.coverage >= relative * best or c.key in exempt or c.event.score >= top or c.corroborated
        tokens = _similarity_tokens(c.snippet.text)
        for i, (h, t) in enumerate(heads):
            if c.key == h.key or jaccard(tokens, t) >= sibling:
                passed[i] = passed[i] or ok
                break
        else:
            heads.append((c, tokens))
            passed.append(ok)
    return [h for (h, _), ok in zip(heads, passed, strict=True) if ok]


_similarity_tokens = lru_cache(maxsize=200_000)(similarity_tokens)  # a line is compared in many searches


def attribution_tokens(snippet: Snippet) -> tuple[frozenset[str], frozenset[str]]:
    """(the line's own words, its section's words): the subject a line was written under counts
    as section, at half weight, like its heading."""
    section = snippet.heading.split(" > ")[-1] if snippet.heading else ""
    text = snippet.text
    if snippet.context and text.startswith(snippet.context + ": "):
        text = text[len(snippet.context) + 2 :]
        section = f"{section} {snippet.context}"
    return content_tokens(text), content_tokens(section)


# the kind of answer a question asks for ("which day ...", "what evening ...", "what time ..."):
# a line holding the word is not the answer ("Watched Perfect Days", "went to the fair in the evening")
_ANSWER_KINDS = frozenset(
    "day days evening evenings night nights morning mornings afternoon afternoons time times date dates "
    "week weeks weekday weekdays month months year years hour hours".split()
)
_ASKING = re.compile(r"\b(?:which|what|whichever)\s+([^\W\d_]+)", re.IGNORECASE)


def asked_tokens(query: str) -> frozenset[str]:
    """The content tokens a query's answer should share: its own, less the kind of answer it asks
    for ("which *day* is our turn in the basement": basement, turn)."""
    tokens = content_tokens(query)
    kinds = {m.group(1).lower() for m in _ASKING.finditer(query)} & _ANSWER_KINDS
    return tokens - content_tokens(" ".join(kinds)) if kinds else tokens


def credits_by_search(
    groups: dict[EventGroup, list[RecallEvent]],
    pool: CandidatePool,
    reader: DailyReader,
    cfg: dict[str, Any],
    report: LightReport,
) -> tuple[dict[SearchId, list[Credit]], dict[SearchId, list[Credit]]]:
    """For each group, the snippets of its lines that the query names (IDF-weighted coverage over
    the staged vocabulary), or the one line a strong hit pointed at; collected per search. Also
    returns, per search, the single lines it returned at ``attribution_min_score_corroborated`` or
    above but credited by no rule (for :func:`corroborate`)."""
    for rel in sorted({rel for rel, *_ in groups}):
        reader.snippets(rel)
    vocab = Vocabulary()
    for snippets in reader.cache.values():
        for s in snippets or []:
            vocab.add_text(s.text, s.heading)
    for c in pool.candidates.values():
        vocab.add_text(c.text, c.heading)
    query_tokens: dict[str, frozenset[str]] = {}
    floor = cfg["attribution_min_score_without_overlap"]
    rel_floor = cfg["attribution_min_score_line"]
    rel_share = cfg["attribution_relative_score"]
    top_floor = cfg["attribution_min_score_top"]
    best_of_search: dict[tuple[str, float], float] = {}
    for evs in groups.values():
        for e in evs:
            search = (e.query_hash, e.ts)
            best_of_search[search] = max(best_of_search.get(search, 0.0), e.score)
    searches: dict[tuple[str, float], list[Credit]] = defaultdict(list)
    # per search and daily: its best line sharing no word with the query
    paraphrased: dict[tuple[str, float, str], Credit] = {}
    # per search: the lines it returned too weakly to credit alone (see :func:`corroborate`)
    weak_floor = cfg["attribution_min_score_corroborated"]
    weak: dict[tuple[str, float], list[Credit]] = defaultdict(list)
    for (rel, start, end, qhash), evs in groups.items():
        snippets = reader.snippets(rel)
        idx = [i for i, s in enumerate(snippets or []) if s.overlaps(start, end)]
        if not snippets or not idx:
            report.events_unattributed += len(evs)
            continue
        all_tokens = reader.snippet_tokens(rel)
        qt = query_tokens.get(qhash)
        if qt is None:
            qt = query_tokens[qhash] = asked_tokens(evs[0].query)
        winners = attribute(qt, [all_tokens[i] for i in idx], vocab.idf, cfg["attribution_min_coverage"])
        found = [(snippets[idx[i]], overlap, cov) for i, overlap, cov in winners]
        if not found and len(idx) == 1:
            # the search pointed at this one line: credit it when the hit was strong on its own;
            # else when it was among the strongest of its search (a paraphrase shares no word
            # with the note) or the first of a deliberate search (the gate searches before every
            # reply, and its weak first hits are as often about nothing in memory), and was the
            # strongest such line of its file (a line's score carries its chunk's, so the
            # neighbours of a paraphrased hit score high too: "who is my physician" found "My GP:
            # Dr. Keller" and, one line below it, "Left my umbrella at ...")
            snippet = snippets[idx[0]]
            key = pool.lookup(snippet) or snippet.key
            for e in evs:
                credit = Credit(e, snippet, key, 0.0, 0.0)
                best_score = best_of_search[(qhash, e.ts)]
                if e.score >= floor:
                    searches[(qhash, e.ts)].append(credit)
                elif (e.score >= rel_floor and e.score >= rel_share * best_score) or (
                    e.score >= top_floor and e.score >= best_score and e.source != "gate"
                ):
                    best = paraphrased.get((qhash, e.ts, rel))
                    if best is None or e.score > best.event.score:
                        paraphrased[(qhash, e.ts, rel)] = credit
                elif e.score >= weak_floor:
                    weak[(qhash, e.ts)].append(credit)
            continue
        if not found:
            report.events_unattributed += len(evs)
            continue
        for snippet, overlap, cov in found:
            key = pool.lookup(snippet) or snippet.key
            for ev in evs:
                searches[(qhash, ev.ts)].append(Credit(ev, snippet, key, overlap, cov))
    for (qhash, ts, _rel), credit in paraphrased.items():
        searches[(qhash, ts)].append(credit)
    return searches, weak


def corroborate(
    weak: dict[SearchId, list[Credit]],
    pool: CandidatePool,
    cosine_of: Callable[[dict[str, str]], Callable[[str, str], float | None] | None],
    cfg: dict[str, Any],
) -> dict[SearchId, list[Credit]]:
    """The weak lines of each search that another weak line of the same search, written in another
    daily, states as the same fact (:func:`facts.pair_strength`, the test fact grouping joins lines
    by). One line returned at 0.28 is as often an incidental neighbour as the answer; two
    statements of one fact returned together are the search finding that fact ("how to contact
    the owner of the apartment" returned "Landlord is Pieter Brandt; reach him on WhatsApp" and
    "Flat: Pieter Brandt owns it; WhatsApp only" at 0.28 and 0.26 under a rent line sharing the
    word 'apartment'). A line said once, as chit-chat is, has no second statement to corroborate
    it. The two must hold the same words of the query (none, for a paraphrase): "umbrella at the
    café" returned "Left my umbrella at Bonanza" for its word and "Coffee at Bonanza; the barista
    remembered my order" for the café; alike as they are, the second is no second statement of
    what was asked. ``cosine_of`` gives the embedding cosine between these lines by key (None:
    lexical pair test); it is called (and the embedder made) only when a search has weak lines
    from two dailies."""
    pending = {s: cs for s, cs in weak.items() if len({c.snippet.path for c in cs}) >= 2}
    if not pending:
        return {}
    texts = {c.key: c.snippet.text for cs in pending.values() for c in cs}
    names = names_seen([*(c.text for c in pool.candidates.values()), *texts.values()])
    views = {k: fact_view(k, t, (), names) for k, t in texts.items()}
    cosine = cosine_of(texts)
    grouping = GroupingConfig.from_config(cfg)
    out: dict[SearchId, list[Credit]] = {}
    for search, credits in pending.items():
        asked = asked_tokens(credits[0].event.query)
        words = [frozenset.union(*attribution_tokens(c.snippet)) & asked for c in credits]
        joined: set[int] = set()
        for i, a in enumerate(credits):
            for j in range(i + 1, len(credits)):
                b = credits[j]
                if a.snippet.path == b.snippet.path or a.key == b.key:
                    continue  # two lines of one daily are two facts
                if words[i] != words[j]:
                    continue  # found for different reasons: the umbrella note and a coffee at its café
                ka, kb = sorted((a.key, b.key))
                cos = cosine(ka, kb) if cosine is not None else None
                if pair_strength(views[ka], views[kb], cos, grouping) is not None:
                    joined |= {i, j}
        if joined:
            out[search] = [replace(credits[i], corroborated=True) for i in sorted(joined)]
    return out


def dated_index(pool: CandidatePool, threshold: float) -> dict[str, NearDuplicateIndex]:
    """The pool's dated candidates (lines of dailies), indexed per day for :func:`newest_sibling`
    (a credit looks only among the lines of its search's day: one index over a year of lines made
    a full dream's light phase 2.5 times slower)."""
    by_day: dict[str, NearDuplicateIndex] = {}
    for key, c in pool.candidates.items():
        if c.day and c.status != "superseded":
            by_day.setdefault(c.day, NearDuplicateIndex(threshold)).add(key, _similarity_tokens(c.text))
    return by_day


def newest_sibling(by_day: dict[str, NearDuplicateIndex], credit: Credit) -> str | None:
    """The candidate a credit goes to instead of its line: a line that says nearly the same thing
    (Jaccard >= ``sibling_jaccard``) written on the day of the search, after the credited one.
    Asked "umbrella at the café" on the day a new umbrella note says "Left my umbrella at
    Bonanza", the search ranked the old "... at the corner café" note first (it holds the word
    'café') and today's not at all: the person was asking about today's umbrella, and the old
    note must not collect a recall for every later umbrella. (Handing credits to the newest
    sibling of any later day instead gathered a month of "Coffee at ...; the barista remembered
    my order" recalls on the last coffee line, and promoted it.)"""
    if credit.snippet.day is None:
        return None
    written, searched = credit.snippet.day.isoformat(), credit.event.day
    index = by_day.get(searched)
    if index is None or written >= searched:
        return None
    same_day = [
        key for key, _sim in index.find_all(_similarity_tokens(credit.snippet.text)) if key != credit.key
    ]
    return max(same_day, default=None)


def apply_credits(
    searches: dict[SearchId, list[Credit]],
    groups: dict[EventGroup, list[RecallEvent]],
    pool: CandidatePool,
    reader: DailyReader,
    cfg: dict[str, Any],
    now_ts: float,
    run_id: str,
    report: LightReport,
) -> set[str]:
    """Each search's credits, handed over to the candidates that replaced superseded ones and
    thinned to one per fact (:func:`credit_search`), become signals of the pool. Returns the
    candidate keys credited."""
    replaced_by = {
        k: c.superseded_by for k, c in pool.candidates.items() if c.status == "superseded" and c.superseded_by
    }
    touched: set[str] = set()
    returned: dict[tuple[str, float], set[tuple[str, int, int]]] = defaultdict(set)
    for (rel, start, end, qhash), evs in groups.items():
        for ev in evs:
            returned[(qhash, ev.ts)].add((rel, start, end))
    occ = pool.occurrence_index() if replaced_by else {}
    attributed: set[int] = set()
    siblings: dict[str, NearDuplicateIndex] | None = None
    for search_id, found_in_search in searches.items():
        if replaced_by:
            found_in_search = [
                hand_over(c, replaced_by, occ, returned[search_id], reader) for c in found_in_search
            ]
        credits = credit_search(
            found_in_search,
            sibling=cfg["sibling_jaccard"],
            relative=cfg["search_relative_overlap"],
            replaced_by=replaced_by,
        )
        report.credits_dropped_in_search += len(found_in_search) - len(credits)
        for c in credits:
            if siblings is None:
                siblings = dated_index(pool, cfg["sibling_jaccard"])
            key = newest_sibling(siblings, c) or pool.resolve(c.snippet, now_ts, run_id)
            touched.add(key)
            ev = c.event
            attributed.add(ev.id)
            pool.new_signals[(ev.id, key)] = Signal(
                ev.id, key, ev.ts, ev.day, ev.query_hash, ev.score, ev.source, c.overlap
            )
    report.events_attributed = len(attributed)
    return touched
