"""The runtime adapter (lifelong.Memory) through the real host."""

from __future__ import annotations

import datetime as dt

import pytest

from lifelong import Memory, clock
from lifelong.journal import rollback

TZ = clock.zone("Europe/Berlin")
NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=TZ)
FILES = {
    "MEMORY.md": "# MEMORY\n\n- Prefers short answers.\n",
    "memory/2026-03-23.md": "# 2026-03-23\n\n- Booked the offsite at Gut Boltenhagen.\n",
    "memory/2026-03-24.md": "# 2026-03-24\n\n- Pitch rehearsal at 14:00.\n",
    "memory/2026-03-10.md": "# 2026-03-10\n\n- An old note.\n",
}


@pytest.fixture
def memory(make_host):
    host = make_host(FILES, {"embedding": {"provider": "none"}})
    return Memory(host.workspace, host=host)


def test_memory_brings_the_index_up_to_date_before_the_first_reply(make_workspace) -> None:
    """Issue 43 item 11: on a fresh workspace the first before_reply indexed (and embedded) every
    file inside the gate's deadline. Memory() does that sync itself, so the first reply searches."""
    from lifelong_plugins.recall.service import index_for

    ws = make_workspace(FILES, {"embedding": {"provider": "none"}})
    with clock.pinned(NOW), Memory(ws) as memory:
        idx = index_for(memory.host.ctx)
        assert not idx.needs_sync()
        assert memory.host.store.conn.execute("SELECT count(*) FROM files").fetchone()[0] == len(FILES)


def test_session_start_loads_memory_today_and_yesterday_within_budget(memory) -> None:
    with clock.pinned(NOW):
        direct = memory.session_start({"id": "s", "chat_type": "direct"})
        group = memory.session_start({"id": "s", "chat_type": "group"})
        small = memory.session_start({"id": "s"}, budget_chars=150)
    assert (
        direct.index("## MEMORY.md")
        < direct.index("2026-03-23.md (yesterday)")
        < direct.index("2026-03-24.md (today)")
    )
    assert "An old note" not in direct and "Prefers short answers" in direct
    assert "MEMORY.md" not in group and "Pitch rehearsal" in group  # personal memory stays out of groups
    assert len(small) <= 150


def test_tools_hide_internal_parameters_and_calls_run(memory) -> None:
    schemas = {t["function"]["name"]: t for t in memory.tools()}
    assert "source" not in schemas["memory_search"]["function"]["parameters"]["properties"]
    with clock.pinned(NOW):
        found = memory.call_tool("memory_search", {"query": "Gut Boltenhagen"})
    assert found["results"][0]["path"] == "memory/2026-03-23.md"


def test_session_end_appends_a_summary_and_can_be_undone(memory) -> None:
    daily = memory.workspace.root / "memory" / "2026-03-24.md"
    before = daily.read_bytes()
    session = {
        "id": "chat-7",
        "messages": [
            {"role": "user", "content": "where is the offsite?"},
            {"role": "assistant", "content": "At Gut Boltenhagen."},
            {"role": "user", "content": "my api key is sk-proj-Ab3dEfGh1jKlMnOpQrStUvWxYz0123 keep it"},
        ],
    }
    with clock.pinned(NOW):
        added = memory.session_end(session)
    after = daily.read_bytes()
    assert after.startswith(before) and added and after[len(before) :].decode() == added
    assert "## Session chat-7 (09:00)" in added and "where is the offsite?" in added
    assert "sk-proj" not in added and "[redacted api key]" in added
    assert memory.session_end({"id": "empty", "messages": []}) is None
    run_id = next(
        p.name for p in (memory.workspace.state_dir / "journal").iterdir() if p.name.startswith("session-end")
    )
    rollback(memory.workspace, run_id)
    assert daily.read_bytes() == before


def test_session_end_writes_nothing_for_a_session_of_greetings_and_thanks(memory) -> None:
    """Issue 43 item 9: `/quit` after "hi there" wrote "the user said: hi there" to the daily."""
    daily = memory.workspace.root / "memory" / "2026-03-24.md"
    before = daily.read_bytes()
    chatter = {
        "id": "hello",
        "messages": [
            {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": "Hello! What can I do for you?"},
            {"role": "user", "content": "ok thanks!"},
        ],
    }
    with clock.pinned(NOW):
        assert memory.session_end(chatter) is None
        assert memory.session_end(chatter, model="openai/gpt-4o-mini") is None  # no model call either
    assert daily.read_bytes() == before
    # a session with something in it is summarised by what was said, the chatter left out
    chatter["messages"].insert(2, {"role": "user", "content": "the offsite moved to Rostock"})
    with clock.pinned(NOW):
        added = memory.session_end(chatter)
    assert added and "the user said: the offsite moved to Rostock" in added
    assert "hi there" not in added and "thanks" not in added


def test_session_end_with_a_model(memory) -> None:
    from lifelong import llm

    session = {"id": "m", "messages": [{"role": "user", "content": "we chose Friday for the dinner"}]}
    original = llm.complete

    def mocked(messages, *, model, deadline_s, **kw):  # noqa: ANN001, ANN003, ANN202 - litellm's own mock below
        return original(
            messages, model=model, deadline_s=deadline_s, mock_response="- Dinner moved to Friday."
        )

    llm_complete, llm.complete = llm.complete, mocked
    try:
        with clock.pinned(NOW):
            added = memory.session_end(session, model="openai/gpt-4o-mini")
    finally:
        llm.complete = llm_complete
    assert added and "- Dinner moved to Friday." in added


def test_services_are_never_offered_to_a_model(memory) -> None:
    """A tool registered with agent=False is callable by plugins (ctx.call_tool) but is neither
    listed for a model nor runnable through the runtime's call_tool."""
    host = memory.host
    host._register_tool(
        "recall_service",
        "internal",
        {"type": "object", "properties": {}},
        lambda ctx: {"ok": 1},
        "t",
        agent=False,
    )
    assert "recall_service" not in {t["function"]["name"] for t in memory.tools()}
    refused = memory.call_tool("recall_service", {})["error"]
    assert refused.startswith("unknown tool 'recall_service'; available: ")
    assert refused.split("available: ")[1].split(", ") == sorted(
        t["function"]["name"] for t in memory.tools()
    )
    assert host.ctx.call_tool("recall_service") == {"ok": 1}
