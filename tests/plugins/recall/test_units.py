"""Retrieval units, returned text, the bounded decay, time in queries, lexical normalisation and
k-stability: the recall-quality rules of issue 12, on real workspaces, SQLite and the real
embedder."""

from __future__ import annotations

import datetime as dt
import json

from click.testing import CliRunner
from freezegun import freeze_time
from lifelong_plugins.recall import service
from lifelong_plugins.recall.chunking import chunk_markdown, chunk_units, retrieval_units, split_lines
from lifelong_plugins.recall.results import snippet_of, within_budget
from lifelong_plugins.recall.scoring import bm25_coverage, idf, period_factor, query_terms, term_counts
from lifelong_plugins.recall.search import Searcher
from lifelong_plugins.recall.when import query_time

from lifelong import clock
from lifelong.cli import cli
from lifelong.contracts import Candidate
from lifelong.markdown import estimate_tokens

BERLIN = clock.zone("Europe/Berlin")
NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=BERLIN)
RECALL = {"builtins": ("embeddings", "recall"), "entry_points": False}  # no plugin answers for recall

NOTE = """# 2026-03-04

## Pitch
- Decision: the pitch opens with the live offline sync demo.
- Ask is EUR 1.2M seed at a EUR 8M pre-money valuation.
  - nested: the valuation was Jonas's call.

A paragraph about the office plants,
which need water on Fridays.

## Product
- Sync bug TW-418 loses the older paragraph.
"""


def search(host, query, **kw):
    req = service.make_request(host.ctx, query=query, **kw)
    return service.run_search(host.ctx, req).results


def test_units_are_blocks_with_exact_line_ranges() -> None:
    units = retrieval_units(NOTE)
    lines = split_lines(NOTE)
    assert [(u.start_line, u.end_line) for u in units] == [(4, 4), (5, 6), (8, 9), (12, 12)]
    for u in units:  # exact source lines, with their own heading path
        assert u.text == "\n".join(lines[u.start_line - 1 : u.end_line])
    assert units[0].heading_path == ("2026-03-04", "Pitch") and units[3].heading_path[-1] == "Product"
    # a unit larger than unit_tokens is split on line boundaries
    long = "# T\n\n" + "\n".join(f"line {i} " + "word " * 30 for i in range(10)) + "\n"
    parts = retrieval_units(long, unit_tokens=80)
    assert len(parts) > 1 and parts[0].start_line == 3 and parts[-1].end_line == 12
    assert all(b.start_line == a.end_line + 1 for a, b in zip(parts, parts[1:], strict=False))
    # inside a chunk, units are clipped to the chunk's lines
    chunk = chunk_markdown(NOTE)[0]
    assert [(u.start_line, u.end_line) for u in chunk_units(chunk, units, lines)] == [
        (4, 4),
        (5, 6),
        (8, 9),
        (12, 12),
    ]


def test_a_paragraph_written_a_statement_per_line_is_a_unit_per_line() -> None:
    note = (
        "# 2026-09-10\n\n"
        "Rent for the flat: 1,250 € a month by bank transfer on the 1st.\n"
        "Tried the new ramen place on Witte de Withstraat, too salty.\n\n"
        "Harriet called: her birthday is on 14 June this year, a\n"
        "Sunday, and she wants a small dinner.\n"
    )
    assert [(u.start_line, u.end_line) for u in retrieval_units(note)] == [(3, 3), (4, 4), (6, 7)]


def test_a_log_line_and_a_table_row_are_units_of_their_own(make_host) -> None:
    note = (
        "# Tue 6 Oct\n\n"
        "09:40 call w/ Sofia Mendes, she does our books and the quarterly VAT\n"
        "21:00 futsal at Pavilhão Rosa Mota, lost 6-4\n\n"
        "## Suppliers\n"
        "| who | what | contact |\n"
        "|---|---|---|\n"
        "| Café Origem | green beans | Leonor; order by Thursday |\n"
        "| TermoPro | roaster servicing | Hélder, every six months |\n"
    )
    assert [(u.start_line, u.end_line) for u in retrieval_units(note)] == [(3, 3), (4, 4), (9, 9), (10, 10)]
    host = make_host({"memory/2026-03-06.md": note}, **RECALL)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "TermoPro roaster servicing", "min_score": 0})
    top = out["results"][0]
    assert (top["start_line"], top["end_line"]) == (10, 10) and top["snippet"].startswith("| TermoPro")


def test_a_days_title_line_is_the_context_of_the_lines_under_it_not_a_unit(make_host) -> None:
    note = (
        "Tue 8 Sep — lab log\n"
        "09:30 Beat Hürlimann (lab technician, HIL E floor) walked me through the Picarro again.\n"
        "12:15 lunch Polymensa\n\n"
        "Wed 16 Sep\n\n"
        "Ran from the lab at 17:00 to make the dialect class.\n\n"
        "Monday I moved the samples to freezer F3.\n"
        "Then lunch.\n"
    )
    units = retrieval_units(note)
    assert [(u.start_line, u.end_line) for u in units] == [(2, 2), (3, 3), (7, 7), (9, 9), (10, 10)]
    assert units[0].heading_path == ("Tue 8 Sep — lab log",) and units[2].heading_path == ("Wed 16 Sep",)
    assert units[3].heading_path == ("Wed 16 Sep",)  # "Monday I moved ..." is a statement, no title
    host = make_host({"memory/2026-03-16.md": note}, **RECALL)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "lab tech's name", "min_score": 0})
    top = out["results"][0]
    assert (top["start_line"], top["heading"]) == (2, "Tue 8 Sep — lab log")
    assert all(r["start_line"] not in (1, 5) for r in out["results"])  # no title alone


def test_a_days_title_in_another_language_is_context_too(make_host) -> None:
    """A Turkish coach's day opens "3 Nisan Per" (Perşembe, Thursday): read with babel's CLDR
    names, it is the title of the lines under it. As a unit of its own, "Per" matched a search
    for the club fee "per player" and led it (held-out months, session 23)."""
    note = (
        "3 Nisan Per\n"
        "- kulüp aidatı nisandan itibaren 1.600 TL, 7 kişi ödedi\n"
        "- antrenman Cuma 18.00, salon B\n\n"
        "火曜日 くもり\n"
        "- 歯医者は来週の水曜日に変更\n"
    )
    units = retrieval_units(note)
    assert [(u.start_line, u.end_line) for u in units] == [(2, 2), (3, 3), (6, 6)]
    assert units[0].heading_path == ("3 Nisan Per",) and units[2].heading_path == ("火曜日 くもり",)
    host = make_host({"memory/2026-03-19.md": note}, **RECALL)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "aidatı per oyuncu", "min_score": 0})
    assert out["results"] and all(r["start_line"] not in (1, 5) for r in out["results"])


def test_search_returns_the_matched_unit_with_its_lines_heading_and_date(make_host) -> None:
    host = make_host({"memory/2026-03-04.md": NOTE}, **RECALL)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "TW-418 older paragraph", "min_score": 0})
    top = out["results"][0]
    assert (top["path"], top["start_line"], top["end_line"]) == ("memory/2026-03-04.md", 12, 12)
    assert top["snippet"] == "- Sync bug TW-418 loses the older paragraph."
    assert top["heading"] == "2026-03-04 > Product" and top["source_date"] == "2026-03-04"
    assert top["citation"] == "Source: memory/2026-03-04.md#L12-L12"
    units = host.store.query("SELECT count(*) n FROM units")[0]["n"]
    assert units == 4 and host.store.query("SELECT count(*) n FROM unit_vectors")[0]["n"] == 4


def test_snippet_is_centred_on_the_first_match_of_a_long_unit() -> None:
    text = "Opening words " + "filler " * 200 + "the zeppelin landed at noon " + "tail " * 100
    snip = snippet_of(text, 300, query_terms("when did the zeppelin land?"))
    assert "zeppelin" in snip and snip.startswith("…") and snip.endswith("…") and len(snip) <= 300
    assert snippet_of(text, 300).startswith("Opening words")  # no query: the beginning
    assert snippet_of("short text", 300, ["zeppelin"]) == "short text"


def test_token_budget_is_honoured_by_the_tool_and_the_cli(make_host) -> None:
    files = {
        f"memory/2026-03-{d:02d}.md": f"# 2026-03-{d:02d}\n\n- The garden project needs compost batch {d}.\n"
        f"- Garden note {d}: watered the tomatoes and the basil in the garden.\n"
        for d in range(1, 13)
    }
    host = make_host(files, **RECALL)
    with clock.pinned(NOW):
        small = host.call_tool("memory_search", {"query": "garden compost", "max_tokens": 40, "min_score": 0})
        large = host.call_tool(
            "memory_search", {"query": "garden compost", "max_tokens": 200, "min_score": 0}
        )
    cost = [sum(estimate_tokens(r["snippet"]) for r in out["results"]) for out in (small, large)]
    assert 0 < cost[0] <= 40 and cost[1] <= 200 and len(large["results"]) > len(small["results"]) > 0
    # a larger budget only adds results after the same head
    head = [(r["path"], r["start_line"]) for r in small["results"]]
    assert [(r["path"], r["start_line"]) for r in large["results"]][: len(head)] == head
    runner = CliRunner()
    res = runner.invoke(
        cli,
        ["--workspace", str(host.workspace.root), "--now", NOW.isoformat(), "search", "garden compost",
         "--max-tokens", "40", "--min-score", "0", "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["results"]
    assert rows and sum(estimate_tokens(r["snippet"]) for r in rows) <= 40
    # not even one result fits: the first, cut to the budget
    one = within_budget([Candidate(1, "a.md", 1, 1, "word " * 100)], 10, 700)
    assert len(one) == 1 and estimate_tokens(one[0].text) <= 10


def test_bounded_decay_keeps_an_old_decisive_match_and_prefers_the_newer_near_duplicate(make_host) -> None:
    files = {
        "memory/2025-06-02.md": "# 2025-06-02\n\n- Root cause of TW-418: the merge dropped the older paragraph.\n",
        "memory/2026-03-20.md": "# 2026-03-20\n\n- Talked about sync bugs in general with Priya.\n"
        "- Bug triage for the week: nothing urgent.\n",
        "memory/2025-11-03.md": "# 2025-11-03\n\n- Standup moved to 9:30 every weekday.\n",
        "memory/2026-03-18.md": "# 2026-03-18\n\n- Standup moved to 9:45 every weekday.\n",
    }
    host = make_host(files, **RECALL)
    with clock.pinned(NOW):
        old = search(host, "what was the root cause of TW-418?", min_score=0)
        dup = search(host, "when is the standup?", min_score=0)
        plain = search(host, "standup every weekday", min_score=0)
    assert old[0].path == "memory/2025-06-02.md" and old[0].decay < 1.0  # 295 days old, still first
    # of two near-identical lines the newer ranks first (no event-time wording in the query)
    assert plain[0].path == "memory/2026-03-18.md" and plain[1].path == "memory/2025-11-03.md"
    # "when is ..." asks about time: no decay at all
    assert all(c.decay == 1.0 for c in dup)


def test_query_dates_resolve_against_now_and_prefer_that_period(make_host) -> None:
    tz = BERLIN
    now = dt.datetime(2026, 3, 24, 9, 0, tzinfo=tz)

    def day(s: str) -> float:
        return dt.datetime.fromisoformat(s).replace(tzinfo=tz).timestamp()

    assert query_time("what did we do last week?", now, tz).period == (day("2026-03-16"), day("2026-03-23"))
    assert query_time("notes from yesterday", now, tz).period == (day("2026-03-23"), day("2026-03-24"))
    assert query_time("what happened in March", now, tz).period == (day("2026-03-01"), day("2026-04-01"))
    assert query_time("plans in May", now, tz).period == (
        day("2025-05-01"),
        day("2025-06-01"),
    )  # latest begun
    assert query_time("what did we decide on 8 May?", now, tz).period == (
        day("2025-05-08"),
        day("2025-05-09"),
    )
    assert query_time("the call on March 4th, 2026", now, tz).period == (day("2026-03-04"), day("2026-03-05"))
    assert query_time("2026-03-04 offsite", now, tz).period == (day("2026-03-04"), day("2026-03-05"))
    # "as of" / "until" a date: the state then is told by every note up to it, not only by that day's
    as_of = query_time("how many pets does Andrew have, as of March 2026?", now, tz)
    assert as_of.period[1] == day("2026-04-01") and as_of.period[0] < day("1900-01-01")
    assert as_of.label == "up to 2026-03"
    assert query_time("what was open until 8 May?", now, tz).period[1] == day("2025-05-09")
    assert query_time("the state of March 2026", now, tz).period[0] == day("2026-03-01")  # not "as of"
    # the nth week (days 1-7, 8-14, ...; the last seven) or weekend (nth Saturday and Sunday) of a month
    assert query_time("where was I the first weekend of March 2026", now, tz).period == (
        day("2026-03-07"),
        day("2026-03-09"),
    )
    assert query_time("trip in the second week of February", now, tz).period == (
        day("2026-02-08"),
        day("2026-02-15"),
    )
    assert query_time("the last week of February 2026", now, tz).period == (
        day("2026-02-22"),
        day("2026-03-01"),
    )
    assert query_time("the last weekend of May", now, tz).period == (day("2025-05-31"), day("2025-06-02"))
    assert query_time("when did Gina lose her job?", now, tz).no_decay
    assert not query_time("what is the offsite venue?", now, tz).no_decay
    files = {
        "memory/2026-03-04.md": "# 2026-03-04\n\n- Lunch with Jonas at the canteen.\n",
        "memory/2026-03-17.md": "# 2026-03-17\n\n- Lunch with Jonas at the Vietnamese place.\n",
        "memory/2026-03-23.md": "# 2026-03-23\n\n- Lunch with Jonas at the pizza place.\n",
    }
    host = make_host(files, **RECALL)
    with freeze_time("2026-03-24 08:00:00"):
        last_week = search(host, "lunch with Jonas last week", min_score=0)
        on_day = search(host, "lunch with Jonas on 4 March", min_score=0)
    assert last_week[0].path == "memory/2026-03-17.md"
    assert on_day[0].path == "memory/2026-03-04.md"


def test_notes_written_just_after_a_named_period_count_as_partly_inside_it(make_host) -> None:
    day = 86400.0
    period = (10 * day, 11 * day)
    assert period_factor(10.5 * day, period, 0.5, 7 * day) == 1.0
    assert period_factor(11 * day, period, 0.5, 7 * day) == 1.0  # the slack starts at the end
    assert period_factor(12 * day, period, 0.5, 7 * day) == 1.0 - 0.5 / 7
    assert period_factor(17.9 * day, period, 0.5, 7 * day) > 0.5
    assert period_factor(18 * day, period, 0.5, 7 * day) == 0.5
    assert period_factor(9.9 * day, period, 0.5, 7 * day) == 0.5  # before the period: no slack
    assert period_factor(12 * day, period, 0.5, 0.0) == 0.5
    files = {  # the same lunch note (the dish apart, so MMR keeps all three) on three days
        f"memory/{d}.md": f"# {d}\n\n- Lunch with Jonas at the canteen, the {dish} was cold.\n"
        for d, dish in (("2026-03-05", "soup"), ("2026-03-20", "pasta"), ("2026-02-20", "rice"))
    }  # 03-05 is the day after 4 March: a daily recounting "yesterday's lunch"
    for slack, expect in ((7, "memory/2026-03-05.md"), (0, None)):
        host = make_host(files, {"plugins": {"recall": {"period_slack_days": slack}}}, **RECALL)
        with freeze_time("2026-03-24 08:00:00"):
            got = search(host, "lunch with Jonas on 4 March", min_score=0)
        by_path = {c.path: c for c in got}
        assert len(by_path) == 3
        if expect:  # inside the slack: above both notes outside it
            assert got[0].path == expect
            assert by_path[expect].score > by_path["memory/2026-03-20.md"].score * 1.8
        else:  # no slack: all three equally outside the period
            assert len({round(c.decay, 6) for c in got}) == 1 and got[0].decay == 0.5


def test_a_daily_inside_a_named_period_is_a_candidate_outside_both_legs_pools(make_host) -> None:
    """Forty dailies of January and February say what was done at a weekend in the query's own
    words; the one daily of the weekend asked about says what happened with none of them. Both
    legs' pools (``candidate_pool`` 10) fill with the forty; the period leg adds the nearest
    chunks of the period's dailies, so the car show is found (``period_pool`` 0: it is not)."""
    files = {
        f"memory/2026-{m:02d}-{d:02d}.md": f"# 2026-{m:02d}-{d:02d}\n\n- What was I doing this weekend? "
        f"Mostly emails, chores and weekend plan number {m}{d}.\n"
        for m in (1, 2)
        for d in range(1, 21)
    }
    files["memory/2026-03-08.md"] = (
        "# 2026-03-08\n\n- Went to the car show with Tom, vintage Mustangs everywhere.\n"
    )
    query = "what was I doing on the first weekend of March 2026"
    found = {}
    for pool in (10, 0):
        cfg = {"plugins": {"recall": {"candidate_pool": 10, "period_pool": pool}}}
        host = make_host(files, cfg, **RECALL)
        with freeze_time("2026-03-24 08:00:00"):
            found[pool] = [c.path for c in search(host, query, min_score=0, max_results=10)]
    assert "memory/2026-03-08.md" in found[10]
    assert "memory/2026-03-08.md" not in found[0]


def test_a_query_word_indexed_only_in_other_forms_weighs_as_its_stem(make_host) -> None:
    files = {
        "memory/2026-03-01.md": "# 2026-03-01\n\n- Jonas went camping by the lake.\n",
        "memory/2026-03-02.md": "# 2026-03-02\n\n- Jonas repaired the kitchen shelf.\n",
        "memory/2026-03-03.md": "# 2026-03-03\n\n- Ada packed the campfire kit and the camping stove.\n",
    }
    host = make_host(files, {"embedding": {"provider": "none"}}, **RECALL)
    idx = service.index_for(host.ctx)
    idx.sync()
    searcher = Searcher(idx)
    # "camped" is not in the index as written; "camping" (2 notes) stems to "camp", "campfire" does not
    assert searcher._stem_doc_freq(["camp", "kayak"]) == {"camp": 2}
    with freeze_time("2026-03-04 08:00:00"):
        got = {c.path: c for c in search(host, "Where has Jonas camped?", min_score=0)}
    camping, shelf = got["memory/2026-03-01.md"], got["memory/2026-03-02.md"]
    assert camping.bm25 > 1.5 * shelf.bm25  # "camp" counts, not only the name (equal without it)
    assert next(iter(got)) == "memory/2026-03-01.md"


def test_lexical_score_is_normalised_by_the_query_and_keeps_a_decisive_match() -> None:
    n = 1000
    weights = {"tw418": idf(1, n), "bug": idf(300, n)}
    terms = ["tw418", "bug"]
    rare = bm25_coverage(terms, weights, {"tw418": 1}, 10, 10)
    common = bm25_coverage(terms, weights, {"bug": 1}, 10, 10)
    both = bm25_coverage(terms, weights, {"tw418": 1, "bug": 1}, 10, 10)
    assert 0.0 < common < 0.3 < 0.7 < rare < both <= 1.0  # the rare term carries the query
    assert bm25_coverage(terms, weights, {}, 10, 10) == 0.0
    # longer text, same matches: lower (length normalisation), never above 1 however often
    assert bm25_coverage(terms, weights, {"tw418": 1}, 100, 10) < rare
    assert bm25_coverage(terms, weights, {"tw418": 50, "bug": 50}, 10, 10) == 1.0
    counts, length = term_counts("Bugs, bugs: the TW-418 bug!")
    # an identifier counts whole (its parts joined by "_") and by its parts
    assert counts["bug"] == 3 and counts["tw_418"] == 1 and counts["tw"] == counts["418"] == 1 and length == 5


def test_results_of_a_small_k_are_the_head_of_a_larger_k(make_host) -> None:
    topics = ["offsite venue", "pitch deck", "sync bug", "hiring plan", "garden", "budget", "travel"]
    verbs = ["discussed", "reviewed", "postponed", "sketched", "argued about", "finished", "priced"]
    people = ["Jonas", "Priya", "Elena", "Maya", "Tom", "Ada"]
    files = {}
    for d in range(1, 21):
        t, v, p = topics[d % 7], verbs[(d * 3) % 7], people[d % 6]
        files[f"memory/2026-02-{d:02d}.md"] = (
            f"# 2026-02-{d:02d}\n\n## {t.title()}\n- {p} {v} the {t} on day {d}.\n"
            f"- {people[(d + 2) % 6]} has an idea about the {topics[(d + 3) % 7]} ({d * 7} minutes).\n"
        )
    host = make_host(files, **RECALL)
    with clock.pinned(NOW):
        for query in ("offsite venue ideas", "what about the sync bug?", "hiring"):
            six = [c.key for c in search(host, query, max_results=6, min_score=0)]
            twenty = [c.key for c in search(host, query, max_results=20, min_score=0)]
            assert len(six) == 6 and twenty[:6] == six, query


def test_an_index_from_before_units_upgrades_on_the_next_sync(make_host) -> None:
    host = make_host({"memory/2026-03-04.md": NOTE}, **RECALL)
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        idx.sync()
        # what migration m004 leaves behind on an old index: no units, checksums forgotten
        host.store.execute("DELETE FROM units")
        host.store.execute("DELETE FROM unit_vectors")
        host.store.execute("UPDATE files SET sha256 = NULL")
        host.store.conn.commit()
        report = idx.sync()
    assert report.plan.modified == ("memory/2026-03-04.md",) and report.embedded == 0  # chunks: cache
    assert report.units_embedded == 0 and host.store.query("SELECT count(*) n FROM units")[0]["n"] == 4


def hybrid_with_and_without_speaker_boost(make_host, day: str, query: str) -> tuple[list, dict, dict]:
    """The results of ``query`` on a one-daily workspace, and a unit's start line -> its hybrid
    score with the default ``speaker_boost`` and with it 0 (both embedding the query as written)."""
    same = {"speaker_pronoun": False}
    host = make_host({"memory/2026-03-10.md": day}, {"plugins": {"recall": same}}, **RECALL)
    off = make_host(
        {"memory/2026-03-10.md": day}, {"plugins": {"recall": {**same, "speaker_boost": 0}}}, **RECALL
    )
    with clock.pinned(NOW):
        boosted = search(host, query, min_score=0, max_results=20)
        plain = search(off, query, min_score=0, max_results=20)

    def units(results: list) -> dict:  # a result merging fragments of a message: each fragment
        return {p.start_line: p.hybrid for c in results for p in (c.parts or (c,))}

    return boosted, units(boosted), units(plain)


def test_a_speakers_own_statement_is_preferred_on_a_question_about_them(make_host) -> None:
    from lifelong_plugins.recall.speakers import speaker_of

    assert speaker_of("- [D1:3] Caroline: I went to a support group.") == ("caroline",)
    assert speaker_of("Maya Lee: hi") == ("maya", "lee") and speaker_of("plain line, no speaker") == ()
    day = (
        "# 2026-03-10\n\n"
        "- Jonas: Caroline told me she adopted a greyhound called Pixel from the shelter.\n"
        "- Caroline: I adopted a dog from the shelter last month.\n"
    )
    boosted, mine, other = hybrid_with_and_without_speaker_boost(
        make_host, day, "what did Caroline adopt from the shelter?"
    )
    assert boosted[0].start_line == 4  # her own statement
    assert abs(mine[4] - 1.25 * other[4]) < 1e-6 and abs(mine[3] - other[3]) < 1e-6


def test_a_first_person_question_prefers_the_users_own_lines_in_a_chat_transcript(make_host) -> None:
    from lifelong_plugins.recall.speakers import speaker_asked, speaker_of

    assert speaker_of("**User:** I adopted a dog.") == ("user",)
    assert speaker_of("- [10:32] assistant: Congratulations!") == ("assistant",)
    assert speaker_of("**Maya**: hi") == speaker_of("**Maya:** hi") == ("maya",)  # a chat export's bold name
    assert speaker_of("**Maya** hi: there") == ()
    asked = {"what", "dog", "did", "i", "adopt"}
    assert speaker_asked(("user",), asked) and not speaker_asked(("assistant",), asked)
    assert not speaker_asked(("user",), {"what", "dog", "did", "maya", "adopt"})  # not about the user
    day = (
        "# 2026-03-10\n\n"
        "- Assistant: Adopting a dog from the shelter is a big step; a shelter dog needs patience, "
        "a routine and a vet visit in the first week.\n"
        "- User: Last month we adopted a dog from the shelter, a greyhound called Pixel.\n"
    )
    _, mine, plain = hybrid_with_and_without_speaker_boost(
        make_host, day, "which dog did I adopt from the shelter?"
    )
    assert abs(mine[4] - 1.25 * plain[4]) < 1e-6 and abs(mine[3] - plain[3]) < 1e-6  # only the user's line


def test_a_users_message_over_several_paragraphs_is_the_users_in_every_one(make_host) -> None:
    from lifelong_plugins.recall.speakers import (
        marks_a_speaker_asked,
        speaker_names_asked,
        speaker_of,
        speakers_in,
        turn_roles,
    )

    day = (
        "# 2026-03-10\n\n"  # 1-2
        "**User:** I need help planning meals this week.\n\n"  # 3-4
        "By the way, I graduated in Business Administration, so budgets are my thing.\n\n"  # 5-6
        "**Assistant:** Here is a plan:\n\n"  # 7-8
        "1. Monday: lentil soup\n\n"  # 9-10
        "A degree in Business Administration helps with budgets.\n\n"  # 11-12
        "Maya: prefers tea.\n"  # 13: a named speaker's turn is not carried over
        "Lunch with Tom at noon.\n"
    )
    roles = turn_roles(day, 1)
    assert roles[5] == ("user",) and roles[9] == roles[11] == ("assistant",)
    assert 13 not in roles and 14 not in roles and 1 not in roles
    # a conversation between named people (two names mark lines) carries each name on
    talk = (
        "**Caroline:** Hey Mel!\n\nI went to a support group.\n\n**Melanie:** Wow.\n\nTell me more.\n\n"
        "**Caroline:** It was powerful.\n"
    )
    assert turn_roles(talk, 10) == {12: ("caroline",), 16: ("melanie",)}
    # labels in notes mark a line each: not a conversation, nothing carried, and no bold label is
    # taken for a speaker whose name the query embedding would drop ("am I on they")
    notes = "**Home:** wifi is Raman-5G.\nBike got a flat tire.\n**Car:** insurance renews in May.\nRain.\n"
    assert turn_roles(notes, 1) == {}
    assert speakers_in(notes) == set() and speakers_in("**On call:** every second week\n") == set()
    assert speaker_of("**On call:** every second week") == ()
    assert speakers_in(talk) == {"caroline", "melanie"} and speakers_in("Maya: prefers tea.") == {"maya"}
    # the cheap test before turn_roles finds a mark after a timestamp holding colons of its own
    log = "- [10:32] User: I moved to Lisbon.\n  The flat is in Alfama.\n- [10:33] Assistant: Nice.\n"
    assert turn_roles(log, 1) == {2: ("user",)}
    assert marks_a_speaker_asked(log, speaker_names_asked({"where", "is", "my", "flat"}))
    _, mine, plain = hybrid_with_and_without_speaker_boost(make_host, day, "what degree did I graduate with?")
    assert abs(mine[5] - 1.25 * plain[5]) < 1e-6  # the user's second paragraph
    assert abs(mine[11] - plain[11]) < 1e-6 and abs(mine[14] - plain[14]) < 1e-6


def test_a_named_speaker_is_a_pronoun_in_the_query_embedding(make_host) -> None:
    from lifelong_plugins.recall.search import Searcher
    from lifelong_plugins.recall.speakers import pronoun_query

    names = {"melanie", "gina"}
    assert pronoun_query("What does Melanie do to destress?", names) == "What does they do to destress?"
    assert pronoun_query("What do melanie’s kids like?", names) == "What do their kids like?"
    assert pronoun_query("Did Jon and Gina both dance?", names) == "Did Jon and they both dance?"
    assert pronoun_query("Melanie Gina plans", names) == "they plans"  # a two-word name: one pronoun
    assert pronoun_query("Where is Melanieville?", names) == "Where is Melanieville?"
    transcript = "".join(
        f"- [D1:{i}] {who}: line {i} about the week, the kids and the garden.\n"
        for i, who in enumerate(["Melanie", "Caroline"] * 6, start=1)
    )
    notes = "# 2026-03-11\n\n- Emma: prefers tea to coffee.\n\n" + "".join(
        f"## Topic {i}\n\nLong note {i} on Emma's project, the budget and the plan.\n\n" for i in range(40)
    )
    host = make_host(
        {"memory/2026-03-10.md": "# 2026-03-10\n\n" + transcript, "memory/2026-03-11.md": notes},
        {"plugins": {"recall": {"chunk_tokens": 60, "chunk_overlap": 0}}},
        **RECALL,
    )
    with clock.pinned(NOW):
        outcome = service.run_search(
            host.ctx, service.make_request(host.ctx, query="What does Melanie like? Emma? User?")
        )
        searcher = Searcher(service.index_for(host.ctx))
        # Melanie speaks in every chunk that names her; Emma is a label once among notes about her
        assert searcher.named_speakers("What does Melanie like? Emma? kids garden") == {"melanie"}
    assert outcome.legs["embedded_query"] == "What does they like? Emma? User?"
    out = CliRunner().invoke(
        cli,
        [
            "--workspace",
            str(host.ctx.workspace.root),
            "--now",
            "2026-03-24T09:00",
            "search",
            "Melanie's garden",
            "--explain",
        ],
        catch_exceptions=False,
    )
    assert "query embedded as: their garden  (speaker_pronoun)" in out.output
    off = make_host(
        {"memory/2026-03-10.md": "# 2026-03-10\n\n" + transcript},
        {"plugins": {"recall": {"speaker_pronoun": False}}},
        **RECALL,
    )
    with clock.pinned(NOW):
        plain = service.run_search(off.ctx, service.make_request(off.ctx, query="What does Melanie like?"))
    assert "embedded_query" not in plain.legs


def test_the_readme_example_search_returns_the_decision_note_today(tmp_path) -> None:
    import shutil
    from pathlib import Path

    import lifelong_plugins.demo as demo

    ws = tmp_path / "demo"
    shutil.copytree(Path(demo.__file__).parent / "data" / "workspace", ws)
    res = CliRunner().invoke(
        cli, ["--workspace", str(ws), "search", "what did we decide about the pitch?", "--json"]
    )  # the real clock: months after the notes were written
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["results"]
    decision = [r for r in rows if (r["path"], r["start_line"]) == ("memory/2026-03-04.md", 4)]
    assert decision and decision[0]["snippet"].startswith("- Decision: the pitch opens with the live offline")


def test_chunk_vectors_from_units_embed_only_the_appended_unit(make_host) -> None:
    import numpy as np

    host = make_host(
        {"memory/2026-03-04.md": NOTE}, {"plugins": {"recall": {"chunk_vectors_from_units": True}}}, **RECALL
    )
    idx = service.index_for(host.ctx)
    with clock.pinned(NOW):
        first = idx.sync()
        path = host.workspace.root / "memory" / "2026-03-04.md"
        path.write_text(NOTE + "- Appended: the offsite moves to May.\n", encoding="utf-8")
        again = idx.sync()
    assert first.embedded == 0 and first.units_embedded == 4  # the chunk's vector is its units' mean
    assert again.embedded == 0 and again.units_embedded == 1  # only the new line is embedded
    ((cid, blob),) = host.store.execute("SELECT chunk_id, embedding FROM chunk_vectors").fetchall()
    units = host.store.execute(
        "SELECT v.embedding FROM unit_vectors v JOIN units u ON u.id = v.unit_id WHERE u.chunk_id = ?", (cid,)
    ).fetchall()
    mean = np.mean([np.frombuffer(b[0], dtype=np.float32) for b in units], axis=0)
    assert len(units) == 5 and np.allclose(
        np.frombuffer(blob, dtype=np.float32), mean / np.linalg.norm(mean), atol=1e-6
    )


def test_units_store_their_terms_and_migration_m006_fills_old_rows(make_host) -> None:
    from lifelong_plugins.recall import tables
    from lifelong_plugins.recall.scoring import decode_terms
    from sqlite_utils import Database

    host = make_host({"memory/2026-03-04.md": NOTE}, **RECALL)
    with clock.pinned(NOW):
        service.index_for(host.ctx).sync()
    rows = host.store.query("SELECT text, terms FROM units")
    assert rows and all(decode_terms(r["terms"]) == term_counts(r["text"]) for r in rows)
    host.store.execute("UPDATE units SET terms = NULL")
    host.store.conn.commit()
    tables.m006_unit_terms(Database(host.store.conn))  # what upgrading an index runs
    host.store.conn.commit()
    assert all(
        decode_terms(r["terms"]) == term_counts(r["text"])
        for r in host.store.query("SELECT text, terms FROM units")
    )


def test_the_fences_of_a_managed_section_are_never_a_result(make_host) -> None:
    """The suite's own section markers in MEMORY.md are no retrieval unit: a search whose words
    match nothing there better used to get ``<!-- lifelong:topic-other:end -->`` as a result."""
    memory = (
        "# MEMORY\n\n## Other\n<!-- lifelong:topic-other:start -->\n"
        "- Left my umbrella at the corner café, must pick it up. <!-- key:3dac4f58f1bc -->\n"
        "<!-- lifelong:topic-other:end -->\n\n<details>kept: real HTML</details>\n"
    )
    units = retrieval_units(memory)
    assert [(u.start_line, u.end_line) for u in units] == [(5, 5), (8, 8)]
    host = make_host({"MEMORY.md": memory}, **RECALL)
    with clock.pinned(NOW):
        results = search(host, "lifelong topic other end", min_score=0)
    assert results and all("lifelong:topic-other:end" not in r.text.splitlines()[0] for r in results)


def test_an_items_key_and_sources_are_neither_searched_nor_shown(make_host) -> None:
    """The ``<!-- key:… src:… on:… -->`` after a promoted item is bookkeeping: indexed, the word
    "key" in "network key for guests" made every promoted item a full keyword match (and the
    shared words made MMR treat them as near-duplicates). An index from before upgrades."""
    memory = (
        "# MEMORY\n\n<!-- lifelong:topic-other:start -->\n## Other\n"
        "- We ship Juniper to customers on July 15. <!-- key:a652a21812ea "
        "src:memory/2026-04-01.md#L4-L4 on:2026-04-14 -->\n"
        "- Coach Lina charges EUR 70 per session. <!-- key:c28773d9c873 src:memory/2026-04-05.md#L10-L10 -->\n"
        "<!-- lifelong:topic-other:end -->\n"
    )
    daily = "# 2026-03-20\n\n- The home wifi password is now cobalt-fox-95.\n"
    host = make_host({"MEMORY.md": memory, "memory/2026-03-20.md": daily}, **RECALL)
    with clock.pinned(NOW):
        results = search(host, "network key for guests", min_score=0, max_results=3)
        shown = host.call_tool("memory_search", {"query": "Juniper customers", "min_score": 0})["results"][0]
        assert all(r.bm25 == 0 for r in results)  # no unit holds "key" or "network" as a word
        assert shown["snippet"] == "- We ship Juniper to customers on July 15."
        assert (shown["path"], shown["start_line"]) == ("MEMORY.md", 5)
        fts = host.store.query("SELECT count(*) n FROM chunks_fts WHERE chunks_fts MATCH 'key OR src'")
        assert fts[0]["n"] == 0
        # an index built before comments were left out re-chunks the files holding one
        idx = service.index_for(host.ctx)
        old = "UPDATE chunks_fts SET text = text || ' key' WHERE rowid IN (SELECT id FROM chunks WHERE path = ?)"
        host.store.execute(old, ("MEMORY.md",))
        host.store.conn.commit()
        from lifelong_plugins.recall.tables import m012_comments_left_out

        m012_comments_left_out(host.store.db)
        host.store.conn.commit()
        report = idx.sync()
    assert report.plan.modified == ("MEMORY.md",)
    assert host.store.query("SELECT count(*) n FROM chunks_fts WHERE chunks_fts MATCH 'key'")[0]["n"] == 0


def test_an_abbreviation_in_a_note_is_found_by_its_word(make_host) -> None:
    """ "where does the dog see a doctor" holds no word of "vet: Dr. Nunes" as written; read as
    "doctor" on both sides, the note is a keyword match (the FTS leg finds it, its unit scores
    it), and so is "Dr. Nunes" asked the other way round. An index from before re-chunks the
    files holding an abbreviation once (migration m013)."""
    daily = (
        "# 2026-03-20\n\n## Bolacha\n- vet: Dr. Nunes, Clínica Estrela (Rua de Cedofeita)\n"
        "- eats Royal Canin Mini, two cups a day\n\n## Other\n- Beach walk, she rolled in seaweed.\n"
    )
    host = make_host({"memory/2026-03-20.md": daily}, **RECALL)
    with clock.pinned(NOW):
        found = search(host, "where does the dog see a doctor", min_score=0, max_results=3)
        assert found[0].start_line == 4 and found[0].bm25 > 0
        back = host.call_tool("memory_search", {"query": "which doctor is Nunes", "min_score": 0})["results"]
        assert back[0]["start_line"] == 4
        fts = "SELECT count(*) n FROM chunks_fts WHERE chunks_fts MATCH ?"
        assert host.store.query(fts, ("doctor",))[0]["n"] == 1 and host.store.query(fts, ("dr",))[0]["n"] == 0
        # what an index from before held: "Dr." as written
        host.store.execute(
            "UPDATE chunks_fts SET text = replace(text, 'doctor', 'Dr.')"
            " WHERE rowid IN (SELECT id FROM chunks WHERE path = ?)",
            ("memory/2026-03-20.md",),
        )
        host.store.conn.commit()
        from lifelong_plugins.recall.tables import m013_abbreviations

        m013_abbreviations(host.store.db)
        host.store.conn.commit()
        report = service.index_for(host.ctx).sync()
    assert report.plan.modified == ("memory/2026-03-20.md",)
    assert host.store.query(fts, ("doctor",))[0]["n"] == 1


def test_the_kind_of_answer_a_question_asks_for_is_read_from_its_question_word() -> None:
    from lifelong_plugins.recall.answer import asked_kind, asked_stems
    from lifelong_plugins.recall.answer import holds_kind as holds_for

    def holds_kind(text: str, kind: str, query: str) -> bool:
        return holds_for(text, kind, asked_stems(query))

    assert asked_kind("where is the food bank held") == "place"
    assert asked_kind("address for the food bank now") == "place"
    assert asked_kind("when is my half marathon") == "time"
    assert asked_kind("which day is our turn in the basement") == "time"
    assert asked_kind("who is my PhD advisor") == "person"
    assert asked_kind("how much do I pay for the apartment") == "amount"
    assert asked_kind("what activities does Melanie do?") is None
    q = "where is the food bank held"
    assert not holds_kind("Food bank in the morning, busy.", "place", q)  # the subject, no place
    assert holds_kind("- we're in St Bride's church hall on Hyndland Road", "place", q)
    assert holds_kind("Food bank: Clarence Drive (old library), Tuesdays 10-1.", "place", q)
    # a speaker mark, a [D1:3] tag and a sentence's first word name no one
    assert not holds_kind("- [D1:3] Caroline: I went to a support group.", "person", "who did I meet")
    assert holds_kind("- [D1:3] Caroline: I met Melanie there.", "person", "who did I meet")
    assert not holds_kind("Caroline met her.", "person", "who did Caroline meet")  # the query's own name
    assert holds_kind("I went to a support group yesterday", "time", "when did I go")
    assert not holds_kind("You may come along.", "time", "when can I come")  # "may" the verb
    assert holds_kind("Rent is EUR 950 a month", "amount", "how much is the rent")


def test_a_line_holding_the_asked_kind_of_answer_outranks_one_that_only_names_the_subject(make_host) -> None:
    """Written month 8: "where is the food bank held" ranked "Food bank in the morning, busy." (short,
    every query word) above the line saying where it is; the line holding a place scores
    ``1 + answer_boost`` times higher, and without the rule the short line wins."""
    files = {
        "memory/2026-03-10.md": "# 2026-03-10\n\nFood bank in the morning, busy.\n",
        "memory/2026-03-11.md": (
            "# 2026-03-11\n\nWe're in St Bride's church hall on Hyndland Road for the food bank, doors at 10,"
            " tins table again.\n"
        ),
        "memory/2026-03-12.md": "# 2026-03-12\n\nPancakes for tea, then an early night.\n",
        "memory/2026-03-13.md": "# 2026-03-13\n\nRain all day; finished the crossword.\n",
        "memory/2026-03-14.md": "# 2026-03-14\n\nIsla played the fiddle for an hour.\n",
    }
    host = make_host(files, **RECALL)
    off = make_host(files, {"plugins": {"recall": {"answer_boost": 0}}}, **RECALL)
    with clock.pinned(NOW):
        boosted = search(host, "where is the food bank held", min_score=0, max_results=5)
        plain = search(off, "where is the food bank held", min_score=0, max_results=5)
    assert boosted[0].path == "memory/2026-03-11.md" and plain[0].path == "memory/2026-03-10.md"
    mine, other = {c.path: c.hybrid for c in boosted}, {c.path: c.hybrid for c in plain}
    place, subject = "memory/2026-03-11.md", "memory/2026-03-10.md"
    assert abs(mine[place] - 1.1 * other[place]) < 1e-6 and abs(mine[subject] - other[subject]) < 1e-6
    assert (
        boosted[0].extra.get("answers") == "place" and "answers" not in plain[0].extra
    )  # --explain shows it
