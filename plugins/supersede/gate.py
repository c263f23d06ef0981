"""The gate on one durable write: find the related facts, compare, (optionally) ask the model
judge, decide (:mod:`.decide`), apply the decision in supersede mode (:mod:`.ledger`), log it.

Related facts come from three places: the ``existing`` list the caller passes (dreaming passes
MEMORY.md lines), the recall index (an FTS query on the candidate's words, current chunks only,
split into blocks so each list item or paragraph is one fact), and the gate's own fact table
(facts written through it that the index has not seen yet)."""

from __future__ import annotations

import datetime as dt
import re
import secrets
from typing import Any

from lifelong.contracts import ChunkFilter, RelatedFact, WriteCandidate, WriteDecision
from lifelong.facts import Statement, compare, extract, is_stale, relate
from lifelong.journal import Journal
from lifelong.text import content_words, stem
from lifelong.workspace import daily_date

from . import judge, ledger
from .decide import Fact, Match, Plan, plan, strength_of

PLUGIN = "supersede"
_SRC = re.compile(r"src:(\S+?)(?:#|\s|-->)")


def midnight(day: dt.date, tz: dt.tzinfo) -> float:
    return dt.datetime(day.year, day.month, day.day, tzinfo=tz).timestamp()


class Gate:
    """One decision's worth of context: the host context, config, clock and time zone."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self.ws = ctx.workspace
        self.cfg = ctx.config(PLUGIN)
        self.now = ctx.now()
        self.tz = self.ws.timezone
        self.conn = ctx.store.conn
        self._lines: dict[str, list[str]] = {}

    # time and strength ------------------------------------------------------------------------
    def stated_time(self, statement: Statement, written: dt.date) -> float | None:
        """The date the text states, when it is not after the day it was written (a later note
        about an earlier event). A future date in a statement is its value (a launch date), not
        when it became true."""
        day = statement.event_date
        return midnight(day, self.tz) if day is not None and day <= written else None

    def candidate_time(self, cand: WriteCandidate, statement: Statement) -> float:
        today = self.now.date()
        stated = self.stated_time(statement, cand.written_on or today)
        if stated is not None:
            return stated
        if cand.event_date is not None and cand.event_date <= today:
            return midnight(cand.event_date, self.tz)
        if cand.written_on is not None and cand.written_on < today:
            return midnight(cand.written_on, self.tz)
        return self.now.timestamp()

    def file_lines(self, rel: str) -> list[str]:
        if rel not in self._lines:
            try:
                self._lines[rel] = self.ws.read_text(rel).split("\n")
            except Exception:  # a missing or unreadable file has no lines to read
                self._lines[rel] = []
        return self._lines[rel]

    def note_date(self, path: str, line: int | None, source_date: dt.date | None = None) -> dt.date | None:
        """The day a fact was written: its daily's date, a promoted item's ``src:`` daily, or
        the date the caller gave."""
        day = daily_date(path)
        if day is None and line:
            lines = self.file_lines(path)
            m = _SRC.search(lines[line - 1]) if 0 < line <= len(lines) else None
            day = daily_date(m.group(1)) if m else None
        return day or source_date

    def fact_strength(self, path: str, statement: Statement) -> int:
        source = "note" if daily_date(path) else ("wiki" if path.startswith("wiki/") else "dreaming")
        return strength_of(source, statement, self.cfg["source_strength"], self.cfg["default_strength"])

    # related facts ----------------------------------------------------------------------------
    def make_fact(
        self,
        text: str,
        path: str,
        start: int | None,
        end: int | None,
        *,
        chunk_id: int | None = None,
        key: str | None = None,
        similarity: float = 0.0,
        source_date: dt.date | None = None,
    ) -> tuple[Fact, Statement]:
        fid = ledger.fact_id(path, text)
        known = ledger.row(self.conn, fid)
        day = self.note_date(path, start, source_date)
        as_of = dt.datetime(day.year, day.month, day.day, 12, tzinfo=self.tz) if day else self.now
        statement = extract(ledger.clean(text), as_of)
        if known is not None:
            time, strength = known["event_time"], known["strength"]
        else:
            time = self.stated_time(statement, day or self.now.date())
            if time is None and day is not None:
                time = midnight(day, self.tz)
            strength = self.fact_strength(path, statement)
        fact = Fact(fid, text, path, start, end, chunk_id, key, time, strength, similarity)
        return fact, statement

    def index_facts(self, cand: WriteCandidate, words: list[str]) -> list[tuple[Fact, Statement]]:
        recall = self.ctx.recall
        if not words or recall is None:
            return []
        # stems as prefixes ("retro"* finds "retros", "migrat"* "migrated"): FTS5 does not stem
        query = " OR ".join(f'"{stem(w)}"*' if w.isascii() and len(stem(w)) >= 4 else f'"{w}"' for w in words)
        try:
            ids = recall.keyword_ids(query, int(self.cfg["max_related"]))
        except Exception as exc:  # an FTS syntax the query words produce: search the table only
            self.ctx.log(PLUGIN, f"index search skipped: {exc}")
            return []
        if not ids:
            return []
        # the wiki is compiled from these notes (its pages restate their claims, its reports
        # quote both sides of a contradiction): facts are the notes and MEMORY.md, never it
        current = ChunkFilter("current", self.now.timestamp(), "memory")
        out = []
        for chunk in recall.chunks(ids=ids, where=current):
            source_date = chunk.source_date
            day = dt.datetime.fromtimestamp(source_date, self.tz).date() if source_date else None
            for s, e, body in ledger.content_blocks(chunk.text, chunk.start_line):
                out.append(self.make_fact(body, chunk.path, s, e, chunk_id=chunk.id, source_date=day))
        return out

    def table_facts(self, subject: frozenset[str]) -> list[tuple[Fact, Statement]]:
        terms = sorted(subject)[:8]
        if not terms:
            return []
        where = " OR ".join("subject LIKE ?" for _ in terms)
        rows = self.conn.execute(
            f"SELECT text, path, start_line, end_line, key FROM supersede_facts WHERE validity_end IS NULL"
            f" AND ({where}) ORDER BY ingestion_time DESC LIMIT 200",
            [f"% {t} %" for t in terms],
        ).fetchall()
        return [self.make_fact(t, p, s, e, key=k) for t, p, s, e, k in rows]

    def related(
        self, cand: WriteCandidate, statement: Statement, existing: list[RelatedFact]
    ) -> list[tuple[Fact, Statement]]:
        found: dict[str, tuple[Fact, Statement]] = {}
        for r in existing:
            pair = self.make_fact(
                r.text,
                r.path,
                r.start_line,
                r.end_line,
                chunk_id=r.chunk_id,
                key=r.key,
                similarity=r.similarity,
                source_date=r.source_date,
            )
            found.setdefault(pair[0].id, pair)
        words = list(
            dict.fromkeys(w for w in content_words(f"{cand.text} {cand.subject or ''}") if '"' not in w)
        )
        for pair in self.index_facts(cand, words[:12]) + self.table_facts(statement.subject):
            found.setdefault(pair[0].id, pair)
        own = ledger.normalise(cand.text)
        closed = ledger.closed_facts(self.conn, list(found))
        out = []
        for fid, (fact, st) in found.items():
            if fid in closed or ledger.normalise(fact.text) == own:
                continue  # already historical, or the very text being written (its own source line)
            if (
                cand.path
                and fact.path == cand.path
                and cand.start_line is not None
                and fact.start_line is not None
            ):
                if fact.start_line <= (cand.end_line or cand.start_line) and cand.start_line <= (
                    fact.end_line or fact.start_line
                ):
                    continue
            out.append((fact, st))
        return out

    # comparing --------------------------------------------------------------------------------
    def matches(
        self, cand: WriteCandidate, statement: Statement, related: list[tuple[Fact, Statement]]
    ) -> list[Match]:
        model = judge.judge_model(self.cfg, self.ws.config)
        calls = int(self.cfg["judge_max_calls"])
        out: list[Match] = []
        cand_time = self.candidate_time(cand, statement)
        for fact, st in related:
            cmp = compare(st, statement)
            # how the later of the two bears on the earlier (the one fact model's comparison)
            newer_is_candidate = fact.time is None or fact.time <= cand_time
            relation = relate(fact.text, cand.text) if newer_is_candidate else relate(cand.text, fact.text)
            # an update in other words counts when the subjects are related, or it is a clear one
            update = relation.kind == "update" and (cmp.related or relation.confidence >= 0.75)
            verdict = (
                "conflict" if cmp.conflicting or update else ("compatible" if cmp.related else "unrelated")
            )
            match = Match(fact, cmp, verdict, relation=relation)
            ask = verdict == "conflict" or (
                cmp.related and cmp.similarity >= float(self.cfg["judge_min_similarity"])
            )
            if model and calls > 0 and ask:
                calls -= 1
                old_date = (
                    dt.datetime.fromtimestamp(fact.time, self.tz).date().isoformat()
                    if fact.time
                    else "unknown"
                )
                answer = judge.ask(
                    model,
                    self.cfg,
                    fact.text,
                    cand.text,
                    old_date,
                    self.now.date().isoformat(),
                    workspace=self.ws,
                )
                if answer is not None:
                    match = Match(fact, cmp, answer[0], "model", answer[1], relation=relation)
            if match.verdict != "unrelated" or cmp.related:
                out.append(match)
        return out

    # the decision -----------------------------------------------------------------------------
    def decide(self, cand: WriteCandidate, existing: list[RelatedFact]) -> WriteDecision:
        mode = self.cfg["mode"]
        statement = extract(cand.text, self.now, subject=cand.subject)
        if not statement.subject and not statement.values:
            return WriteDecision("allow", "nothing comparable in the text", source=PLUGIN)
        if self.cfg["sync_index"] and "memory_index" in self.ctx.host.tools:
            self.ctx.call_tool("memory_index")
        related = self.related(cand, statement, existing)
        matches = self.matches(cand, statement, related)
        today = self.now.date()
        expired = tuple(
            m.fact.id
            for m in matches
            if m.comparison.related and is_stale(extract(m.fact.text, self.now), today)
        )
        cand_time = self.candidate_time(cand, statement)
        strength = strength_of(
            cand.source, statement, self.cfg["source_strength"], self.cfg["default_strength"]
        )
        result = plan(
            statement,
            cand_time,
            strength,
            matches,
            mode,
            expired=expired,
            candidate_expired=is_stale(statement, today),
        )
        applied: dict[str, Any] = {}
        if mode == "supersede" and result.action != "block":
            applied = self.apply(cand, statement, cand_time, strength, result, matches)
        if result.action != "allow":
            self.log(cand, cand_time, result, mode, applied)
        conflicts = tuple(
            RelatedFact(
                m.fact.text,
                m.fact.path,
                m.fact.start_line or 0,
                m.fact.end_line or m.fact.start_line or 0,
                similarity=round(m.comparison.similarity, 3),
                chunk_id=m.fact.chunk_id,
                key=m.fact.id,
            )
            for m in result.conflicts
        )
        return WriteDecision(result.action, result.reason, result.supersede, PLUGIN, conflicts)

    def apply(
        self,
        cand: WriteCandidate,
        statement: Statement,
        cand_time: float,
        strength: int,
        result: Plan,
        matches: list[Match],
    ) -> dict[str, Any]:
        """Supersede mode: record the candidate, close the superseded intervals (only open ones),
        mark contested pairs and dependants, strike superseded MEMORY.md items, close the index
        chunks that hold nothing current any more. One transaction for the database."""
        now = self.now.timestamp()
        conn = self.conn
        cand_fact = Fact(
            ledger.fact_id(cand.target, cand.text),
            cand.text,
            cand.target,
            None,
            None,
            None,
            cand.key,
            cand_time,
            strength,
        )
        facts = {**{m.fact.id: m.fact for m in matches}, **{m.fact.id: m.fact for m in result.conflicts}}
        applied: dict[str, Any] = {
            "candidate_id": cand_fact.id,
            "superseded": [],
            "cascade": [],
            "struck": [],
        }
        with self.ctx.store.lock:
            ledger.register(
                conn,
                cand_fact,
                now=now,
                subject=statement.subject,
                source=cand.source,
                validity_start=cand_time,
                depends_on=cand.depends_on,
            )
            for fid in {*facts, *result.expired}:
                fact = facts.get(fid)
                if fact is None:
                    continue
                st = extract(ledger.clean(fact.text), self.now)
                ledger.register(
                    conn, fact, now=now, subject=st.subject, source="existing", validity_start=fact.time
                )
            for fid in result.supersede:
                if ledger.close(conn, fid, cand_time, cand_fact.id, now, result.reason[:500]):
                    applied["superseded"].append(fid)
                    applied["cascade"].extend(ledger.cascade(conn, fid, now))
            if result.contested:
                ledger.contest(conn, [cand_fact.id, *result.contested], now, result.reason[:500])
            if result.superseded_by:
                newer = facts[result.superseded_by]
                ledger.close(
                    conn, cand_fact.id, newer.time or cand_time, newer.id, now, "older than a current fact"
                )
                applied["superseded_on_arrival_by"] = newer.id
            for fid in result.expired:
                fact = facts.get(fid)
                until = extract(fact.text, self.now).valid_until if fact else None
                if until is not None:
                    ledger.close(conn, fid, midnight(until + dt.timedelta(days=1), self.tz), "expired", now)
            if result.candidate_expired and statement.valid_until is not None:
                end = midnight(statement.valid_until + dt.timedelta(days=1), self.tz)
                ledger.close(conn, cand_fact.id, end, "expired", now)
            paths = sorted({facts[f].path for f in applied["superseded"] if f in facts})
            applied["chunks_closed"] = ledger.sync_chunks(conn, self.ctx.recall, paths)
            conn.commit()
        pointer = f'{cand.target}: "{" ".join(cand.text.split())[:80]}"'
        for fid in applied["superseded"]:
            fact = facts.get(fid)
            if fact is not None and fact.path == self.memory_relpath():
                if self.strike(fact, pointer, cand):
                    applied["struck"].append(fact.citation)
        return applied

    def memory_relpath(self) -> str:
        return self.ws.relpath(self.ws.memory_file) if self.ws.memory_file.exists() else "MEMORY.md"

    def strike(self, fact: Fact, pointer: str, cand: WriteCandidate) -> bool:
        run_id = f"supersede-{self.now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        journal = Journal(self.ws, run_id, plugin=PLUGIN)
        done: list[bool] = []
        locked = ledger.with_write_lock(
            self.ws,
            lambda: done.append(
                ledger.strike_memory_item(self.ws, fact.path, fact.text, fact.start_line, pointer, journal)
            ),
        )
        if not locked:
            with self.ctx.store.lock:
                ledger.event(self.conn, self.now.timestamp(), fact.id, "strike-pending", None, pointer)
                self.conn.commit()
            return False
        if done and done[0]:
            with self.ctx.store.lock:
                ledger.event(self.conn, self.now.timestamp(), fact.id, "struck", run_id, pointer)
                self.conn.commit()
        return bool(done and done[0])

    def log(
        self, cand: WriteCandidate, cand_time: float, result: Plan, mode: str, applied: dict[str, Any]
    ) -> None:
        ledger.append_log(
            self.ws,
            {
                "time": self.now.isoformat(timespec="seconds"),
                "mode": mode,
                "action": result.action,
                "reason": result.reason,
                "candidate": {
                    "text": cand.text,
                    "target": cand.target,
                    "source": cand.source,
                    "key": cand.key,
                    "citation": cand.citation,
                    "subject": cand.subject,
                    "run_id": cand.run_id,
                    "event_time": ledger.iso(cand_time, self.tz),
                    "id": ledger.fact_id(cand.target, cand.text),
                },
                "conflicts": [
                    {
                        "id": m.fact.id,
                        "path": m.fact.path,
                        "start_line": m.fact.start_line,
                        "end_line": m.fact.end_line,
                        "chunk_id": m.fact.chunk_id,
                        "text": m.fact.text,
                        "detail": m.detail,
                        "judged_by": m.judged_by,
                        "event_time": ledger.iso(m.fact.time, self.tz),
                    }
                    for m in result.conflicts
                ],
                "superseded": applied.get(
                    "superseded", list(result.supersede) if mode == "supersede" else []
                ),
                "contested": list(result.contested),
                "superseded_on_arrival_by": applied.get("superseded_on_arrival_by"),
                "expired": list(result.expired),
                "cascade": applied.get("cascade", []),
                "struck": applied.get("struck", []),
            },
        )


def decide_write(ctx: Any, candidate: WriteCandidate, existing: list[RelatedFact]) -> WriteDecision:
    """The hook's body, failing open: any exception in detection is logged to
    ``.lifelong/logs/supersede.log`` and the write is allowed."""
    try:
        return Gate(ctx).decide(candidate, existing)
    except Exception as exc:  # fail-open by design (docs/supersede.md)
        ctx.log(PLUGIN, f"detection failed, write allowed (fail-open): {type(exc).__name__}: {exc}")
        return WriteDecision("allow", f"supersede gate failed open: {type(exc).__name__}", source=PLUGIN)
