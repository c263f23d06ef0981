"""Facts, not lines (issue 13): paraphrases merge and their signals add up, different facts about
one subject stay apart, subjects travel, signals survive quiet nights and moved lines, a re-run
adds nothing, eviction is capped, the suite's own output is never evidence, backfill works on
recurrence alone, MEMORY.md is organised by topic and old per-night blocks keep working."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner
from lifelong_plugins.dreaming.explain import explain
from lifelong_plugins.dreaming.facts import (
    FactView,
    GroupingConfig,
    clock_times,
    conflicting,
    fact_view,
    group_facts,
    names_seen,
    pair_strength,
    subjects_of,
    values_of,
)
from lifelong_plugins.dreaming.memory_file import TOPICS, Item, add_items, compact, existing_keys, topic_of
from lifelong_plugins.dreaming.rollback import rollback_run
from lifelong_plugins.dreaming.snippets import parse_snippets

from lifelong.cli import cli

from .conftest import at, dream, record_event, search, snapshot

MEMORY = "# MEMORY\n\n## About me\n- I live in Berlin.\n"
# one fact in three wordings on three days, and a different fact about the same company
SEED = [
    "Fernwood raised a $2M seed round led by Acme Capital.",
    "Acme Capital led Fernwood's seed; it closed at $2M.",
    "Fernwood's $2M round is done, with Acme Capital as lead investor.",
]
OFFICE = [
    "Fernwood moved its office to Leipzig, near the main station.",
    "Fernwood now works out of Leipzig; the old desk is gone.",
    "New office for Fernwood: a floor in Leipzig, five minutes from the station.",
]
DAYS = ["2026-04-02", "2026-04-05", "2026-04-09"]


def daily(day: str, *lines: str) -> str:
    return f"# {day}\n\n## Work\n" + "".join(f"- {line}\n" for line in lines)


def month_files(with_office: bool = True) -> dict[str, str]:
    files = {"MEMORY.md": MEMORY}
    chatter = ["Lunch was too salty.", "Train was 20 minutes late.", "Watched a film in the evening."]
    for i, day in enumerate(DAYS):
        lines = [SEED[i], chatter[i]] + ([OFFICE[i]] if with_office else [])
        files[f"memory/{day}.md"] = daily(day, *lines)
    return files


def line_of(text: str, line: str) -> int:
    return text.split("\n").index(f"- {line}") + 1


def test_paraphrase_siblings_merge_and_their_signals_add_up(dream_host) -> None:
    host = dream_host(month_files(with_office=False))
    files = month_files(with_office=False)
    # one recall per statement, each by a different query on a different day: no line has 3
    queries = ["who backed Fernwood", "Fernwood financing size", "lead investor Fernwood round"]
    for i, day in enumerate(DAYS):
        rel = f"memory/{day}.md"
        n = line_of(files[rel], SEED[i])
        record_event(host, rel, n, n, queries[i], at(day, 18))
    run = dream(host, at("2026-04-10"))
    assert len(run.promoted) == 1, run.reports["deep"]["near_misses"]
    item = run.promoted[0]
    assert item["recalls"] == 3 and item["unique_queries"] == 3 and item["distinct_days"] == 3
    assert item["sources"] == [
        f"memory/{d}.md#L{line_of(files[f'memory/{d}.md'], SEED[i])}-L{line_of(files[f'memory/{d}.md'], SEED[i])}"
        for i, d in enumerate(DAYS)
    ]
    assert item["text"] in SEED and len(item["members"]) == 3
    memory = (host.workspace.root / "MEMORY.md").read_text()
    assert memory.count("key:") == 1 and ",".join(item["sources"]) in memory
    assert memory.startswith(MEMORY) and "## Projects and work" in memory
    # every member is settled: a later night promotes no sibling
    later = dream(host, at("2026-04-11"))
    assert later.promoted == []


def test_different_facts_about_one_subject_do_not_merge() -> None:
    texts = SEED + OFFICE
    names = names_seen(texts)
    views = [fact_view(f"k{i}", t, {f"memory/d{i % 3}.md"}, names) for i, t in enumerate(texts)]
    groups = group_facts(views)  # lexical only (no embedder)
    assert len({groups[f"k{i}"] for i in range(3)}) == 1
    assert len({groups[f"k{i}"] for i in range(3, 6)}) == 1
    assert groups["k0"] != groups["k3"]
    # with similarities just under the bar, the shared name alone joins nothing
    near = group_facts(views, lambda a, b: 0.87, GroupingConfig(cosine=0.88))
    assert near["k3"] != near["k0"]
    # one word swapped in the same words is another fact, and no chain of similar lines joins them
    emma = frozenset({"emma"})
    allergies = [
        fact_view("k1", "No kiwi for Emma, she reacts badly; check every menu.", {"memory/a.md"}, emma),
        fact_view("k2", "Emma is allergic to kiwi.", {"memory/b.md"}, emma),
        fact_view("s1", "No shellfish for Emma, she reacts badly; check every menu.", {"memory/c.md"}, emma),
        fact_view("s2", "Emma is allergic to shellfish.", {"memory/d.md"}, emma),
    ]
    allergies += [
        fact_view("p2", "Parked the car on level 2 of the Mall of Berlin garage.", {"memory/e.md"}, emma),
        fact_view("p5", "Parked the car on level 5 of the Mall of Berlin garage.", {"memory/f.md"}, emma),
    ]
    apart = group_facts(allergies, lambda a, b: 0.97)
    assert apart["p2"] != apart["p5"]
    assert apart["k1"] == apart["k2"] and apart["s1"] == apart["s2"] and apart["k1"] != apart["s1"]
    # two lines of one daily are two facts, however alike
    same_day = [
        fact_view("a", SEED[0], {"memory/x.md"}, names),
        fact_view("b", SEED[1], {"memory/x.md"}, names),
    ]
    assert group_facts(same_day) == {"a": "a", "b": "b"}


def test_a_code_identifies_a_fact_and_a_date_in_any_order_does_not() -> None:
    """A wifi password written three ways joins on the code ("cobalt-fox-21" starts with a letter,
    like "June 12", but is no date); a date in either order, or in numbers, identifies nothing."""
    ident = {
        t: fact_view("k", t, {"memory/a.md"}).ident
        for t in (
            "Wifi at home changed: cobalt-fox-21.",
            "Flight LH1234 on 12 May.",
            "Teeth cleaning on July 24, 9:15.",
            "Meeting on 2026-05-12 at 10:00.",
            "Pay on 12.05.2026.",
        )
    }
    assert list(ident.values()) == [
        frozenset({"cobalt-fox-21"}),
        frozenset({"lh1234"}),
        frozenset({"9:15", "09:15"}),
        frozenset({"10:00"}),
        frozenset(),
    ]
    wifi = [
        fact_view("a", "Wifi at home changed: cobalt-fox-21.", {"memory/a.md"}),
        fact_view("b", "New router at the flat, password cobalt-fox-21.", {"memory/b.md"}),
        fact_view("c", "The home wifi password is now cobalt-fox-21.", {"memory/c.md"}),
    ]
    # the bundled model puts these wordings at 0.91-0.95 (a generated month): a shared code joins
    groups = group_facts(wifi, lambda a, b: 0.89)
    assert len(set(groups.values())) == 1


def test_a_time_of_day_is_one_value_however_it_is_written() -> None:
    """ "18:00", "6 pm" and "six in the evening" are one value, so the three wordings of a training
    schedule join without an embedder; money and versions with a dot are not times."""
    assert clock_times("at 18:00, or 6 pm, or six in the evening, or 6.30pm") == {"18:00", "18:30"}
    assert clock_times("standup at 9:15; lunch at noon; 12 am") == {"09:15", "12:00", "00:00"}
    assert clock_times("paid 12.50 euros for version 1.25; score 3:1; on 12.05.2026") == frozenset()
    # an hour after "at" with no part of the day is the morning's or the evening's, where it ends
    # the clause or comes before "on", "every"...; not "at one point" or "at 3 flats"
    assert clock_times("every Saturday at nine.") == {"09:00", "21:00"}
    assert clock_times("dinner at 8 on Friday") == {"08:00", "20:00"}
    assert clock_times("at one point we looked at 3 flats") == frozenset()
    # "at 9.15" is not "at 9." followed by 15: with a part of the day it is 09:15, alone (12.50
    # is more often money) nothing
    assert clock_times("meet at 9.15 am") == {"09:15"}
    assert clock_times("meet at 9.15") == frozenset()
    # "quarter past five" is both readings, unless a part of the day says which
    assert clock_times("the quarter past five dialect class") == {"05:15", "17:15"}
    assert clock_times("half past 6 in the evening; quarter to nine am") == {"18:30", "08:45"}
    swim = [
        "Noor starts swimming lessons: Saturdays 9am at De Wetering pool.",
        "Pool with Noor — her lesson at De Wetering is every Saturday at nine.",
        "Standup moved to 9:15 every Saturday at De Wetering pool with Noor.",
    ]
    names = names_seen(swim)
    lesson, nine, standup = (fact_view(f"s{i}", t, {f"memory/s{i}.md"}, names) for i, t in enumerate(swim))
    assert not conflicting(lesson, nine)  # "at nine" was no value: two words swapped made two facts
    assert conflicting(nine, standup)  # 9:15 is neither reading of "at nine"
    texts = [
        "Coach Lina trains me on Tuesdays and Thursdays at 18:00.",
        "Sessions with Lina: Tue and Thu, six in the evening.",
        "Gym slots are twice a week with Lina, Tuesday/Thursday at 6 pm.",
        "Coach Lina charges EUR 55 per session.",
    ]
    names = names_seen(texts)
    views = [fact_view(f"k{i}", t, {f"memory/d{i}.md"}, names) for i, t in enumerate(texts)]
    groups = group_facts(views)
    assert groups["k0"] == groups["k1"] == groups["k2"] != groups["k3"]


def test_a_number_is_one_value_however_it_is_grouped() -> None:
    """ "0113 496 0000" and "0113-496-0000" are one phone number (their digit groups were values
    that each excluded the other: two facts); another number, or two ISO dates sharing a year,
    still differ."""
    phone = ["Kasia's number is 0113 496 0000.", "Call Kasia on 0113-496-0000 if the van is late."]
    other = "Call Kasia on 0113-496-0001 if the van is late."
    names = names_seen([*phone, other])
    a, b, c = (fact_view(f"p{i}", t, {f"memory/p{i}.md"}, names) for i, t in enumerate([*phone, other]))
    assert "01134960000" in a.values & b.values and not conflicting(a, b)
    assert conflicting(b, c)
    # a date is not a number in groups; in digits it is also the date a month name gives
    assert values_of("Launch on 2026-05-12.") == {"2026-05-12", "12 may"}
    # an amount with thousands separators is its plain digits too (written-2 kept "1,250 €" and
    # "the 1250 euros" of one rent apart); a price with cents is not
    rent = ["Rent for the flat: 1,250 € a month by bank transfer.", "Paid the 1250 euros for the flat."]
    r1, r2 = (fact_view(f"r{i}", t, {f"memory/r{i}.md"}) for i, t in enumerate(rent))
    assert "1250" in r1.values & r2.values and not conflicting(r1, r2)
    assert values_of("Miete €1.250") >= {"1250"} and values_of("costs 12.50 euros") == {"12.50"}


def test_a_date_is_one_value_however_written_and_an_incidental_name_does_not_split_a_fact() -> None:
    """ "14 March" and "the 14th of March" are one date (they were two values that each excluded
    the other); two statements of one fact that name different people in different places are
    one fact, while a name swapped in the same place, or names in statements that share nothing
    else, keep two facts apart."""

    def view(key: str, text: str, names: frozenset[str]) -> FactView:
        return fact_view(key, text, {f"memory/{key}.md"}, names)

    birthday = [
        "Reminder: Chidi's birthday is 14 March, she wants the theatre voucher again.",
        "Chidi called, already planning for her birthday on the 14th of March.",
    ]
    names = names_seen(birthday)
    a, b = (view(f"b{i}", t, names) for i, t in enumerate(birthday))
    assert {"14", "14 march"} <= a.values & b.values
    assert not conflicting(a, b)
    sesame = [
        "Nursery says Tobi must not have anything with sesame. Allergy confirmed by the GP.",
        "Birthday party invite for Tobi from Amara: told her mum no sesame at all.",
    ]
    names = names_seen(sesame)
    assert not conflicting(*(view(f"s{i}", t, names) for i, t in enumerate(sesame)))
    offices = ["Fernwood opens an office in Hamburg in May.", "Fernwood opens an office in Dresden in May."]
    names = names_seen(offices)
    assert conflicting(*(view(f"o{i}", t, names) for i, t in enumerate(offices)))
    names = names_seen(SEED + OFFICE)
    assert conflicting(view("s", SEED[0], names), view("o", OFFICE[0], names))


def test_a_third_wording_just_under_the_bar_joins_the_group_it_shares_a_rare_word_with() -> None:
    """The allergy's third wording is under the cosine bar with both others (0.84, 0.87, as the
    bundled model put them) but names Greta and "kiwi" like each of them, a word no other line
    holds: it joins. A line about Greta's school at the same similarity shares no such word and
    stays out; a kiwi line 0.10 under the bar stays out, and once a fourth line holds the word it
    no longer tells which group a line belongs to."""
    texts = {
        "a": "Greta is allergic to kiwi.",
        "b": "The allergist confirmed it again: Greta must avoid kiwi.",
        "c": "No kiwi for Greta, she reacts badly; check every menu.",
        "s": "School day for Greta ends at 15:30; Tom covers Fridays.",
        "k": "Greta had kiwi juice at the party.",
    }
    names = names_seen(texts.values())
    views = [fact_view(k, t, {f"memory/{k}.md"}, names) for k, t in texts.items()]
    table = {("a", "b"): 0.92, ("a", "c"): 0.84, ("b", "c"): 0.87, ("a", "s"): 0.85, ("b", "s"): 0.86}

    def cosine(x: str, y: str) -> float:
        return table.get((x, y), 0.78)

    groups = group_facts([v for v in views if v.key != "k"], cosine)
    assert groups["a"] == groups["b"] == groups["c"] != groups["s"]
    groups = group_facts([v for v in views if v.key != "c"], cosine)
    assert groups["a"] == groups["b"] != groups["k"]
    groups = group_facts(views, cosine)
    assert groups["a"] == groups["b"] and groups["c"] != groups["a"] and groups["k"] != groups["a"]


def test_one_borderline_pair_does_not_chain_two_facts_about_one_subject() -> None:
    """The GP's three wordings and the practice's opening hours' three share the doctor's name;
    one cross pair at the bar (0.89, as the embedder put it on a generated month) must not join
    the two groups, while a third wording that pairs with only one of two siblings still joins."""
    gp = [
        "My GP: Dr. Okafor, practice on Bergmannstraße.",
        "Dr. Okafor: is my family doctor, at the Bergmannstraße practice.",
        "For check-ups I see Dr. Okafor on Bergmannstraße.",
    ]
    hours = [
        "No appointments with Dr. Okafor midweek afternoons; Wednesdays they shut at 12.",
        "Dr. Okafor doesn't see patients Wednesday after lunch.",
        "Dr. Okafor: has the practice closed on Wednesday afternoons.",
    ]
    texts = gp + hours
    names = names_seen(texts)
    views = [fact_view(f"k{i}", t, {f"memory/d{i}.md"}, names) for i, t in enumerate(texts)]
    same = {
        frozenset(p)
        for p in [("k0", "k1"), ("k0", "k2"), ("k1", "k2"), ("k3", "k4"), ("k3", "k5"), ("k4", "k5")]
    }

    def cosine(a: str, b: str) -> float:
        if frozenset((a, b)) == frozenset(("k1", "k5")):
            return 0.89  # the bridge
        return 0.93 if frozenset((a, b)) in same else 0.80

    groups = group_facts(views, cosine)
    assert len({groups[k] for k in ("k0", "k1", "k2")}) == 1
    assert len({groups[k] for k in ("k3", "k4", "k5")}) == 1
    assert groups["k0"] != groups["k3"]
    # a wording that pairs with one of the hours' two other wordings only still joins them
    two = [v for v in views if v.key in ("k3", "k4", "k5")]

    def loose(a: str, b: str) -> float:
        return 0.80 if frozenset((a, b)) == frozenset(("k3", "k5")) else 0.93

    assert len(set(group_facts(two, loose).values())) == 1
    # the GP's one wording and the hours' two, joined by one of their two cross pairs at the bar
    # (0.883 on a generated month), stay two facts
    three = [v for v in views if v.key in ("k1", "k4", "k5")]

    def bridged(a: str, b: str) -> float:
        pair = frozenset((a, b))
        return 0.93 if pair == frozenset(("k4", "k5")) else 0.883 if pair == frozenset(("k1", "k5")) else 0.80

    grouped = group_facts(three, bridged)
    assert grouped["k4"] == grouped["k5"] != grouped["k1"]


def test_facts_without_a_name_merge_on_an_identifying_value_not_on_a_date_or_a_template() -> None:
    """ "Standup moved to 9:15" has no name to share: its wordings join on the time they share
    (real embedder cosines), while a dentist visit at the same time, a flight on the same date,
    and chit-chat written from one template ("Tried the new ..., too ...") stay apart."""
    import numpy as np
    from lifelong_plugins.embeddings.providers import LocalE5

    lines = {
        "s0": "Daily standup is now at 9:15, not 9:30 any more.",
        "s1": "Reminder: the morning team sync starts at 9:15 from now on.",
        "s2": "Standup moved to 9:15, every weekday.",
        "r0": "Rent is EUR 1,420 a month, due on the 1st.",
        "r1": "Paid this month's rent today, 1,420 euros; it goes out on the first.",
        "r2": "Monthly rent for the flat: EUR 1,420, transferred on the 1st.",
        "d0": "Dentist appointment on June 12 at 9:15.",
        "d1": "Teeth cleaning is booked for June 12, 9:15; bring the insurance card.",
        "f0": "Booked TP 541 for June 12, departure 10:40.",
        "c0": "Tried the new office chair, too loud.",
        "c1": "Tried the new espresso machine, too tight.",
        "c2": "Tried the new standing desk, too loud.",
        "m0": "08:00 levothyroxine (75mcg), then waited half an hour before coffee.",
        "m1": "Collected the repeat prescription: my thyroid tablets, one 75mcg a day.",
    }
    keys = list(lines)
    names = names_seen(lines.values())
    views = [fact_view(k, t, {f"memory/{k}.md"}, names) for k, t in lines.items()]
    vecs = LocalE5().embed_passages(list(lines.values()))
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)

    def cosine(a: str, b: str) -> float:
        return float(vecs[keys.index(a)] @ vecs[keys.index(b)])

    groups = group_facts(views, cosine)
    assert groups["s0"] == groups["s1"] == groups["s2"]
    assert groups["r0"] == groups["r1"] == groups["r2"]
    assert groups["d0"] == groups["d1"] != groups["s0"]  # same time, another fact
    assert groups["f0"] not in (groups["d0"], groups["s0"])  # same date, another fact
    # a dose (an amount, a phone number, a code) is shared by few things: no shared word needed
    assert groups["m0"] == groups["m1"] and not (views[-1].rest & views[-2].rest)
    assert len({groups["c0"], groups["c1"], groups["c2"]}) == 3  # one template, three one-offs
    assert cosine("c0", "c1") > 0.92  # which the embedder alone could not tell apart
    # without an embedder only near-identical wording joins lines without a name
    assert len({group_facts(views)[k] for k in ("s0", "s1", "s2")}) == 3


def test_subject_context_kept_for_nested_items_and_headed_sections() -> None:
    text = (
        "# 2026-04-02\n\n## Notes\n- Emma Rees\n  - prefers short messages after work\n"
        "- Fernwood:\n  - hiring two engineers\n\n### Coach Nora\n- charges EUR 55 per session.\n"
        "\n## Work\n- Standup at 9:30 in room 4.\n- Dr. Yilmaz\n  - is my family doctor, at the Torstraße practice.\n"
    )
    got = [(s.start_line, s.text) for s in parse_snippets(text, "memory/2026-04-02.md")]
    assert got == [
        (5, "Emma Rees: prefers short messages after work"),
        (7, "Fernwood: hiring two engineers"),
        (10, "Coach Nora: charges EUR 55 per session."),
        (13, "Standup at 9:30 in room 4."),
        # "doctor" does not name "Dr. Yilmaz" (search reads the title as the word)
        (15, "Dr. Yilmaz: is my family doctor, at the Torstraße practice."),
    ]


def test_quiet_night_occurrences_are_counted(dream_host) -> None:
    line = "Rent is EUR 1180, due on the 3rd to Karl."
    host = dream_host({"MEMORY.md": MEMORY, "memory/2026-04-01.md": daily("2026-04-01", line)})
    dream(host, at("2026-04-02"))
    root = host.workspace.root
    (root / "memory/2026-04-02.md").write_text(daily("2026-04-02", line))  # restated, nothing else new
    quiet = dream(host, at("2026-04-03"))
    assert quiet.status == "ok"
    key = next(c.key for c in quiet.pool.candidates.values() if c.text == line)
    assert [o["day"] for o in explain(host, key)["occurrences"]] == ["2026-04-01", "2026-04-02"]


def test_inserting_lines_before_the_nightly_run_keeps_attribution(dream_host) -> None:
    target = "Fernwood raised a $2M seed round led by Acme Capital."
    text = daily("2026-04-02", "Lunch was too salty.", "Train was 20 minutes late.", target)
    host = dream_host({"MEMORY.md": MEMORY, "memory/2026-04-02.md": text})
    root = host.workspace.root
    result = search(host, "Acme Capital seed", at("2026-04-02", 18))
    hit = next(r for r in result["results"] if r["path"] == "memory/2026-04-02.md")
    assert hit["start_line"] <= line_of(text, target) <= hit["end_line"]
    # before 03:00 someone adds a block above: every line moves down by four
    (root / "memory/2026-04-02.md").write_text(
        "# 2026-04-02\n\n## Morning\n- Slept badly.\n- Ran 5 km.\n- Called the bank.\n- Fed the cat.\n"
        + text[len("# 2026-04-02\n\n") :]
    )
    run = dream(host, at("2026-04-03"))
    cand = next(c for c in run.pool.candidates.values() if c.text == target)
    data = explain(host, cand.key)
    assert [r["query"] for r in data["recalls"]] == ["Acme Capital seed"]
    light = run.reports["light"]
    assert light["events_attributed"] >= 1 and light["events_moved"] >= 1, light


def test_same_night_rerun_adds_no_second_light_boost(dream_host) -> None:
    host = dream_host(month_files())
    first = dream(host, at("2026-04-10"))
    key = next(c.key for c in first.pool.candidates.values() if c.text == SEED[2])
    hits = explain(host, key)["light"]["hits"]
    assert hits == 1
    dream(host, at("2026-04-10", 3, 40))
    assert explain(host, key)["light"]["hits"] == 1
    (host.workspace.root / "memory/2026-04-10.md").write_text(daily("2026-04-10", "Watched the match."))
    dream(host, at("2026-04-11"))  # the next night boosts again
    assert explain(host, key)["light"]["hits"] == 2


def test_eviction_is_capped_prefers_merging_and_keeps_human_text() -> None:
    items = [
        Item(
            f"{i:012x}",
            f"Old fact number {i} with a rather long tail of words",
            f"memory/2026-01-{i + 1:02d}.md#L3-L3",
            f"2026-01-{i + 1:02d}",
            "other",
        )
        for i in range(20)
    ]
    text, _ = add_items(MEMORY, items)
    text = text.replace(
        f"key:{0:012x} src:memory/2026-01-01.md#L3-L3 on:2026-01-01 -->",
        f"key:{0:012x} src:memory/2026-01-01.md#L3-L3 on:2026-01-01 --> (checked with Karl)",
    )
    budget = len(text.encode()) - 1500
    out, report = compact(text, budget, keep=set(), max_evict_fraction=0.1)
    assert report.evict_cap == 2 and len(report.evicted) == 2 and report.over_budget
    assert "src:" not in out.split("topic-other:start")[1].split("(checked")[1]  # citations dropped first
    assert "(checked with Karl)" in out and f"key:{0:012x}" in out  # human text on the line survives
    assert [e["key"] for e in report.evicted] == [f"{1:012x}", f"{2:012x}"]  # oldest first
    assert out.startswith(MEMORY) and len(existing_keys(out)) == 18
    # merging alone is enough when it fits: nothing evicted
    _, gentle = compact(text, len(text.encode()) - 300, keep=set())
    assert gentle.evicted == [] and gentle.merged_regions == ["topic-other"]


def test_own_cli_output_pasted_into_a_daily_is_never_evidence(tmp_path) -> None:
    root = tmp_path / "ws"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(root)]).exit_code == 0
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    for p in (root / "memory").glob("*.md"):
        p.unlink()
    files = month_files()
    for rel, body in files.items():
        (root / rel).write_text(body)
    w = ["--workspace", str(root), "--now", "2026-04-10T03:00"]
    outputs = []
    for q in ("Acme Capital seed", "Fernwood office Leipzig"):
        outputs.append(runner.invoke(cli, [*w, "search", q]).output)
    outputs.append(runner.invoke(cli, [*w, "search", "Fernwood", "--explain"]).output)
    for args in (["dream", "--dry-run"], ["dream", "--backfill", "--dry-run"]):
        outputs.append(runner.invoke(cli, [*w, *args]).output)
    pasted = "\n".join(outputs)
    assert "S=" in pasted and "Source: memory/" in pasted and "rel " in pasted
    note = "# 2026-04-10\n\n## Pasted\n" + pasted + "\n## Work\n- Book the dentist for May.\n"
    got = [s.text for s in parse_snippets(note, "memory/2026-04-10.md")]
    assert got == ["Book the dentist for May."], got


def test_backfill_proposes_a_fact_stated_on_three_days(dream_host) -> None:
    host = dream_host(month_files(with_office=False))
    run = dream(host, at("2026-04-10"), backfill=True)
    assert [p["text"] in SEED for p in run.promoted] == [True]
    assert len(run.promoted[0]["sources"]) == 3
    assert "Lunch" not in (host.workspace.root / "MEMORY.md").read_text()


def test_old_per_night_blocks_keep_working_and_roll_back_exactly(dream_host) -> None:
    legacy = (
        MEMORY + "\n<!-- lifelong:promoted-20260301-030000-ab12:start -->\n## Promoted 2026-03-01\n"
        "- The standup is at 9:30. <!-- key:0123456789ab src:memory/2026-03-01.md#L4-L4 -->\n"
        "<!-- lifelong:promoted-20260301-030000-ab12:end -->\n"
    )
    host = dream_host({**month_files(with_office=False), "MEMORY.md": legacy})
    root = host.workspace.root
    before = snapshot(root)
    run = dream(host, at("2026-04-10"), backfill=True)
    text = (root / "MEMORY.md").read_text()
    assert text.startswith(legacy) and "<!-- lifelong:topic-projects:start -->" in text
    assert {"0123456789ab", run.promoted[0]["key"]} <= existing_keys(text)
    rollback_run(host, run.run_id)
    assert (root / "MEMORY.md").read_bytes() == before["MEMORY.md"]


def test_topics_are_a_bounded_set_of_sections() -> None:
    items = [
        Item("a" * 12, "Emma Rees has her birthday on May 7.", "s", "2026-04-01"),
        Item("b" * 12, "Mila is allergic to peanuts; her school knows.", "s", "2026-04-01"),
        Item("c" * 12, "Karl gets the rent, EUR 1180, by the 3rd.", "s", "2026-04-01"),
        Item("d" * 12, "I prefer aisle seats on flights.", "s", "2026-04-01"),
        Item("e" * 12, "The Juniper launch is set for May 12.", "s", "2026-04-01"),
    ]
    text, touched = add_items(MEMORY, items)
    headings = [line for line in text.split("\n") if line.startswith("## ")]
    assert headings == [
        "## About me",
        "## People",
        "## Family",
        "## Projects and work",
        "## Home and money",
        "## Preferences",
    ]
    assert len(touched) == 5 and len(TOPICS) <= 8
    again, _ = add_items(text, [Item("f" * 12, "Emma Rees prefers short messages.", "s", "2026-04-02")])
    assert again.count("## People") == 1
    # a section created later still takes its place in topic order, human text untouched
    later, _ = add_items(again, [Item("9" * 12, "My GP is Dr. Weber.", "s", "2026-04-03")])
    headings = [line for line in later.split("\n") if line.startswith("## ")]
    assert headings.index("## Health") == headings.index("## Projects and work") + 1
    assert (
        later.startswith(MEMORY)
        and existing_keys(later) >= existing_keys(again)
        and json.dumps(again).count("lifelong:topic-people:start") == 1
    )


def test_an_items_own_tag_names_its_topic() -> None:
    assert topic_of("08:00 — physio w/ [[Kasia]], left knee #health") == "health"
    assert topic_of("Boiler serviced by Patel Heating every January #home") == "home"
    assert topic_of("invoice to Norland Press, Gareth approves them #work") == "projects"
    assert topic_of("#kids swimming on Saturdays") == "family"
    # not tags: an issue number, a heading anchor, C#, a tag no topic names
    assert topic_of("Gareth asked about issue #42") == "other"
    assert topic_of("see memory/2026-11-02.md#L3 and C# code") == "other"
    assert topic_of("Emma Rees has her birthday on May 7 #random") == "people"


def test_topic_words_that_mean_something_else_file_no_item() -> None:
    """evals/topics.py: an insurance card, being on call and an adult's class are no People or
    Family words (15 -> 6 items under a wrong heading); a dental visit is Health."""
    assert topic_of("Teeth cleaning is booked for May 12, 8:45; bring the insurance card.") == "health"
    assert topic_of("I'm on call every second week now; the rotation starts on Mondays.") == "projects"
    assert topic_of("Then at 17:15 my first Züritüütsch class at the Volkshochschule.") == "other"
    assert topic_of("Mila's class teacher is Mr. Hale; school pickup at 15:30.") == "family"


def _recalled_seed_month(dream_host, config=None):
    files = month_files(with_office=False)
    host = dream_host(files, config)
    queries = ["who backed Fernwood", "Fernwood financing size", "lead investor Fernwood round"]
    for i, day in enumerate(DAYS):
        rel = f"memory/{day}.md"
        n = line_of(files[rel], SEED[i])
        record_event(host, rel, n, n, queries[i], at(day, 18))
    return host


def test_with_a_model_the_fact_is_one_merged_sentence(dream_host) -> None:
    merged = "Fernwood raised a $2M seed round, led by Acme Capital."
    host = _recalled_seed_month(dream_host, {"llm": {"model": "openai/gpt-4o-mini"}})
    run = dream(host, at("2026-04-10"), llm_kwargs={"mock_response": merged})
    assert [p["text"] for p in run.promoted] == [merged] and run.promoted[0]["statement"] == "model"
    assert len(run.promoted[0]["sources"]) == 3
    assert f"- {merged} <!-- key:" in (host.workspace.root / "MEMORY.md").read_text()


def test_a_merged_sentence_that_drops_an_amount_is_refused(dream_host) -> None:
    host = _recalled_seed_month(dream_host, {"llm": {"model": "openai/gpt-4o-mini"}})
    run = dream(host, at("2026-04-10"), llm_kwargs={"mock_response": "Fernwood raised a seed round."})
    assert run.promoted[0]["statement"] == "member" and run.promoted[0]["text"] in SEED


def test_a_note_about_its_own_day_collects_no_later_recalls_however_the_day_is_written(dream_host) -> None:
    """ "comes tmrw" is about the day after it was written, as "comes tomorrow" is: looking it up
    on later days is no evidence that it lasts. The same note without the day collects them."""

    def recalls(line: str) -> int:
        files = {"MEMORY.md": MEMORY} | {f"memory/{d}.md": daily(d, line) for d in DAYS}
        host = dream_host(files)
        for i, day in enumerate(DAYS):
            later = (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()
            record_event(
                host,
                f"memory/{day}.md",
                4,
                4,
                ["plumber visit", "when is Novak here", "Novak"][i],
                at(later, 18),
            )
        run = dream(host, at("2026-04-12"))
        found = [s for s in run.reports["deep"]["near_misses"] + run.promoted if "Novak" in s["text"]]
        return found[0]["recalls"]

    assert recalls("Plumber Novak comes tmrw between 14:00 and 16:00.") == 0
    assert recalls("Plumber Novak comes tomorrow between 14:00 and 16:00.") == 0
    assert recalls("Plumber Novak comes on Tuesdays between 14:00 and 16:00.") == 3


def test_a_date_or_a_number_in_words_is_one_value_however_it_is_written():
    """Independently written months (evals/months/written-5, -7) stated one fee as "68 €" and
    "sixty-eight euros", one anniversary as "19 November" and "19/11": each pair read as two
    different values, which keeps two statements of one fact apart."""
    assert {"68"} <= values_of("the building fee, sixty-eight euros, comes out every month")
    assert {"120"} <= values_of("one hundred and twenty people came")
    assert not values_of("the two of us, one of them")  # one to twelve in words are words
    assert "19 november" in values_of("Booked Talisman for 19/11 — our anniversary.")
    assert "12 november" in values_of("committee meets 12.11. at two")
    assert values_of("at 9.15 am") & {"15 september", "9 september"} == set()  # a time, not a date
    assert values_of("costs 12.50 euros") == {"12.50"}
    # one plate written two ways is one value: "482x" and "kdj-482x" alone would be two
    assert values_of("Reg: KDJ 482X") & values_of("car reg for the visitor log: KDJ-482X") == {"kdj482x"}
    # a comma or full stop after an amount is punctuation, not part of it
    assert values_of("gastos fijos: comunidad €68, día 5") == {"€68", "68", "5"}
    # both readings when a day and a month could be either
    assert {"3 april", "4 march"} <= values_of("on 3/4")
    a = fact_view("a", "Anniversary with Baraka is 19 November, six years.", {"memory/a.md"})
    b = fact_view("b", "Booked Talisman for 19/11, Baraka's anniversary dinner.", {"memory/b.md"})
    assert not conflicting(a, b)


def test_only_values_of_one_kind_contradict():
    """Two statements contradict on values of the same kind (two times, two amounts); a line's
    incidental numbers of other kinds ("6x800" against "400m" and "18:30") and the time that
    opens a log line ("09:30 ...", when it was written) do not keep one fact's wordings apart."""
    club = [
        "18:30 first Tuesday session with LC Zürich at Letzigrund, 400m warm-up laps",
        "Letzigrund again this evening with the club, 6x800, dead legs",
    ]
    a, b = (fact_view(f"c{i}", t, {f"memory/c{i}.md"}) for i, t in enumerate(club))
    assert a.strong and b.strong and not (a.strong & b.strong) and not conflicting(a, b)
    logs = [
        "09:30 Beat Hürlimann walked me through the Picarro and the cold lab freezer",
        "14:10 the Picarro jammed again, Beat Hürlimann fixed it and restocked the cold lab",
    ]
    names = names_seen(logs)
    c, d = (fact_view(f"l{i}", t, {f"memory/l{i}.md"}, names) for i, t in enumerate(logs))
    assert not conflicting(c, d)
    # the same kind still contradicts: another time, another amount
    e = fact_view("e", "Standup is at 9:15 every morning", {"memory/e.md"})
    f = fact_view("f", "Standup is at 9:30 every morning", {"memory/f.md"})
    assert conflicting(e, f)
    # a date against a time: two things that happen (Emma Yilmaz's birthday, the plumber Yilmaz)
    names = names_seen(["Emma Yilmaz has her birthday on July 14."])
    bday = fact_view("b", "Emma Yilmaz has her birthday on July 14.", {"memory/b.md"}, names)
    plumber = fact_view(
        "p", "The plumber Yilmaz comes between 14:00 and 16:00 today.", {"memory/p.md"}, names
    )
    assert conflicting(bday, plumber)
    names = names_seen(["Coach Sofia charges EUR 70 per session."])
    price = fact_view("c", "Coach Sofia charges EUR 70 per session.", {"memory/c.md"}, names)
    times = fact_view("t", "Sessions with Sofia: Tue and Thu, six in the evening.", {"memory/t.md"}, names)
    assert conflicting(price, times)  # seed 30 merged these two when only one kind contradicted
    g = fact_view("g", "Rent for the flat is 950 € a month", {"memory/g.md"})
    h = fact_view("h", "Rent for the flat is 1000 € a month", {"memory/h.md"})
    assert conflicting(g, h)


def test_a_code_with_digits_is_a_value_not_a_name():
    """Written month 6: "N2" (liquid nitrogen) and the freezer "F3" were read as names, so a
    line naming them 'named something' the other wordings of the fact did not."""
    assert subjects_of("order N2 from the store, samples in freezer F3") == frozenset()
    assert {"n2", "f3"} <= values_of("order N2 from the store, samples in freezer F3")


def test_a_log_time_does_not_raise_the_similarity_bar():
    """A pair where one wording states an identifying value and the other none needs a higher
    cosine (a launch date and who writes its notes); the time opening a log line is when it was
    written, not such a value (written month 5: "07:45 handover. New supervisora started today:
    Rosario Llorens" and "Rosario Llorens, our jefa de planta")."""
    cfg = GroupingConfig()
    logged = fact_view("a", "07:45 handover. New supervisor started today: Rosario Llorens.", {"m/a.md"})
    plain = fact_view("b", "Work is better lately; Rosario Llorens, our ward boss, is fair.", {"m/b.md"})
    dated = fact_view("c", "Rosario Llorens starts as our ward boss on 2026-08-03.", {"m/c.md"})
    assert pair_strength(logged, plain, 0.89, cfg) == pytest.approx(1.89)
    assert pair_strength(dated, plain, 0.89, cfg) is None  # a real value on one side only
    assert pair_strength(dated, plain, 0.91, cfg) == pytest.approx(1.91)


def test_a_quoted_word_an_initialled_surname_and_capitals_are_read_right():
    """Written month 6: a word opening a quotation ('We did numbers. "Zwänzg" — okay') is
    capitalised as a sentence is, not a name; the surname after an initial ("Prof. A.
    Vermeulen") is one; a word in capitals is emphasis when the notes write it in lower case
    elsewhere ("pill FIRST", written month 8) and an acronym when they never do ("VAW")."""
    texts = [
        'Dialect class at quarter past five. We did numbers. "Zwänzg" — okay.',
        "Hauptbetreuerin: Prof. A. Vermeulen (VAW), since spring.",
        "Note taped to the kettle: thyroid pill FIRST, tea 30 min later.",
        "The first coffee of the day is the best one.",
    ]
    names = names_seen(texts)
    assert subjects_of(texts[0], names) == frozenset()
    assert subjects_of(texts[1], names) == {"vermeulen", "vaw"}
    assert subjects_of(texts[2], names) == frozenset()
    assert "first" not in names and "vaw" in names
    # without the other notes a word in capitals is not known to be a name
    assert subjects_of("Ask VAW about it") == frozenset()


def test_a_log_line_opening_with_a_dotted_time_states_that_time():
    """ "17.15 Swiss German, lesson 4" opens with the time the lesson starts, the same time as
    "at 17:15 my first class"; inside a line "12.50" stays an amount."""
    assert clock_times("17.15 Swiss German, lesson 4") == {"17:15"}
    assert clock_times("- 9.05 called the bank") == {"09:05"}
    assert clock_times("paid 12.50 today") == frozenset()
    assert "17:15" in values_of("17.15 Swiss German, lesson 4")


def test_a_name_in_either_order_and_the_pieces_of_a_value_measure_nothing():
    """Written month 6: "Beat Hürlimann (lab technician, HIL E floor)" and "lab: Hürlimann (Beat),
    technician — ext. 2 33 18" name the same two things ("Beat Hürlimann" in either order, and
    HIL), and the groups of a number written in groups, the day of a date and the count of an
    amount are no plain numbers of their own (so no 'value only one states' bar, no contradiction
    with another line's plain number)."""
    texts = [
        "09:30 Beat Hürlimann (lab technician, HIL E floor) walked me through the Picarro again. He's"
        " the one to go to when it throws errors, not the postdocs.",
        "lab: Hürlimann (Beat), technician — ext. 2 33 18, office HIL E 21.1",
    ]
    names = names_seen(texts)
    a, b = (fact_view(f"t{i}", t, {f"memory/t{i}.md"}, names) for i, t in enumerate(texts))
    assert a.phrases & b.phrases == {"beat hürlimann", "hil"}
    assert pair_strength(a, b, 0.5, GroupingConfig()) is not None  # two names shared: one fact
    phone = fact_view("p", "car stuff: Vicent @ Benlloch: 963 47 22 18, ask for him", {"memory/p.md"})
    assert phone.kinds == {"long"}
    race = fact_view("r", "signed up for the Lausanne half, Sun 25 Oct, bib comes by post", {"memory/r.md"})
    assert race.kinds == {"date"}
    km = fact_view("k", "the service is due at 5000 km", {"memory/k.md"})
    assert km.kinds == {"unit:km"}
