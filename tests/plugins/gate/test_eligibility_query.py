"""Eligibility rules, adaptive recall and query modes (pure functions)."""

from __future__ import annotations

import pytest
from lifelong_plugins.gate.eligibility import check_eligibility, is_trivial
from lifelong_plugins.gate.query import build_query, cache_key, clip, thread_of

CONFIG = {
    "allowed_chat_types": ["direct"],
    "allowed_chat_ids": [],
    "denied_chat_ids": [],
    "query_mode": "recent",
    "recent_user_turns": 2,
    "recent_assistant_turns": 1,
    "recent_user_chars": 220,
    "recent_assistant_chars": 180,
    "max_query_chars": 480,
    "full_context_chars": 6000,
}


def cfg(**over):
    return {**CONFIG, **over}


def test_interactive_direct_chat_is_eligible_by_default() -> None:
    assert check_eligibility({}, CONFIG).eligible
    assert check_eligibility({"kind": "interactive", "chat_type": "direct", "chat_id": "c1"}, CONFIG).eligible


@pytest.mark.parametrize("kind", ["subagent", "cron", "heartbeat", "oneshot", "gate", "something-new"])
def test_never_for_non_interactive_runs(kind: str) -> None:
    verdict = check_eligibility({"kind": kind}, CONFIG)
    assert not verdict.eligible and "not an interactive chat" in verdict.reason


def test_session_toggle_switches_the_gate_off() -> None:
    verdict = check_eligibility({"gate_enabled": False}, CONFIG)
    assert not verdict.eligible and "switched off" in verdict.reason
    assert check_eligibility({"gate_enabled": True}, CONFIG).eligible


def test_chat_types_are_opt_in() -> None:
    assert not check_eligibility({"chat_type": "group"}, CONFIG).eligible
    assert not check_eligibility({"chat_type": "channel"}, CONFIG).eligible
    wide = cfg(allowed_chat_types=["direct", "group"])
    assert check_eligibility({"chat_type": "group"}, wide).eligible
    assert not check_eligibility({"chat_type": "channel"}, wide).eligible


def test_deny_list_wins_over_allow_list_and_is_case_insensitive() -> None:
    both = cfg(allowed_chat_ids=["OC_team"], denied_chat_ids=["oc_TEAM"])
    verdict = check_eligibility({"chat_id": "oc_team"}, both)
    assert not verdict.eligible and "denied_chat_ids" in verdict.reason
    assert not check_eligibility({"chat_id": "X"}, cfg(denied_chat_ids=["x"])).eligible


def test_allow_list_narrows_and_fails_closed_without_a_chat_id() -> None:
    allow = cfg(allowed_chat_ids=["me"])
    assert check_eligibility({"chat_id": "ME"}, allow).eligible
    assert not check_eligibility({"chat_id": "someone"}, allow).eligible
    verdict = check_eligibility({}, allow)
    assert not verdict.eligible and "no chat id" in verdict.reason


@pytest.mark.parametrize(
    "message",
    [
        "thanks!",
        "ok",
        "Hi there",
        "ok cool 👍",
        "thank you so much",
        "hey",
        "are you there?",
        "",
        "🙂",
        "lol ok",
    ],
)
def test_trivial_messages_skip_retrieval(message: str) -> None:
    assert is_trivial(message)


@pytest.mark.parametrize(
    "message",
    [
        "what did we decide about the pitch?",
        "thanks, and when is the offsite?",
        "ok what about TW-418",
        "hi, who is Elena?",
        "42",
    ],
)
def test_real_questions_are_not_trivial(message: str) -> None:
    assert not is_trivial(message)


THREAD = {
    "messages": [
        {"role": "user", "content": "morning! planning my week"},
        {"role": "assistant", "content": "Sure, what's first?"},
        {"role": "user", "content": "the investor stuff"},
        {"role": "assistant", "content": "You have the Northwind follow-up. " + "blah " * 80},
        {"role": "user", "content": "and what did we decide about it?"},
    ],
    "message": "and what did we decide about it?",
}


def test_latest_message_is_not_counted_twice() -> None:
    turns, latest = thread_of(THREAD)
    assert latest == "and what did we decide about it?"
    assert [t.content for t in turns][-1].startswith("You have the Northwind")
    # without "message", the last user turn is the latest message
    turns2, latest2 = thread_of({"messages": THREAD["messages"]})
    assert latest2 == latest and len(turns2) == 4


def test_message_mode_uses_only_the_latest_message() -> None:
    q = build_query(THREAD, cfg(query_mode="message"))
    assert q.query == "and what did we decide about it?" and q.mode == "message"
    assert "investor" not in q.conversation


def test_recent_mode_takes_two_user_turns_one_assistant_turn_then_the_message() -> None:
    q = build_query(THREAD, CONFIG)
    lines = q.query.split("\n")
    assert lines[0] == "morning! planning my week"
    assert lines[1] == "the investor stuff"
    assert lines[2].startswith("You have the Northwind follow-up.") and len(lines[2]) <= 180
    assert lines[2].endswith("…")
    assert lines[3] == "and what did we decide about it?"
    assert "Sure, what's first?" not in q.query  # only the last assistant turn
    assert "Recent conversation tail:" in q.conversation and "Latest user message:" in q.conversation


def test_recent_turn_counts_and_caps_are_configurable() -> None:
    q = build_query(THREAD, cfg(recent_user_turns=1, recent_assistant_turns=0, recent_user_chars=20))
    assert q.query.split("\n") == ["the investor stuff", "and what did we decide about it?"]
    q2 = build_query(
        {"messages": [{"role": "user", "content": "a " * 300}], "message": "b?"},
        cfg(recent_user_chars=30),
    )
    assert len(q2.query.split("\n")[0]) <= 30


def test_full_mode_sees_the_whole_thread() -> None:
    q = build_query(THREAD, cfg(query_mode="full"))
    assert "Sure, what's first?" in q.conversation and "Full conversation context:" in q.conversation
    assert len(q.query) <= 480 and q.query.endswith("and what did we decide about it?")
    small = build_query(THREAD, cfg(query_mode="full", full_context_chars=200))
    assert "morning! planning my week" not in small.conversation  # oldest dropped first
    assert "and what did we decide about it?" in small.conversation


def test_recent_mode_searches_a_self_contained_message_alone() -> None:
    thread = {**THREAD, "message": "where is the team offsite?"}
    q = build_query(thread, CONFIG)
    assert q.query == "where is the team offsite?" and q.mode == "recent"
    assert "the investor stuff" in q.conversation  # the model still sees the tail


@pytest.mark.parametrize(
    "message,back",
    [
        ("and when is it?", True),
        ("what about that one", True),
        ("so?", True),
        ("where is the team offsite?", False),
        ("how much are we raising in the seed round", False),
        ("who owns the Android client", False),
    ],
)
def test_refers_back(message: str, back: bool) -> None:
    from lifelong_plugins.gate.query import refers_back

    assert refers_back(message) is back


def test_search_query_is_capped_at_480_and_keeps_the_latest_message() -> None:
    long_thread = {
        "messages": [{"role": "user", "content": f"turn {i} " + "words " * 60} for i in range(10)],
        "message": "when is the offsite?",
    }
    for mode in ("message", "recent", "full"):
        q = build_query(long_thread, cfg(query_mode=mode))
        assert len(q.query) <= 480 and q.query.endswith("when is the offsite?")
    huge = build_query({"message": "x " * 1000}, CONFIG)
    assert len(huge.query) <= 480


def test_cache_key_is_per_session_mode_and_normalised_query() -> None:
    a = cache_key({"id": "s1"}, build_query({"message": "When is  the offsite?"}, CONFIG))
    b = cache_key({"id": "s1"}, build_query({"message": "when is the offsite?"}, CONFIG))
    c = cache_key({"id": "s2"}, build_query({"message": "when is the offsite?"}, CONFIG))
    assert a == b and a != c


def test_clip_cuts_at_a_word_boundary() -> None:
    text = "Booked the team offsite at Gut Boltenhagen for April 14-16, twelve people in total"
    for limit in range(12, len(text) + 5):
        out = clip(text, limit)
        assert len(out) <= limit
        if out != text:
            assert out.endswith("…")
            kept = out[:-1]
            assert text.startswith(kept)
            if len(kept) > limit // 2:
                assert text[len(kept)] in " ,;:-"  # the cut falls between words
