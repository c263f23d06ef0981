"""Gate defects found by trying it as a new user (issue 15, items 3-5) and the injected text's
safety (issue 14, item 8): each test failed before its fix."""

from __future__ import annotations

import pytest
from lifelong_plugins.gate.gate import PREFIX_HEADER, fit_escaped, make_prefix
from lifelong_plugins.gate.query import build_query, strip_own_blocks
from lifelong_plugins.gate.subagent import read_reply

from lifelong import clock

from .test_gate import FILES, MODEL, NOW, PITCH, reply

GATE_CONFIG = {
    "query_mode": "recent",
    "recent_user_turns": 2,
    "recent_assistant_turns": 1,
    "recent_user_chars": 220,
    "recent_assistant_chars": 180,
    "max_query_chars": 480,
    "full_context_chars": 6000,
}


@pytest.fixture
def gate_host(make_host):
    def make(files=FILES, gate=None, recall=None):
        config = {"embedding": {"provider": "none"}, "plugins": {"gate": gate or {}, "recall": recall or {}}}
        return make_host(files, config, builtins=("embeddings", "recall", "gate"), entry_points=False)

    return make


@pytest.mark.parametrize(
    "text",
    [
        "Hello! How can I help you today?",
        "Hi there, what can I do for you?",
        "the llm request timed out",
        "active-memory timeout after 30000ms",
        "Error: 503 Service Unavailable",
        "litellm.RateLimitError: rate limit exceeded",
        "I'm sorry, I can't help with that.",
        "As an AI, I don't have memories.",
        "   ",
    ],
)
def test_greetings_refusals_and_errors_are_no_note(text: str) -> None:
    assert read_reply(text, 220) is None


@pytest.mark.parametrize(
    "note",
    ["Hello is the user's preferred project name.", "Hi-Fi setup: the amp is in the attic (since May)."],
)
def test_a_note_that_opens_with_a_greeting_word_is_kept(note: str) -> None:
    """Issue 40 item 6: a substantive reply that starts with "Hello" was discarded as chit-chat."""
    assert read_reply(note, 220) == note


def test_a_note_about_an_error_that_cites_its_source_is_kept() -> None:
    note = "Deploy failed with a TLS timeout on the staging box (memory/2026-03-04.md#L7)"
    assert read_reply(note, 220) == note


@pytest.mark.parametrize("reply_text", ["Hello! How can I help you today?", "the llm request timed out"])
def test_the_gate_injects_no_chit_chat_from_the_model(gate_host, reply_text: str) -> None:
    host = gate_host(gate={"model": MODEL, "model_options": {"mock_response": reply_text}})
    result = reply(host, PITCH)
    assert reply_text not in result.prefix
    assert result.status == "no_relevant_memory" and result.prefix == ""


def test_the_previous_prefix_never_feeds_the_next_query(gate_host) -> None:
    host = gate_host()
    first = reply(host, PITCH)
    assert first.prefix.startswith(PREFIX_HEADER)
    thread = [
        {"role": "user", "content": f"{first.prefix}\n\n{PITCH}"},
        {"role": "assistant", "content": "We open with the live demo."},
    ]
    query = build_query({"messages": thread, "message": "and the weather last week?"}, GATE_CONFIG)
    assert "lifelong_memory" not in query.query and "Untrusted context" not in query.query
    assert "Decision:" not in query.query and PITCH in query.query
    stripped = strip_own_blocks(f"before {first.prefix} after")
    assert stripped.split() == ["before", "after"]


def test_no_recall_event_is_recorded_for_the_suites_own_text(gate_host) -> None:
    host = gate_host()
    first = reply(host, PITCH)
    before = host.store.query("SELECT count(*) n FROM recall_events")[0]["n"]
    with clock.pinned(NOW):
        second = host.before_reply(
            {"id": "s2", "messages": [{"role": "user", "content": first.prefix}]}, first.prefix
        )
    after = host.store.query("SELECT count(*) n FROM recall_events")[0]["n"]
    assert second.status == "skipped_trivial" and after == before


def test_the_decisive_word_alone_is_enough(gate_host) -> None:
    files = {
        "memory/2026-02-10.md": "# 2026-02-10\n\n## Health\n- Allergic to penicillin: hives in 2019, use erythromycin instead.\n",
        "memory/2026-03-01.md": "# 2026-03-01\n\n- Bought new running shoes.\n",
    }
    result = reply(gate_host(files), "can I take penicillin for my sore throat?")
    assert result.status == "ok" and "Allergic to penicillin" in result.note


def test_when_two_notes_disagree_the_newest_value_leads(gate_host) -> None:
    files = {
        "memory/2026-03-02.md": "# 2026-03-02\n\n## Offsite\n- The offsite budget is EUR 2,000 for the whole team, travel and venue included.\n",
        "memory/2026-03-18.md": "# 2026-03-18\n\n## Offsite\n- The offsite budget is now EUR 2,400 after adding the workshop day.\n",
    }
    result = reply(gate_host(files), "what is the offsite budget?")
    assert result.status == "ok" and result.note.startswith("The offsite budget is now EUR 2,400")


def test_the_cap_applies_to_what_the_agent_receives() -> None:
    note = "R&D & ops <budget> " * 20
    fitted = fit_escaped(note, 220)
    body = (
        make_prefix(fitted)
        .removeprefix(f"{PREFIX_HEADER}\n<lifelong_memory>")
        .removesuffix("</lifelong_memory>")
    )
    assert len(body) <= 220 and len(fitted) < 220


def test_invisible_characters_and_secrets_never_reach_the_prefix(gate_host) -> None:
    files = {
        "memory/2026-03-04.md": "# 2026-03-04\n\n## Deploy\n- Deploy key for staging is sk-proj-Ab3dEfGh1jKlMnOpQrStUvWxYz0123 and it works\u202e\u200b.\n"
    }
    result = reply(gate_host(files), "what is the staging deploy key?")
    assert result.status == "ok" and "[redacted api key]" in result.note
    assert "sk-proj" not in result.prefix and "\u202e" not in result.prefix and "\u200b" not in result.prefix
    # memory_search already redacts what it hands over; the gate redacts again on its own, in case
    # a search plugin or `redact_tool_results: false` hands it raw lines
    raw = reply(gate_host(files, recall={"redact_tool_results": False}), "what is the staging deploy key?")
    assert "sk-proj" not in raw.prefix and raw.detail["secrets_redacted"] == 1


def test_the_gate_leads_with_the_newest_value_and_says_what_it_replaced(gate_host) -> None:
    """Issue 41: "when is Mila's swimming?" led with the old Tuesday slot promoted to MEMORY.md
    (an undated file: newer_value skipped it) although a later note moved it."""
    files = {
        "MEMORY.md": "# MEMORY\n\n<!-- lifelong:topic-family:start -->\n## Family\n"
        "- Mila's swimming class is on Tuesdays at 16:30. <!-- key:0123456789ab src:memory/2026-03-02.md#L3-L3 on:2026-03-04 -->\n"
        "<!-- lifelong:topic-family:end -->\n",
        "memory/2026-03-02.md": "# 2026-03-02\n\n- Mila's swimming class is on Tuesdays at 16:30.\n",
        "memory/2026-03-18.md": "# 2026-03-18\n\n- Schwimmkurs moved!! from now on Mila's swimming is thursdays 15:45\n",
    }
    result = reply(gate_host(files), "when is Mila's swimming?")
    assert result.status == "ok" and "15:45" in result.note
    assert result.note.index("15:45") < result.note.index("16:30") if "16:30" in result.note else True
    assert "until 2026-03-18" in result.note or "16:30" not in result.note


def test_the_wiki_index_is_never_the_note(gate_host) -> None:
    files = {
        "wiki/index.md": "# Wiki index\n\nDurable beliefs, one page per subject, each claim with evidence pointers.\n\n"
        "- [[entity.flat]] Flat rent — 3 claim(s)\n",
        "memory/2026-03-10.md": "# 2026-03-10\n\n- the flat rent is 1,310 € a month since the index rise\n",
    }
    result = reply(gate_host(files), "how much is the flat rent per month?")
    assert result.status == "ok" and "1,310" in result.note
    assert "wiki/index.md" not in result.note and "claim(s)" not in result.note
