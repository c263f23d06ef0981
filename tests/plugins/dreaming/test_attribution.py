"""Attribution of a paraphrased search (no word shared with any line) to the lines it found."""

from __future__ import annotations

from .conftest import at, dream, record_event

A = "memory/2026-04-20.md"
B = "memory/2026-04-12.md"
FILES = {
    A: "# 2026-04-20\n\n## Home\n- My GP: Dr. Keller, practice on Kastanienallee.\n"
    "- Left my umbrella at Father Carpenter, must pick it up.\n",
    B: "# 2026-04-12\n\n## Home\n- Dr. Keller: is my family doctor.\n",
}


def test_a_paraphrased_search_credits_the_best_line_of_each_file_not_its_neighbours(dream_host) -> None:
    """ "who is my physician" shares no word with any line. It found the GP line, the same fact
    in another daily, and the line below the GP's (whose score carries their chunk's): the two
    statements of the fact are credited, the neighbour is not, though its score is within the
    share of the best that a paraphrase needs."""
    host = dream_host(FILES)
    when = at("2026-04-28", 18)
    record_event(host, A, 4, 4, "who is my physician", when, score=0.444)
    record_event(host, B, 4, 4, "who is my physician", when, score=0.40)
    record_event(host, A, 5, 5, "who is my physician", when, score=0.342)
    dream(host, at("2026-04-29"))
    credited = {
        text
        for (text,) in host.store.conn.execute(
            "SELECT c.text FROM dream_signals s JOIN dream_candidates c ON c.key = s.key"
        )
    }
    assert credited == {
        "My GP: Dr. Keller, practice on Kastanienallee.",
        "Dr. Keller: is my family doctor.",
    }


UMBRELLA_OLD = "memory/2026-04-03.md"
UMBRELLA_NEW = "memory/2026-04-15.md"
UMBRELLAS = {
    UMBRELLA_OLD: "# 2026-04-03\n\n## Home\n- Left my umbrella at the corner café, must pick it up.\n",
    UMBRELLA_NEW: "# 2026-04-15\n\n## Home\n- Left my umbrella at Bonanza, must pick it up.\n"
    "- Coffee at Bonanza; the barista remembered my order.\n",
}


def _credited(host) -> list[tuple[str, str]]:
    return sorted(
        host.store.conn.execute(
            "SELECT c.path, s.day FROM dream_signals s JOIN dream_candidates c ON c.key = s.key"
        ).fetchall()
    )


def test_a_search_that_found_an_older_note_credits_the_one_written_that_day(dream_host) -> None:
    """'umbrella at the café' found the old umbrella note (it holds 'café'), not today's: today's
    note gets the credit, so the old one does not collect a recall for every later umbrella."""
    host = dream_host(UMBRELLAS)
    record_event(host, UMBRELLA_OLD, 4, 4, "umbrella at the café", at("2026-04-15", 18), score=0.725)
    dream(host, at("2026-04-16"))
    assert _credited(host) == [(UMBRELLA_NEW, "2026-04-15")]


def test_a_later_search_for_an_old_note_credits_the_old_note(dream_host) -> None:
    """Only a note written the day of the search takes the credit over: asked about on a day
    with no new umbrella, the note found is the one credited."""
    host = dream_host(UMBRELLAS)
    record_event(host, UMBRELLA_OLD, 4, 4, "umbrella at the café", at("2026-04-20", 18), score=0.725)
    dream(host, at("2026-04-21"))
    assert _credited(host) == [(UMBRELLA_OLD, "2026-04-20")]


RENT = "memory/2026-04-05.md"
RENT_FILES = {
    RENT: "# 2026-04-05\n\n## Home\n- Rent is EUR 950 a month, due on the 1st.\n"
    "- Lunch at the Vietnamese place was too salty.\n",
}


def _credited_texts(host) -> set[str]:
    return {
        text
        for (text,) in host.store.conn.execute(
            "SELECT c.text FROM dream_signals s JOIN dream_candidates c ON c.key = s.key"
        )
    }


def test_a_weak_first_hit_of_a_deliberate_search_is_credited_and_not_the_lines_below(dream_host) -> None:
    """'how much do I pay for the apartment' shares no word with the rent line and found it first
    at 0.27: below the paraphrase floor (0.3), above the first-hit floor (0.25). The line after it
    in the list (0.24) is not credited; nor is the same first hit when the pre-reply gate (which
    searches before every reply) asked, nor a first hit under the floor."""
    host = dream_host(RENT_FILES)
    when = at("2026-04-06", 18)
    record_event(host, RENT, 4, 4, "how much do I pay for the apartment", when, score=0.27)
    record_event(host, RENT, 5, 5, "how much do I pay for the apartment", when, score=0.24)
    record_event(host, RENT, 5, 5, "recipe for banana bread", at("2026-04-06", 19), score=0.28, source="gate")
    record_event(host, RENT, 5, 5, "best pizza nearby", at("2026-04-06", 20), score=0.23)
    dream(host, at("2026-04-07"))
    assert _credited_texts(host) == {"Rent is EUR 950 a month, due on the 1st."}


def test_the_kind_of_answer_a_question_asks_for_is_no_shared_word() -> None:
    from lifelong_plugins.dreaming.attribution import asked_tokens

    assert asked_tokens("which day is our turn in the basement") == {"basement", "turn"}
    assert asked_tokens("what evening is running club practice") == {"club", "practic", "run"}
    assert "day" in asked_tokens("how was your day at the basement")  # not asked for: content


def test_a_line_sharing_only_the_asked_for_word_is_not_credited(dream_host) -> None:
    """ "which evening do I have language lessons" found the dialect lesson and, weaker, a fair
    visited "in the evening": the fair shares only the word naming the kind of answer asked
    for, and gets no credit (written month 6 promoted it on three such searches)."""
    fair, lesson = "memory/2026-09-12.md", "memory/2026-09-16.md"
    host = dream_host(
        {
            fair: "# 2026-09-12\n\n- Went to Knabenschiessen with Joël in the evening, ate a Bratwurst.\n",
            lesson: "# 2026-09-16\n\n- 17:15 Swiss German, lesson 2; Wednesdays are getting easier.\n",
        }
    )
    when = at("2026-09-28", 18)
    record_event(host, lesson, 3, 3, "which evening do I have language lessons", when, score=0.30)
    record_event(host, fair, 3, 3, "which evening do I have language lessons", when, score=0.283)
    dream(host, at("2026-09-29"))
    assert [p for p, _ in _credited(host)] == [lesson]


LANDLORD_A, LANDLORD_B, RENT_PAID = "memory/2026-09-11.md", "memory/2026-09-20.md", "memory/2026-09-18.md"
LANDLORD_FILES = {
    LANDLORD_A: "# 2026-09-11\n\n- Landlord is Pieter Brandt; reach him on WhatsApp, he does not read email.\n",
    LANDLORD_B: "# 2026-09-20\n\n- **Flat:** Pieter Brandt owns it; WhatsApp only, he ignores email.\n",
    RENT_PAID: "# 2026-09-18\n\n- Paid the 1250 euros for the apartment, same as every month.\n"
    "- Listened to a podcast about container ships.\n",
}


def test_two_weak_statements_of_one_fact_in_one_search_are_credited(dream_host) -> None:
    """'how to contact the owner of the apartment' returned a rent line first (it shares
    'apartment') and, under the paraphrase floor, both statements of the landlord fact, written
    on two days (written month 2). Two statements of one fact returned together are the search
    finding that fact (the real embedder says they state one fact): the fact gets the search,
    through its newer statement (of two credited lines this alike, the newer one speaks for
    both, as for any search). A weak line with no second statement (the podcast) is not
    credited, nor is one statement returned alone."""
    host = dream_host(LANDLORD_FILES, config={"embedding": {"provider": "local"}})
    q = "how to contact the owner of the apartment"
    when = at("2026-09-24", 18)
    record_event(host, RENT_PAID, 3, 3, q, when, score=0.482)
    record_event(host, LANDLORD_A, 3, 3, q, when, score=0.284)
    record_event(host, LANDLORD_B, 3, 3, q, when, score=0.263)
    record_event(host, RENT_PAID, 4, 4, q, when, score=0.262)
    alone = "contact details of the property owner"
    record_event(host, RENT_PAID, 3, 3, alone, at("2026-09-24", 19), score=0.482)
    record_event(host, LANDLORD_A, 3, 3, alone, at("2026-09-24", 19), score=0.284)
    dream(host, at("2026-09-25"))
    by_query = sorted(
        host.store.conn.execute(
            "SELECT c.text, e.query FROM dream_signals s JOIN dream_candidates c ON c.key = s.key"
            " JOIN recall_events e ON e.id = s.event_id"
        ).fetchall()
    )
    assert by_query == sorted(
        [
            ("Paid the 1250 euros for the apartment, same as every month.", q),
            ("**Flat:** Pieter Brandt owns it; WhatsApp only, he ignores email.", q),
            ("Paid the 1250 euros for the apartment, same as every month.", alone),
        ]
    )


def test_without_the_rule_the_weak_statements_are_not_credited(dream_host) -> None:
    """The same search with the corroboration floor above the two lines' scores credits only the
    rent line: the rule above is what credits the landlord."""
    host = dream_host(
        LANDLORD_FILES,
        config={
            "embedding": {"provider": "local"},
            "plugins": {"dreaming": {"attribution_min_score_corroborated": 0.3}},
        },
    )
    q = "how to contact the owner of the apartment"
    when = at("2026-09-24", 18)
    record_event(host, RENT_PAID, 3, 3, q, when, score=0.482)
    record_event(host, LANDLORD_A, 3, 3, q, when, score=0.284)
    record_event(host, LANDLORD_B, 3, 3, q, when, score=0.263)
    dream(host, at("2026-09-25"))
    assert _credited_texts(host) == {"Paid the 1250 euros for the apartment, same as every month."}


def test_two_weak_lines_found_for_different_words_corroborate_nothing(dream_host) -> None:
    """'umbrella at the café' returned an old umbrella note first, then, weakly, 'Left my umbrella
    at Bonanza' (for the word 'umbrella') and 'Coffee at Bonanza; the barista remembered my order'
    (for the café). The two name one café and sit close in meaning, but the coffee is no second
    statement of the umbrella: only the line holding both words is credited (persona months
    promoted the coffee chit-chat this way)."""
    old, umbrella, coffee = "memory/2026-04-02.md", "memory/2026-04-07.md", "memory/2026-04-06.md"
    host = dream_host(
        {
            old: "# 2026-04-02\n\n- Left my umbrella at the corner café, must pick it up.\n",
            umbrella: "# 2026-04-07\n\n- Left my umbrella at Bonanza, must pick it up.\n",
            coffee: "# 2026-04-06\n\n- Coffee at Bonanza; the barista remembered my order.\n",
        },
        config={"embedding": {"provider": "local"}},
    )
    when = at("2026-04-30", 18)
    record_event(host, old, 3, 3, "umbrella at the café", when, score=0.52)
    record_event(host, umbrella, 3, 3, "umbrella at the café", when, score=0.36)
    record_event(host, coffee, 3, 3, "umbrella at the café", when, score=0.30)
    dream(host, at("2026-05-01"))
    assert _credited_texts(host) == {"Left my umbrella at the corner café, must pick it up."}
