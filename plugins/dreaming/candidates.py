"""Light phase: stage snippets from recent dailies and from recall events, attribute each recall
to the snippet its query matched, de-duplicate near-identical snippets, record reinforcement.

State lives in a :class:`CandidatePool` loaded from the dreaming tables; phases change it in
memory and the deep phase saves it in one transaction (a dry run never saves).

Attribution: a recall event names a chunk (path, lines) and the query that found it. Inside the
chunk, each snippet is scored by the query tokens it shares, each weighted by 1/(number of the
chunk's snippets holding it), so words every line shares (the section heading) count little. The
best snippet(s) get the credit; with no shared token, a chunk holding a single snippet is
credited only when the retrieval score is at least ``attribution_min_score_without_overlap``.
A one-off line sharing a chunk with a durable fact therefore gets no credit for the fact's
recalls. Events are grouped by (chunk, query) so each group is attributed once.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, NamedTuple

from lifelong.contracts import RecallEvent, RecallStore
from lifelong.errors import LifelongError
from lifelong.privacy import is_private, is_private_text
from lifelong.workspace import daily_date

from .facts import GroupingConfig, fact_cosine, fact_view, names_seen, pair_strength
from .linemap import LineMaps, line_hashes
from .snippets import (
    ParseStats,
    Snippet,
    content_tokens,
    jaccard,
    parse_snippets,
    similarity_tokens,
    text_key,
)

STATUSES = ("staged", "promoted", "dropped", "blocked", "evicted", "superseded", "expired")
REVIVABLE = ("dropped", "expired")


@dataclass
class Candidate:
    key: str
    text: str
    heading: str
    path: str
    start_line: int
    end_line: int
    day: str
    first_seen: float
    light_hits: int = 0
    light_last: float | None = None
    rem_hits: int = 0
    rem_last: float | None = None
    status: str = "staged"
    status_run: str | None = None
    status_reason: str | None = None
    superseded_by: str | None = None
    last_score: float | None = None
    components: str | None = None
    is_new: bool = False
    dirty: bool = False

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"

    def row(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "key text heading path start_line end_line day first_seen light_hits light_last rem_hits "
                "rem_last status status_run status_reason superseded_by last_score components"
            ).split()
        }


@dataclass
class Occurrence:
    snippet_key: str
    path: str
    key: str
    start_line: int
    end_line: int
    day: str
    text: str


class StatusTransition(NamedTuple):
    """A candidate's status change, as ``dream_status_log`` records it."""

    key: str
    old_status: str | None
    old_run: str | None
    old_reason: str | None
    new_status: str


@dataclass(frozen=True)
class Signal:
    event_id: int
    key: str
    ts: float
    day: str
    query_hash: str
    score: float
    source: str
    overlap: float


class NearDuplicateIndex:
    """Find an indexed token set with Jaccard >= threshold, by prefix filtering: two sets that
    similar must share a token among the first |x| - ceil(t·|x|) + 1 of a fixed token order."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.sets: dict[str, frozenset[str]] = {}
        self.postings: dict[str, list[str]] = defaultdict(list)

    def _prefix(self, tokens: frozenset[str]) -> list[str]:
        ordered = sorted(tokens)
        n = len(ordered)
        return ordered[: n - math.ceil(self.threshold * n) + 1]

    def add(self, key: str, tokens: frozenset[str]) -> None:
        if not tokens or key in self.sets:
            return
        self.sets[key] = tokens
        for t in self._prefix(tokens):
            self.postings[t].append(key)

    def find_all(self, tokens: frozenset[str]) -> list[tuple[str, float]]:
        """Every indexed set with Jaccard >= threshold: (key, similarity)."""
        if not tokens:
            return []
        n = len(tokens)
        found: list[tuple[str, float]] = []
        seen: set[str] = set()
        for t in self._prefix(tokens):
            for key in self.postings.get(t, ()):
                if key in seen:
                    continue
                seen.add(key)
                other = self.sets[key]
                if not (self.threshold * n <= len(other) <= n / self.threshold):
                    continue
                sim = jaccard(tokens, other)
                if sim >= self.threshold:
                    found.append((key, sim))
        return found

    def find(self, tokens: frozenset[str]) -> str | None:
        """The most similar indexed set (the smallest key among equals)."""
        found = self.find_all(tokens)
        return min(found, key=lambda f: (-f[1], f[0]))[0] if found else None


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


class CandidatePool:
    """Candidates, their occurrences in dailies and their recall signals (in memory)."""

    def __init__(self, dedupe_threshold: float):
        self.candidates: dict[str, Candidate] = {}
        self.occurrences: dict[tuple[str, str], Occurrence] = {}
        self.alias: dict[str, str] = {}
        self.new_signals: dict[tuple[int, str], Signal] = {}
        self.new_occurrences: set[tuple[str, str]] = set()
        self.status_changes: list[StatusTransition] = []
        self.index = NearDuplicateIndex(dedupe_threshold)
        self.merged = 0

    # loading and saving ---------------------------------------------------------------------
    @classmethod
    def load(cls, store: Any, dedupe_threshold: float) -> CandidatePool:
        pool = cls(dedupe_threshold)
        cur = store.conn.execute(
            "SELECT key, text, heading, path, start_line, end_line, day, first_seen, light_hits, light_last,"
            " rem_hits, rem_last, status, status_run, status_reason, superseded_by, last_score, components"
            " FROM dream_candidates"
        )
        for row in cur:
            c = Candidate(*row)
            pool.candidates[c.key] = c
            pool.index.add(c.key, similarity_tokens(c.text))
        for row in store.conn.execute(
            "SELECT snippet_key, path, key, start_line, end_line, day, text FROM dream_occurrences"
        ):
            occ = Occurrence(*row)
            pool.occurrences[(occ.snippet_key, occ.path)] = occ
            pool.alias[occ.snippet_key] = occ.key
        return pool

    def save(
        self,
        store: Any,
        run_id: str,
        *,
        meta: dict[str, str] | None = None,
        item_hashes: dict[str, str] | None = None,
    ) -> None:
        """Write the pool's changes, the ``meta`` entries (the recall-event watermark) and the
        hashes of the items the run wrote to MEMORY.md, in one transaction: a crash keeps all of
        them or none."""
        with store.write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO dream_meta(key, value) VALUES (?, ?)", list((meta or {}).items())
            )
            conn.executemany(
                "INSERT OR REPLACE INTO dream_items(key, sha, run_id) VALUES (?, ?, ?)",
                [(k, h, run_id) for k, h in (item_hashes or {}).items()],
            )
            rows = [c.row() for c in self.candidates.values() if c.dirty or c.is_new]
            if rows:
                cols = list(rows[0])
                conn.executemany(
                    f"INSERT OR REPLACE INTO dream_candidates({', '.join(cols)}) "
                    f"VALUES ({', '.join('?' * len(cols))})",
                    [tuple(r[c] for c in cols) for r in rows],
                )
            occs = [self.occurrences[k] for k in self.new_occurrences if k in self.occurrences]
            conn.executemany(
                "INSERT OR REPLACE INTO dream_occurrences(snippet_key, path, key, start_line, end_line, day, text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(o.snippet_key, o.path, o.key, o.start_line, o.end_line, o.day, o.text) for o in occs],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO dream_signals(event_id, key, ts, day, query_hash, score, source, overlap)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (s.event_id, s.key, s.ts, s.day, s.query_hash, s.score, s.source, s.overlap)
                    for s in self.new_signals.values()
                ],
            )
            base = conn.execute(
                "SELECT coalesce(max(seq), -1) + 1 FROM dream_status_log WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
            conn.executemany(
                "INSERT INTO dream_status_log(run_id, seq, key, old_status, old_status_run, old_status_reason,"
                " new_status) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(run_id, base + i, *change) for i, change in enumerate(self.status_changes)],
            )

    # changes ----------------------------------------------------------------------------------
    def set_status(self, key: str, status: str, run_id: str, reason: str | None = None) -> None:
        c = self.candidates[key]
        if c.status == status and c.status_reason == reason:
            return
        if not c.is_new:
            self.status_changes.append(StatusTransition(key, c.status, c.status_run, c.status_reason, status))
        c.status, c.status_run, c.status_reason = status, run_id, reason
        c.dirty = True

    def lookup(self, snippet: Snippet) -> str | None:
        """The candidate key a snippet belongs to, without staging anything."""
        key = self.alias.get(snippet.key)
        if key is not None and key in self.candidates:
            return key
        if snippet.key in self.candidates:
            return snippet.key
        return self.index.find(similarity_tokens(snippet.text))

    def resolve(self, snippet: Snippet, now_ts: float, run_id: str) -> str:
        """The candidate key for a live snippet, staging a new candidate when needed."""
        sk = snippet.key
        day = snippet.day.isoformat() if snippet.day else ""
        key = self.alias.get(sk)
        if key is None or key not in self.candidates:
            if sk in self.candidates:
                key = sk
            else:
                tokens = similarity_tokens(snippet.text)
                key = self.index.find(tokens)
                if key is not None:
                    self.merged += 1
                else:
                    key = sk
                    self.candidates[key] = Candidate(
                        key,
                        snippet.text,
                        snippet.heading,
                        snippet.path,
                        snippet.start_line,
                        snippet.end_line,
                        day,
                        now_ts,
                        is_new=True,
                    )
                    self.index.add(key, tokens)
                    self.status_changes.append(StatusTransition(key, None, None, None, "staged"))
        occ_id = (sk, snippet.path)
        occ = self.occurrences.get(occ_id)
        if occ is None or (occ.start_line, occ.end_line, occ.key) != (
            snippet.start_line,
            snippet.end_line,
            key,
        ):
            self.occurrences[occ_id] = Occurrence(
                sk, snippet.path, key, snippet.start_line, snippet.end_line, day, snippet.text
            )
            self.new_occurrences.add(occ_id)
        self.alias[sk] = key
        c = self.candidates[key]
        if day >= c.day or c.is_new:
            if (c.text, c.path, c.start_line, c.end_line) != (
                snippet.text,
                snippet.path,
                snippet.start_line,
                snippet.end_line,
            ):
                c.text, c.heading, c.path = snippet.text, snippet.heading, snippet.path
                c.start_line, c.end_line = snippet.start_line, snippet.end_line
                c.dirty = True
        if day and day < c.day:
            c.day, c.dirty = day, True
        if c.status in REVIVABLE:
            self.set_status(key, "staged", run_id, f"seen again in {snippet.path}")
        return key

    def occurrences_of(self, key: str) -> list[Occurrence]:
        return [o for o in self.occurrences.values() if o.key == key]

    def occurrence_index(self) -> dict[str, list[Occurrence]]:
        out: dict[str, list[Occurrence]] = defaultdict(list)
        for o in self.occurrences.values():
            out[o.key].append(o)
        return out


# ---------------------------------------------------------------------------------------------
# the phase


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


class DailyReader:
    """Parses dailies once per run (the parse is reused by REM and deep's live re-read). A private
    note (``lifelong.privacy``: under memory/private/ or frontmatter ``privacy: private``) has no
    snippets: nothing in it is staged, credited, themed or promoted."""

    def __init__(self, ctx: Any, cfg: dict[str, Any]):
        self.ctx = ctx
        self.cfg = cfg
        self.cache: dict[str, list[Snippet] | None] = {}
        self.tokens: dict[str, list[tuple[frozenset[str], frozenset[str]]]] = {}
        self.stats = ParseStats()
        self.errors: dict[str, str] = {}
        self.private: dict[str, bool] = {}  # rel -> private note, as last read

    def is_private(self, rel: str) -> bool:
        """Whether the note at ``rel`` is private now (read once per run; an unreadable or missing
        file is not: it has no snippets anyway)."""
        if rel not in self.private:
            if is_private(rel):
                self.private[rel] = True
            else:
                try:
                    self.private[rel] = is_private_text(rel, self.ctx.workspace.read_text(rel))
                except (LifelongError, OSError):
                    self.private[rel] = False
        return self.private[rel]

    def snippets(self, rel: str, *, fresh: bool = False) -> list[Snippet] | None:
        if fresh or rel not in self.cache:
            try:
                text = self.ctx.workspace.read_text(rel)
            except LifelongError as exc:
                self.errors[rel] = str(exc)
                self.cache[rel] = None
                return None
            except OSError as exc:
                self.errors[rel] = f"{type(exc).__name__}: {exc}"
                self.cache[rel] = None
                return None
            self.private[rel] = is_private_text(rel, text)
            if self.private[rel]:
                self.cache[rel] = []
                self.tokens.pop(rel, None)
                return self.cache[rel]
            self.cache[rel] = parse_snippets(
                text,
                rel,
                min_chars=self.cfg["min_snippet_chars"],
                max_chars=self.cfg["max_snippet_chars"],
                stats=self.stats if not fresh else ParseStats(),
            )
            self.tokens.pop(rel, None)
        return self.cache[rel]

    def snippet_tokens(self, rel: str) -> list[tuple[frozenset[str], frozenset[str]]]:
        if rel not in self.tokens:
            self.tokens[rel] = [attribution_tokens(s) for s in self.snippets(rel) or []]
        return self.tokens[rel]


def shared_candidates(pool: CandidatePool, reader: DailyReader) -> dict[str, Candidate]:
    """The pool without candidates only ever written in notes that are private now (one marked
    ``privacy: private`` after it was staged): those are never scored, themed or reported."""
    occ = pool.occurrence_index()
    return {
        k: c
        for k, c in pool.candidates.items()
        if not all(reader.is_private(p) for p in {o.path for o in occ.get(k, [])} or {c.path})
    }


def list_dailies(ws: Any, since: dt.date | None, until: dt.date) -> list[str]:
    """Daily notes (memory/YYYY-MM-DD*.md, any depth under memory/) dated in [since, until]."""
    out = []
    if not ws.memory_dir.is_dir():
        return out
    for path in sorted(ws.memory_dir.rglob("*.md")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = ws.relpath(path)
        if any(part.startswith(".") for part in rel.split("/")) or rel.startswith("memory/dreaming/"):
            continue
        day = daily_date(rel)
        if day is None or day > until or (since is not None and day < since):
            continue
        out.append(rel)
    return out


def read_events(recall: RecallStore | None, after_ts: float, until_ts: float) -> list[RecallEvent]:
    """The searches recall recorded in (after_ts, until_ts] that returned lines of memory/ (none
    without a recall index)."""
    if recall is None:
        return []
    return recall.events(after=after_ts, until=until_ts, path_prefix="memory/")


def revived(changes: list[StatusTransition]) -> int:
    """How many dropped or expired candidates came back to ``staged``."""
    return sum(1 for c in changes if c.new_status == "staged" and c.old_status in REVIVABLE)


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


EventGroup = tuple[str, int, int, str]  # (daily, start line, end line, query hash)
SearchId = tuple[str, float]  # (query hash, time): one search


def stage_dailies(
    ctx: Any, run: Any, pool: CandidatePool, reader: DailyReader, report: LightReport
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
    ctx: Any, events: list[RecallEvent], today: dt.date, sources: set[str], report: LightReport
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


def light(ctx: Any, run: Any) -> LightResult:
    """Stage the snippets of recent dailies and attribute the recall events since the last run
    (the run's ``event_watermark``) to them: stage, locate the events' lines, credit each
    search's snippets, apply the credits, and give touched candidates their nightly boost."""
    cfg = run.config
    now = run.now
    now_ts = now.timestamp()
    store = ctx.store
    pool = CandidatePool.load(store, cfg["dedupe_jaccard"])
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
