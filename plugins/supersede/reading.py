"""What search returns of superseded facts (``retrieval_post``) and keeping the index's chunk
validity in step after a sync (``on_files_changed``).

The recall index keeps validity per chunk, and a chunk holds many facts; the gate closes a
chunk only when every fact in it is closed (:func:`ledger.sync_chunks`). The rest is done per
fact here: a search result (one list item or paragraph) whose every fact is closed

- mode ``current``: is removed (a superseded fact is never returned);
- mode ``valid-at``: is removed when none of its facts held at ``as_of``;
- modes ``valid-at`` and ``all``: what is returned and superseded has its score multiplied by
  ``superseded_weight`` (down-weighted, not zeroed) and carries ``superseded_by``.

The candidate list is changed in place and nothing is returned, so later ``retrieval_post``
plugins (task focus) see the same list."""

from __future__ import annotations

import datetime as dt
import re
import secrets
from typing import TYPE_CHECKING, Any

from lifelong.contracts import Candidate, FileChanges, PluginContext, SearchRequest
from lifelong.facts import differing_values, restates_with_new_value, typed_values
from lifelong.markdown import stated_date, strip_bookkeeping
from lifelong.update_model import LIKELY, update_probabilities

from . import ledger

if TYPE_CHECKING:
    from lifelong.contracts import Embedder
    from lifelong.journal import Journal

PLUGIN = "supersede"


def _fact_rows(conn: Any, ids: list[str]) -> dict[str, tuple[float | None, float | None, str | None]]:
    if not ids:
        return {}
    out: dict[str, tuple[float | None, float | None, str | None]] = {}
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        q = ",".join("?" * len(part))
        for fid, start, end, by in conn.execute(
            f"SELECT id, validity_start, validity_end, superseded_by FROM supersede_facts WHERE id IN ({q})",
            part,
        ):
            out[fid] = (start, end, by)
    return out


def fact_ids(c: Candidate) -> list[str]:
    """The fact ids of a search result: one per content block. A one-line result (a list item, a
    short paragraph: most units) is one block without parsing."""
    text = c.text.strip()
    if "\n" not in text:
        return [] if not text or text.startswith("#") else [ledger.fact_id(c.path, text)]
    return [
        ledger.fact_id(c.path, body) for _, _, body in ledger.content_blocks(c.text, max(c.start_line, 1))
    ]


NEWEST_FIRST_POOL = 12  # how many of the best candidates are compared pair by pair
LEARNED_POOL = 4  # how many of those the learned update reader also reads (it embeds each)
# a newer line this close in score to an older one with another value of one kind leads (unmarked).
# 0.85 -> 0.7, full runs of the written months: the gate's note led with the current value for
# 64 -> 70 of 142 (months 1-9, facts promoted 144 -> 149) and 41 -> 43 of 112 (months-10 to -16;
# months-16, never tuned on, unchanged); update pairs' "leads new" 0.567 -> 0.575 (set 7), 0.618
# -> 0.647 (set 8), unchanged on sets 9 and 10; LoCoMo and BEAM unchanged. 0.5 lost on
# months-10 to -13 and -15 (gate alone rerun). 0.7 -> 0.6, once promoted MEMORY.md items took part
# (full runs): months 1-9 gate 71 -> 74 of 142, the search's first result 72 -> 73, facts 149 ->
# 152, changes 73 -> 74; held-out months 10-20 gate 72 -> 72 of 176, first result 85 -> 88, facts
# 120 -> 126, changes 51 -> 52 (items stating only an old value, unmarked, 70 -> 74); pairs-13
# "leads new" 0.617 -> 0.625; LoCoMo's gate and BEAM unchanged
RECENCY_BAND = 0.6


def names_value(asked: str, text: str) -> bool:
    """Whether the question (``asked``: lower case, letters and digits only) names one of the
    identifiers or numbers ``text`` states ("ERR LOCK 77" names "ERR_LOCK_77")."""
    return bool(asked) and any(
        shape in ("ident", "email", "number", "phone") and re.sub(r"[\W_]", "", value) in asked
        for shape, value in typed_values(text)
        if len(re.sub(r"[\W_]", "", value)) >= 2
    )


def stated_at(c: Candidate, tz: dt.tzinfo) -> float | None:
    """When a candidate's statement was made: its daily's day; for a line of MEMORY.md or the wiki
    (undated files), the newest daily it cites (:func:`lifelong.markdown.stated_date`), so a
    promoted "650 kr/bal" is compared with the later daily line that changes it; None for a line a
    person wrote there, or a result of several lines."""
    if c.source_date is not None and not c.evergreen:
        return c.source_date
    if not c.evergreen or "\n" in c.text.strip():
        return None
    try:
        day = dt.date.fromisoformat(stated_date(c.text) or "")
    except ValueError:  # none cited, or a hand-edited "src:memory/2026-13-40.md"
        return None
    return dt.datetime.combine(day, dt.time(), tz).timestamp()


def newest_first(
    candidates: list[Candidate],
    pool: int = NEWEST_FIRST_POOL,
    query: str = "",
    embedder: Embedder | None = None,
    tz: dt.tzinfo = dt.UTC,
) -> None:
    """Of two candidates from different days where the newer replaces what the older states
    (:func:`lifelong.facts.restates_with_new_value`, or the learned reader
    :mod:`lifelong.update_model` at probability :data:`~lifelong.update_model.LIKELY` or more,
    among the best :data:`LEARNED_POOL`, when ``embedder`` is the one it was trained with), the newer ranks just above the older, and each
    carries what it is: ``extra["replaces"]`` (the older's citation and day) on the newer,
    ``extra["earlier_than"]`` on the older. Nothing is hidden: both stay visible, newest first,
    with their dates. In place."""
    asked = re.sub(r"[\W_]", "", query.lower())  # the question, as a value is compared
    # the best ``pool`` candidates with a date, best first; a date is read only until they are found
    when: dict[int, float] = {}
    best: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: c.score, reverse=True):
        if len(best) == pool:
            break
        if (stated := stated_at(c, tz)) is not None:
            when[id(c)] = stated
            best.append(c)

    def at(c: Candidate) -> float:
        return when[id(c)]

    said = {id(c): strip_bookkeeping(c.text) for c in best}  # a copy's trailer is no value
    dated = [
        (older, newer)
        for older in sorted(best, key=at)
        for newer in best
        if newer is not older and at(newer) > at(older)
    ]
    # the learned reader embeds each text it reads (~10 ms a line): only the best LEARNED_POOL
    learned_pool = {id(c) for c in best[:LEARNED_POOL]}
    read = [(said[id(o)], said[id(n)]) for o, n in dated if id(o) in learned_pool and id(n) in learned_pool]
    learned = update_probabilities(embedder, read) if read else None
    for older, newer in dated:
        old_text, new_text = said[id(older)], said[id(newer)]
        if "earlier_than" in older.extra or names_value(asked, old_text):
            continue  # the question names the older line's value ("ERR_LOCK_77"): it is what is asked
        if not (
            restates_with_new_value(old_text, new_text)
            or (learned is not None and learned.get((old_text, new_text), 0.0) >= LIKELY)
        ):
            continue
        day = dt.datetime.fromtimestamp(at(newer), tz).date().isoformat()  # the day in the workspace
        older.extra = {**older.extra, "earlier_than": {"citation": newer.citation, "date": day}}
        newer.extra = {**newer.extra, "replaces": {"citation": older.citation}}
        if newer.score <= older.score:
            newer.score = older.score + 1e-6
            newer.hybrid = max(newer.hybrid, older.hybrid)
    # two lines nearly as relevant as each other, stating different values of one kind (a price,
    # a time, a phone number) and naming nobody different: the newer first, unmarked (both may be
    # true; if one replaced the other, the newer is the one that holds) — what a person reading
    # their notes does first, the newest matching line
    for older in sorted(best, key=at):
        for newer in best:
            if newer is older or at(newer) <= at(older):
                continue
            if newer.score > older.score or newer.score < RECENCY_BAND * older.score:
                continue
            if not differing_values(said[id(older)], said[id(newer)]):
                continue
            if names_value(asked, said[id(older)]):
                continue  # the question names the older line's value ("ERR_LOCK_77"): it stays first
            newer.score = older.score + 1e-6
            newer.hybrid = max(newer.hybrid, older.hybrid)


def filter_candidates(ctx: PluginContext, request: SearchRequest, candidates: list[Candidate]) -> None:
    conn = ctx.store.conn
    if not candidates or not ledger.has_table(conn, "supersede_facts"):
        return
    cfg = ctx.config(PLUGIN)
    weight = float(cfg["superseded_weight"])
    now = ctx.now().timestamp()
    at = request.as_of.timestamp() if request.mode == "valid-at" and request.as_of else now
    if (
        conn.execute("SELECT 1 FROM supersede_facts WHERE validity_end IS NOT NULL LIMIT 1").fetchone()
        is None
    ):
        return  # nothing was ever closed: nothing to hide or damp
    per = [fact_ids(c) for c in candidates]
    rows = _fact_rows(conn, sorted({i for ids in per for i in ids}))
    keep: list[Candidate] = []
    for c, ids in zip(candidates, per, strict=True):
        facts = [rows[i] for i in ids if i in rows]
        every = bool(ids) and len(facts) == len(set(ids))
        closed = [f for f in facts if f[1] is not None and f[1] <= now]
        if request.mode == "current" and every and len(closed) == len(facts):
            continue
        if request.mode == "valid-at" and every:
            held = [f for f in facts if (f[0] is None or f[0] <= at) and (f[1] is None or f[1] > at)]
            if not held:
                continue
        if closed and c.superseded_by is None:
            c.superseded_by = closed[-1][2]
            c.validity_end = closed[-1][1]
        superseded = (every and len(closed) == len(facts)) or (
            c.validity_end is not None and c.validity_end <= now
        )
        if request.mode in ("valid-at", "all") and superseded:
            c.score *= weight
            c.extra = {**c.extra, "superseded": True}
        keep.append(c)
    candidates[:] = keep


def after_sync(ctx: PluginContext, changes: FileChanges) -> None:
    """Fill in the line numbers of facts written since (a candidate's lines are unknown when it is
    decided), and close the chunks of changed files that hold only closed facts (a re-indexed
    chunk, or a note that arrived already superseded)."""
    conn = ctx.store.conn
    if not ledger.has_table(conn, "supersede_facts"):
        return
    paths = [*changes.new, *changes.modified]
    if not paths:
        return
    with ctx.store.lock:
        q = ",".join("?" * len(paths))
        pending = {
            (r[0], r[1])
            for r in conn.execute(
                f"SELECT id, path FROM supersede_facts WHERE path IN ({q}) AND start_line IS NULL", paths
            )
        }
        for path in sorted({p for _, p in pending}):
            try:
                text = ctx.workspace.read_text(path)
            except Exception:  # an unreadable file keeps its facts without line numbers
                continue
            for s, e, body in ledger.content_blocks(text):
                fid = ledger.fact_id(path, body)
                if (fid, path) in pending:
                    conn.execute(
                        "UPDATE supersede_facts SET start_line = ?, end_line = ? WHERE id = ? AND start_line IS NULL",
                        (s, e, fid),
                    )
        ledger.sync_chunks(conn, ctx.recall, paths)
        conn.commit()
    strike_pending(ctx)


def strike_pending(ctx: PluginContext) -> int:
    """Strike the MEMORY.md items whose marking waited for the write lock (a caller deciding
    under it: the flush). Returns how many were struck."""
    conn = ctx.store.conn
    pending = conn.execute(
        "SELECT f.id, f.path, f.text, f.start_line, e.detail FROM supersede_events e"
        " JOIN supersede_facts f ON f.id = e.fact_id WHERE e.event = 'strike-pending'"
        " AND NOT EXISTS (SELECT 1 FROM supersede_events s WHERE s.fact_id = e.fact_id"
        " AND s.event IN ('struck', 'strike-skipped') AND s.id > e.id)"
    ).fetchall()
    from lifelong.journal import Journal  # only when a struck item is written (a search never is)

    done = 0
    for fid, path, text, line, pointer in pending:
        now = ctx.now()
        run_id = f"supersede-{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        journal = Journal(ctx.workspace, run_id, plugin=PLUGIN)
        result: list[bool] = []

        def mark(
            out: list[bool] = result, j: Journal = journal, row: tuple = (path, text, line, pointer)
        ) -> None:
            out.append(ledger.strike_memory_item(ctx.workspace, row[0], row[1], row[2], row[3], j))

        if not ledger.with_write_lock(ctx.workspace, mark):
            continue
        with ctx.store.lock:
            event = "struck" if result and result[0] else "strike-skipped"
            ledger.event(conn, now.timestamp(), fid, event, run_id, pointer)
            conn.commit()
        done += bool(result and result[0])
    return done
