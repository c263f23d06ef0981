from __future__ import annotations

import datetime as dt
import time

import pytest
from freezegun import freeze_time

from lifelong import clock, llm
from lifelong.errors import InputError, LLMOffline, LLMTimeout
from lifelong.journal import Journal, RollbackConflict, rollback
from lifelong.templates import PromptTemplates


def test_llm_offline_without_model() -> None:
    with pytest.raises(LLMOffline, match="no model configured"):
        llm.complete([{"role": "user", "content": "hi"}], model=None, deadline_s=1)


def test_llm_real_litellm_mock_response() -> None:
    out = llm.complete(
        [{"role": "user", "content": "hi"}], model="gpt-4o-mini", deadline_s=10, mock_response="NONE"
    )
    assert out == "NONE"


def test_llm_deadline_is_a_ceiling() -> None:
    started = time.monotonic()
    with pytest.raises(LLMTimeout):
        # litellm's own mock sleeps for mock_delay seconds before answering
        llm.complete(
            [{"role": "user", "content": "hi"}],
            model="gpt-4o-mini",
            deadline_s=0.3,
            mock_response="late",
            mock_delay=3,
        )
    assert time.monotonic() - started < 2.5


def test_llm_provider_error_becomes_offline() -> None:
    with pytest.raises(LLMOffline, match="failed"):
        llm.complete(
            [{"role": "user", "content": "hi"}],
            model="gpt-4o-mini",
            deadline_s=10,
            mock_response=Exception("provider down"),
        )


def test_clock_override_and_freezegun() -> None:
    pinned = dt.datetime(2026, 3, 29, 1, 30, tzinfo=dt.UTC)
    with clock.pinned(pinned):
        assert clock.now() == pinned
        assert clock.now(clock.zone("Europe/Berlin")).hour == 3  # DST began at 01:00 UTC that day
    with freeze_time("2030-01-01 12:00:00"):
        assert clock.now().year == 2030
    with pytest.raises(InputError, match="not an ISO 8601"):
        clock.parse_instant("yesterday")
    assert clock.parse_instant("2026-03-04", clock.zone("Europe/Berlin")).utcoffset() == dt.timedelta(hours=1)


def test_the_clock_says_whether_it_is_pinned_or_real() -> None:
    assert not clock.is_pinned()
    with freeze_time("2030-01-01 12:00:00"):  # freezegun freezes the real clock: not pinned
        assert not clock.is_pinned()
    with clock.pinned(dt.datetime(2026, 3, 4, 9, tzinfo=dt.UTC)):
        assert clock.is_pinned()
    assert not clock.is_pinned()
    clock.set_now(dt.datetime(2026, 3, 4, 9, tzinfo=dt.UTC))  # what --now does
    assert clock.is_pinned()
    clock.set_now(None)
    assert not clock.is_pinned()


def test_journal_rollback_is_exact(make_workspace) -> None:
    ws = make_workspace({"MEMORY.md": "# Mine\r\nexact bytes  \n"})
    before = (ws.root / "MEMORY.md").read_bytes()
    j = Journal(ws, "run-1")
    j.write(ws.root / "MEMORY.md", before + b"promoted\n")
    j.write(ws.root / "MEMORY.md", before + b"promoted twice\n")
    j.write(ws.root / "DREAMS.md", "diary\n")
    restored = rollback(ws, "run-1")
    assert (ws.root / "MEMORY.md").read_bytes() == before
    assert not (ws.root / "DREAMS.md").exists()
    assert sorted(restored)[0] == "DREAMS.md"


def test_journal_refuses_when_human_edited(make_workspace) -> None:
    ws = make_workspace({"MEMORY.md": "human\n"})
    j = Journal(ws, "run-2")
    j.write(ws.root / "MEMORY.md", "human\nauto\n")
    (ws.root / "MEMORY.md").write_text("human edited\nauto\n")
    with pytest.raises(RollbackConflict, match="was edited after run run-2"):
        rollback(ws, "run-2")
    assert (ws.root / "MEMORY.md").read_text() == "human edited\nauto\n"
    rollback(ws, "run-2", on_conflict=lambda rel, cur, before: cur.replace(b"auto\n", b""))
    assert (ws.root / "MEMORY.md").read_text() == "human edited\n"


def test_templates_are_strict(tmp_path) -> None:
    import jinja2

    (tmp_path / "note.j2").write_text("Today is {{ today }}.")
    prompts = PromptTemplates(tmp_path)
    assert prompts.render("note.j2", today="2026-03-04") == "Today is 2026-03-04."
    with pytest.raises(jinja2.UndefinedError):
        prompts.render("note.j2")
    with pytest.raises(jinja2.TemplateNotFound):
        prompts.render("does-not-exist.j2")


def test_importing_litellm_is_not_charged_to_the_first_calls_deadline(monkeypatch) -> None:  # noqa: ANN001
    """Issue 40 item 4: on a loaded machine importing litellm took 44 s, longer than the flush
    turn's deadline, so the flush saved nothing. The import is a one-time cost of the process: the
    deadline counts from when it is done."""
    import threading
    import time

    from lifelong import llm

    slow = threading.Event()

    def slow_import() -> None:
        time.sleep(0.6)
        import litellm  # noqa: F401

        slow.set()

    monkeypatch.setattr(llm, "_import_litellm", slow_import)
    monkeypatch.setattr(llm, "_warm", threading.Event())
    monkeypatch.setattr(llm, "_warming", [])
    reply = llm.complete(
        [{"role": "user", "content": "hi"}], model="openai/gpt-4o-mini", deadline_s=0.4, mock_response="saved"
    )
    assert reply == "saved" and slow.is_set()
