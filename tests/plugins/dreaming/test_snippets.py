"""Daily notes into snippets, near-duplicate search and attribution (pure)."""

from __future__ import annotations

import datetime as dt
import random

from lifelong_plugins.dreaming.attribution import (
    Credit,
    Vocabulary,
    attribute,
    attribution_tokens,
    credit_search,
)
from lifelong_plugins.dreaming.candidates import NearDuplicateIndex
from lifelong_plugins.dreaming.snippets import (
    Snippet,
    carries_marker,
    content_tokens,
    is_report_junk,
    jaccard,
    parse_snippets,
    text_key,
)

from lifelong.contracts import RecallEvent
from lifelong.text import stem

DAILY = """---
mood: fine
---
# 2026-03-16

## Offsite
- Gut Boltenhagen confirmed the booking for April 14-16; invoice due April 1.
- [x] Sent the deposit
  to the venue.
    - nested: ask about vegetarian options

## Team
Priya proposed moving the Android release
to April 28.

```
- code is never a snippet
```

| place | note |
|---|---|
| Gut Boltenhagen | venue contact: Frau Ahrens |

- ok
<!-- lifelong:flush-1:start -->
- generated inside a managed region
<!-- lifelong:flush-1:end -->
- Candidate: user likes espresso (confidence 0.82, evidence: memory/2026-03-16.md)
- Already promoted fact <!-- key:3f2a9c1b7d10 src:memory/2026-03-04.md#L4-L4 -->
- Source: memory/2026-03-04.md#L4-L4
"""


def test_parse_daily_snippets_with_exact_lines_and_headings() -> None:
    snippets = parse_snippets(DAILY, "memory/2026-03-16.md")
    got = [(s.start_line, s.end_line, s.heading, s.text) for s in snippets]
    assert got == [
        (
            7,
            7,
            "2026-03-16 > Offsite",
            "Offsite: Gut Boltenhagen confirmed the booking for April 14-16; invoice due April 1.",
        ),
        (8, 9, "2026-03-16 > Offsite", "Offsite: Sent the deposit to the venue."),
        (10, 10, "2026-03-16 > Offsite", "Offsite: nested: ask about vegetarian options"),
        (13, 14, "2026-03-16 > Team", "Priya proposed moving the Android release to April 28."),
        (22, 22, "2026-03-16 > Team", "Gut Boltenhagen — note: venue contact: Frau Ahrens"),  # a table row
    ]
    assert snippets[0].day.isoformat() == "2026-03-16"
    assert snippets[0].citation == "memory/2026-03-16.md#L7-L7"


def test_the_suites_own_output_is_never_a_snippet() -> None:
    texts = " | ".join(s.text for s in parse_snippets(DAILY, "memory/2026-03-16.md"))
    for junk in ("generated inside", "Candidate:", "Already promoted", "Source:", "code is never", "never"):
        assert junk not in texts
    assert carries_marker("- x <!-- key:abcdef123456 src:memory/a.md#L1-L1 -->")
    assert carries_marker("<!-- lifelong:promoted-20260324-030000-ab12:start -->")
    assert not carries_marker("- a plain note <!-- sticky -->")
    assert is_report_junk("Candidate: prefers tea; confidence: 0.91; evidence: 3 recalls")
    assert is_report_junk("relevance 0.82 frequency 0.61 diversity 0.4")
    assert not is_report_junk("The candidate we interviewed was great")


def test_short_lines_are_skipped_and_long_paragraphs_split_into_sentences() -> None:
    text = (
        "# d\n\n- ok\n- fine.\n\n"
        + "First sentence is here and long enough. " * 3
        + "\nSecond line. Third one here.\n"
    )
    snippets = parse_snippets(text, "memory/2026-01-01.md", min_chars=8, max_chars=60)
    assert all(len(s.text) >= 8 for s in snippets)
    assert [s.text for s in snippets][:3] == ["First sentence is here and long enough."] * 3
    # the next line starts a sentence after one ended: a statement of its own, short enough whole
    assert snippets[-1].text == "Second line. Third one here."
    assert snippets[-1].start_line == snippets[-1].end_line == 7


def test_a_paragraph_written_a_statement_per_line_is_a_snippet_per_line() -> None:
    text = (
        "# 2026-09-10\n\n"
        "Rent for the flat: 1,250 € a month by bank transfer on the 1st.\n"
        "Tried the new ramen place on Witte de Withstraat, too salty.\n\n"
        "Harriet called: her birthday is on 14 June this year, a\n"
        "Sunday, and she wants a small dinner.\n"
    )
    snippets = parse_snippets(text, "memory/2026-09-10.md")
    assert [(s.start_line, s.end_line, s.text) for s in snippets] == [
        (3, 3, "Rent for the flat: 1,250 € a month by bank transfer on the 1st."),
        (4, 4, "Tried the new ramen place on Witte de Withstraat, too salty."),
        (
            6,
            7,
            "Harriet called: her birthday is on 14 June this year, a Sunday, and she wants a small dinner.",
        ),
    ]


def test_a_table_row_is_a_snippet_labelled_by_its_header_and_a_log_line_is_one_too() -> None:
    text = (
        "# Mon 5 Oct\n\n"
        "## Suppliers\n"
        "| who | what | contact |\n"
        "|---|:--|---|\n"
        "| Café Origem | green beans | Leonor; order by Thursday |\n"
        "| TermoPro | | Hélder \\| TermoPro desk |\n"  # an empty cell, an escaped pipe
        "\n"
        "| a lone row of pipes | with no rule under it |\n"  # no table: not a statement
        "| another | row |\n"
        "\n"
        "09:40 call w/ Sofia Mendes, she does our books\n"
        "21:00 futsal at Pavilhão Rosa Mota, lost 6-4\n"
    )
    snippets = parse_snippets(text, "memory/2026-10-05.md")
    assert [(s.start_line, s.text) for s in snippets] == [
        (6, "Suppliers: Café Origem — what: green beans; contact: Leonor; order by Thursday"),
        (7, "Suppliers: TermoPro — contact: Hélder | TermoPro desk"),
        (12, "Suppliers: 09:40 call w/ Sofia Mendes, she does our books"),
        (13, "Suppliers: 21:00 futsal at Pavilhão Rosa Mota, lost 6-4"),
    ]


def test_a_callouts_marker_is_markup_and_its_title_is_the_subject_of_its_lines() -> None:
    text = (
        "# Tue 3 Nov\n\n"
        "> [!note] Landlord\n"
        ">\n"
        "> Pieter Brandt, call him about the boiler.\n"
        "\n"
        "> [!warning]- Choir moves\n"
        "> From this week choir rehearses on Wednesdays, 7.30 at St Chad's.\n"
        "\n"
        "> [!tip] Kasia's number is 0113 496 0000\n"  # a callout that is only its title
        "> [!NOTE]\n"
        "> bins go out on Wednesday night\n"
        "\n"
        "> a plain quote: never penicillin for Inês\n"
    )
    snippets = parse_snippets(text, "memory/2026-11-03.md")
    assert [(s.start_line, s.text, s.context) for s in snippets] == [
        (5, "Landlord: Pieter Brandt, call him about the boiler.", "Landlord"),
        (8, "From this week choir rehearses on Wednesdays, 7.30 at St Chad's.", ""),
        (10, "Kasia's number is 0113 496 0000", ""),
        (12, "bins go out on Wednesday night", ""),
        (14, "a plain quote: never penicillin for Inês", ""),
    ]
    assert not any("[!" in s.text for s in snippets)


def test_keys_are_stable_and_whitespace_insensitive() -> None:
    assert text_key("Ask is EUR 1.2M  seed") == text_key(" ask is eur 1.2m seed ")
    assert text_key("Ask is EUR 1.2M seed") != text_key("Ask is EUR 1.5M seed")
    assert len(text_key("x")) == 12


def test_content_tokens_stem_and_keep_identifiers() -> None:
    assert (
        content_tokens("Booked the offsites") == content_tokens("booking the offsite") == {"book", "offsit"}
    )
    assert content_tokens("which venue did we book") == {stem("venue"), "book"}
    assert {"tw-418", "week-4", "1.2m"} <= content_tokens("TW-418 week-4 retention, EUR 1.2M")


def test_near_duplicate_index_matches_brute_force() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)]
    sets = [frozenset(rng.sample(vocab, rng.randint(1, 12))) for _ in range(300)]
    # plant near-duplicates
    for i in range(0, 60, 3):
        base = set(sets[i])
        base.add("extra-token")
        sets.append(frozenset(base))
    index = NearDuplicateIndex(0.9)
    for n, s in enumerate(sets):
        expected = [k for k, other in index.sets.items() if jaccard(s, other) >= 0.9]
        found = index.find(s)
        assert (found is None) == (not expected), n
        if found is not None:
            assert jaccard(s, index.sets[found]) >= 0.9
        index.add(f"k{n}", s)


def _vocab(*texts: str) -> Vocabulary:
    vocab = Vocabulary()
    for t in texts:
        vocab.add(text_key(t), content_tokens(t))
    return vocab


def test_attribution_credits_the_line_the_query_matched_not_the_chunk() -> None:
    snippets = parse_snippets(
        "# 2026-03-16\n\n## Team\n- Priya proposed moving the Android release to April 28.\n"
        "- Tried the new espresso machine, too bitter.\n",
        "memory/2026-03-16.md",
    )
    tokens = [attribution_tokens(s) for s in snippets]
    vocab = _vocab(*(s.text for s in snippets), "Lunch with the team at the canteen.")
    assert attribute(content_tokens("when is the Android release"), tokens, vocab.idf) == [(0, 2.0, 1.0)]
    assert [i for i, *_ in attribute(content_tokens("how was the espresso machine"), tokens, vocab.idf)] == [
        1
    ]
    assert attribute(content_tokens("what about the pitch deck"), tokens, vocab.idf) == []
    # a word every line shares (the heading) decides nothing when a line says more
    assert [i for i, *_ in attribute(content_tokens("team Android"), tokens, vocab.idf)] == [0]
    # one common word shared with a longer question is a coincidence, not a recall
    assert attribute(content_tokens("team lunch at the canteen on Friday"), tokens, vocab.idf) == []


def _credit(text: str, day: str, score: float, cov: float, key: str | None = None) -> Credit:
    snippet = Snippet(f"memory/{day}.md", dt.date.fromisoformat(day), 3, 3, "d", text)
    event = RecallEvent(1, 0.0, day, "q", "query", snippet.path, 1, 9, score, "tool")
    return Credit(event, snippet, key or snippet.key, 1.0, cov)


def test_one_search_credits_what_was_looked_up_once() -> None:
    today = _credit("The plumber Novak comes between 14:00 and 16:00 today.", "2026-04-20", 0.8, 1.0)
    last_week = _credit("The plumber Rossi comes between 14:00 and 16:00 today.", "2026-04-13", 0.7, 1.0)
    incidental = _credit("Parked the car near the garage.", "2026-04-13", 0.75, 0.5)
    other_fact = _credit("Rent is EUR 1180, due on the 3rd.", "2026-04-02", 0.6, 0.9)
    kept = credit_search(
        [last_week, incidental, today, other_fact], sibling=0.5, relative=0.75, replaced_by={}
    )
    assert [c.snippet.text for c in kept] == [today.snippet.text, other_fact.snippet.text]
    # the line the search ranked first is never incidental, whatever its words cover: "medical
    # practice address" found the GP's practice first and a startup's new address lower down
    gp = _credit("My GP: Dr. Novak, practice on Kastanienallee.", "2026-04-13", 0.415, 0.4)
    office = _credit("New address for Quillmark: a floor in Rostock.", "2026-04-06", 0.319, 1.0)
    assert {
        c.snippet.text for c in credit_search([gp, office], sibling=0.5, relative=0.75, replaced_by={})
    } == {
        gp.snippet.text,
        office.snippet.text,
    }
    # the same line reached through two chunks counts once
    twice = credit_search([today, today], sibling=0.5, relative=0.75, replaced_by={})
    assert len(twice) == 1
    # a corrected line hands its credit to the correction found by the same search
    old = _credit("Team standup is daily at 8:30 in room 4.", "2026-04-10", 0.8, 1.0, key="old")
    new = _credit("Correction: standup is now at 9:00, still in room 4.", "2026-04-20", 0.7, 0.5, key="new")
    assert [
        c.key for c in credit_search([old, new], sibling=0.5, relative=0.75, replaced_by={"old": "new"})
    ] == ["new"]
    assert [c.key for c in credit_search([old], sibling=0.5, relative=0.75, replaced_by={"old": "new"})] == [
        "old"
    ]


def test_a_days_title_line_is_no_snippet() -> None:
    text = "Tue 8 Sep — lab log\n09:30 Beat Hürlimann (lab technician) walked me through the Picarro.\n\nWed 16 Sep\n"
    assert [(s.start_line, s.text) for s in parse_snippets(text, "memory/2026-09-08.md")] == [
        (2, "09:30 Beat Hürlimann (lab technician) walked me through the Picarro.")
    ]
