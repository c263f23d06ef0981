"""The shared text measures and the markdown-blocks parser of the core."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lifelong.markdown import (
    estimate_tokens,
    line_groups,
    parse_blocks,
    split_lines,
    strip_bookkeeping,
    strip_comments,
)
from lifelong.text import CHATTER, STOPWORDS, content_tokens, fold, fts_text, jaccard, stem, tokens, words


def test_words_keep_identifiers_and_split_glued_letters() -> None:
    assert words("Fernwood's seed: $2M; TW-418 v2.3 at 19:40, week-4 end.Next") == [
        "fernwood", "seed", "2m", "tw-418", "v2.3", "at", "19:40", "week-4", "end", "next",
    ]  # fmt: skip
    assert tokens("Elena Brandt met TW-418") == ["Elena", "Brandt", "met", "TW-418"]


def test_unicode_is_normalised_before_matching() -> None:
    decomposed = "Mu\u0308nchen cafe\u0301"
    assert words(decomposed) == words("München café") == ["münchen", "café"]
    assert words("ＫＶ store") == ["kv", "store"]  # full-width forms fold to ASCII
    assert fold("STRASSE") == "strasse"


def test_unspaced_scripts_become_character_bigrams() -> None:
    assert words("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert words("猫") == ["猫"]
    shared = set(words("昨日東京タワーに行った")) & set(words("東京タワーの写真"))
    assert {"東京", "タワ", "ワー"} <= shared


def test_stemming_and_stopwords() -> None:
    assert stem("pitched") == stem("pitches") == stem("pitch")
    assert stem("booking") == stem("booked") == "book"
    assert stem("tw-418") == "tw-418" and stem("ios") == "ios"  # short words and identifiers kept
    assert "the" in STOPWORDS and "remember" in CHATTER
    assert content_tokens("Do you remember what we booked for the offsite?") == {"book", "offsit"}


def test_an_abbreviation_is_matched_as_its_word_on_both_sides() -> None:
    """ "Dr. Nunes" is found by "doctor", "dentist appt" by "appointment": in the stems every
    lexical score compares and in the text the full-text index holds (documents and queries)."""
    assert stem("dr") == stem("doctor") == "doctor" and stem("appt") == stem("appointment")
    assert stem("bday") == "birthday" and stem("drive") == "drive"
    assert content_tokens("vet: Dr. Nunes") >= {"doctor"}
    assert (
        fts_text("Vet: Dr. Nunes; dentist APPT, Bday") == "Vet: doctor Nunes; dentist appointment, birthday"
    )
    assert fts_text("dry drive, address") == "dry drive, address"


def test_comments_are_left_out_as_a_reader_of_the_rendered_note_sees_it() -> None:
    assert (
        strip_comments("- We ship on July 15. <!-- key:a652 src:memory/x.md#L4-L4 -->")
        == "- We ship on July 15."
    )
    assert strip_comments("a <!-- one\ntwo --> b") == "a b"
    # a comment inside a code span is text the reader sees; an unclosed one is left as it is
    assert (
        strip_comments("writes inside `<!-- lifelong:... -->` sections")
        == "writes inside `<!-- lifelong:... -->` sections"
    )
    assert strip_comments("a <!-- never closed") == "a <!-- never closed"


def test_jaccard_of_empty_sets_is_zero() -> None:
    assert jaccard(set(), set()) == 0.0
    assert jaccard({"a", "b"}, {"b", "c"}) == 1 / 3


def test_lines_split_on_every_line_ending() -> None:
    assert split_lines("a\r\nb\rc\nd\n") == ["a", "b", "c", "d"]
    assert split_lines("") == [""]


def test_a_bare_carriage_return_numbers_lines_like_memory_get() -> None:
    blocks = parse_blocks("# H\r- one\r- two\r\rpara")
    assert [(b.kind, b.start, b.end) for b in blocks] == [
        ("heading", 1, 1), ("list_item", 2, 2), ("list_item", 3, 3), ("paragraph", 5, 5),
    ]  # fmt: skip


def test_a_paragraphs_lines_group_by_statement() -> None:
    lines = [
        "**On call:** every second week; the rotation starts on Mondays.",  # a sentence ends
        "Bike got a flat tire on the way home!",  # and the next begins: a new group
        "Harriet called: her birthday is on 14 June this year, a",  # wrapped mid-sentence
        "Sunday, and she wants a small dinner.",
        "see you on the 3rd.",  # lower case: continues the sentence before
        '"Quotes" and (brackets) may open a statement.',
        "(An aside.)",
        "12 people came.",
    ]
    assert line_groups(lines) == [(0, 0), (1, 1), (2, 4), (5, 5), (6, 6), (7, 7)]
    assert line_groups(["one line"]) == [(0, 0)] and line_groups([]) == []


def test_a_line_opening_with_a_time_of_day_starts_a_group() -> None:
    log = [
        "09:40 call w/ Sofia, she does our books",  # no full stop: the time still opens an entry
        "21:00 futsal at the pavilion, lost 6-4",
        "[21h15] drinks after",
        "9.40am bus was late",
        "then walked home, about",  # a note line of its own: nothing says it continues the last
        "1.25 km",  # a decimal is not a time; the line before ends on "about": the same entry
        "12:30:45 backup finished",
    ]
    assert line_groups(log) == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 5), (6, 6)]


def test_a_chat_exports_message_stamp_starts_a_statement() -> None:
    """Pasted chat exports (WhatsApp, Telegram, Signal) put a stamp before every message; a long
    message without a full stop read as wrapped prose and took the next message with it, so two
    people's messages became one MEMORY.md item."""
    chat = [
        "[17/08/27 08:02] Mum: Greenslopes rang, from this week his dialysis is Tue Thu Sat. No more Mon Wed Fri",
        "[17/08/27 08:05] Linh: new roster then: Tue Chloe, Thu Bao, Sat me",
        "14.03.27, 21:04 - Sam: the new landline is 030 1234567 from monday on, the old one",
        "is dead",  # the message itself wraps: still one statement
        "3/14/27, 9:04 PM - Jo: ok",
        "2027-03-14 21:04 Ana: see you",
    ]
    assert line_groups(chat) == [(0, 0), (1, 1), (2, 3), (4, 4), (5, 5)]


def test_a_note_line_is_a_statement_unless_it_visibly_continues() -> None:
    notes = [
        "mila swim moved to thursdays 15:45",  # no full stop, no capital: still a statement
        "bought milk",
        "dentist on the 14th with",  # ends on a word no sentence ends on: goes on
        "dr haller",
        "budget is 4k",
        "and the offsite stays in porto",  # opens on a conjunction: goes on
        "new number 0152 2290 4471",
    ]
    assert line_groups(notes) == [(0, 0), (1, 1), (2, 3), (4, 5), (6, 6)]


def test_nested_items_carry_their_parents() -> None:
    text = "## People\n- Emma Rees\n  - prefers short messages after work\n    - no calls\n- Tom\n"
    blocks = [b for b in parse_blocks(text, nested_items=True) if b.kind == "list_item"]
    assert [(b.start, b.depth, b.parents) for b in blocks] == [
        (2, 0, ()), (3, 1, ("Emma Rees",)), (4, 2, ("Emma Rees", "prefers short messages after work")), (5, 0, ()),
    ]  # fmt: skip
    assert all(b.heading_path == ("People",) for b in blocks)
    top = [b for b in parse_blocks(text) if b.kind == "list_item"]
    assert [(b.start, b.end) for b in top] == [(2, 4), (5, 5)]  # default: an item with what it holds


def test_cjk_text_counts_more_tokens_than_its_length_over_four() -> None:
    assert estimate_tokens("東京タワーに行った") == 9
    assert estimate_tokens("one two three four") == 4


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_blocks_always_lie_within_the_lines(text: str) -> None:
    n = len(split_lines(text))
    for b in parse_blocks(text) + parse_blocks(text, nested_items=True):
        assert 1 <= b.start <= b.end <= n
    words(text)  # never raises


def test_a_title_line_names_the_day_and_little_else() -> None:
    from lifelong.markdown import title_line

    titles = ["Tue 8 Sep — lab log", "Thu 17.9. lab log", "Mo 28.9. — writing day, no lab", "Wed 16 Sep"]
    titles += ["Saturday, chores.", "# Friday", "**Monday**", "12 May", "Sep 12 — dentist", "19/11"]
    statements = ["Sunday. Did nothing at all. Called Mama, she says hi to Joël.", "Monday I moved to Lisbon"]
    statements += [
        "So, I went to the shop",
        "12 people came",
        "09:30 Beat walked me through",
        "1/2 cup of sugar",
    ]
    statements += ["Thu 1 Oct Laundry (Thursday a.m., our slot) — 2 loads", "May I ask something"]
    assert all(title_line(t) for t in titles)
    assert not any(title_line(t) for t in statements)


def test_a_day_title_is_read_in_the_languages_and_layouts_people_write_it() -> None:
    """Weekday and month names from babel's CLDR data (every language it has), digits of any
    script in any order, East Asian markers, a stamp's hour, the weather. On the held-out
    titles-1 (376 lines, 62 languages; python -m evals.day_titles) the English-only reader took
    0.130 of the titles for titles, this one 0.756."""
    from lifelong.markdown import title_line

    titles = ["Jumamosi 9/8/31", "пт, 3 мая", "Środa 14.05.", "2031-03-04 (Di) sonnig", "火曜日 くもり"]
    titles += ["Entry — 14 Mar 2031, 07:12", "══ Thứ Sáu, 18/10/2030 ══ ☔ 27°C", "12 Mart Çar", "ma 2 okt"]
    titles += ["4月16日(月) 晴れ", "mié 3", "Δευτέρα 7 Απριλίου", "יום ג׳ 14.5", "শুক্রবার ১৪ মার্চ"]
    statements = ["Mon: dentist 3pm", "12/3 rent paid 870", "pt 3 maja przelew 120 zł"]
    statements += ["Tue — called the plumber about the boiler leak again", "3 May Grandma turns 90"]
    statements += ["14.05. Miete überwiesen, 950 €", "水曜日 歯医者 15時", "So, I went to the shop"]
    statements += ["[14/03/27 21:04] Linh: ok", "Caroline: Sunday, finally."]  # messages
    statements += ["Mon 3 March — Lab: all day"]  # a speaker after a dash: a message too
    assert [t for t in titles if not title_line(t)] == []
    assert [s for s in statements if title_line(s)] == []


def test_strip_bookkeeping_leaves_the_line_as_its_writer_wrote_it() -> None:
    line = "Mias Handy mag unser WLAN nicht, network is o2-WLAN-4F21"
    claim = (
        f"{line} — unconfirmed, confidence 0.50 (claim.ea18e31edc); evidence: `memory/2026-06-20.md#L4-L4`"
    )
    assert strip_bookkeeping(claim) == line
    assert strip_bookkeeping(f"{line} (claim.ea18e31edc)") == line  # a mention
    assert strip_bookkeeping(f"{line} <!-- key:0123456789ab src:memory/2026-06-20.md#L4-L4 -->") == line
    struck = f'~~{line}~~ (superseded by "Felix hat den neuen Router angeschlossen…", 2026-06-28)'
    assert strip_bookkeeping(struck) == f"~~{line}~~"  # the strike stays: it says the line no longer holds
    contested = f'{line} (contested by "Felix hat den neuen Router angeschlossen…", 2026-06-28)'
    assert strip_bookkeeping(contested) == line  # still current: the line as its writer wrote it
    # a writer's own parentheses and dashes are text
    own = "Rent — about 1,480 € (warm) (see claim form) — confidence is low"
    assert strip_bookkeeping(own) == own
