"""Issue 15 item 6: rolling back an older run while later runs have written MEMORY.md and
DREAMS.md since. Later nights' output is not a human edit: the rollback removes exactly the older
run's items and diary entry, keeps the later runs' output, needs no --force, and can be undone."""

from __future__ import annotations

import pytest
from lifelong_plugins.dreaming.rollback import rollback_run
from lifelong_plugins.dreaming.state import history

from lifelong.journal import RollbackConflict

from .conftest import at, dream
from .test_run import ANDROID, D04, D16, FILES, PITCH_QUERIES, recall

ANDROID_QUERIES = {
    f"2026-03-{d}": [q]
    for d, q in zip(
        (17, 18, 19, 20),
        ("android release", "android release april", "priya android release", "moving the android release"),
        strict=True,
    )
}


def test_an_older_run_rolls_back_without_force_and_keeps_later_runs_output(dream_host) -> None:
    host = dream_host(FILES)
    root = host.workspace.root
    memory, dreams = root / "MEMORY.md", root / "DREAMS.md"
    original = memory.read_bytes()
    recall(host, D04, 1, 6, PITCH_QUERIES)
    first = dream(host, at("2026-03-10"))
    assert first.promoted
    recall(host, D16, 1, 6, ANDROID_QUERIES)
    second = dream(host, at("2026-03-21"))
    assert second.promoted and any(ANDROID in p["text"] for p in second.promoted)
    after_both = memory.read_text()

    out = rollback_run(host, first.run_id)  # no force: nothing a human wrote is in the way
    text = memory.read_text()
    for p in first.promoted:
        assert f"key:{p['key']}" not in text
    for p in second.promoted:
        assert f"key:{p['key']}" in text
    assert f"dream-{first.run_id}" not in dreams.read_text()
    assert f"dream-{second.run_id}" in dreams.read_text()
    assert not out["conflicts"] and "later runs' output kept" in out["message"]
    assert "human edits kept" not in out["message"]
    assert {r["run_id"]: r["status"] for r in history(host.store)}[first.run_id] == "rolled_back"

    rollback_run(host, out["undo_run"])  # the surgical rollback is itself reversible
    assert memory.read_text() == after_both
    assert original != memory.read_bytes()


def _two_runs_with_human_edits_between(host):  # noqa: ANN001, ANN202
    """Run 1 promotes the pitch decision; a human corrects it, writes a note after its key marker
    and adds a line in its section; run 2 promotes the Android release (its output now holds the
    human's edits)."""
    memory = host.workspace.root / "MEMORY.md"
    recall(host, D04, 1, 6, PITCH_QUERIES)
    first = dream(host, at("2026-03-10"))
    key = first.promoted[0]["key"]
    text = memory.read_text()
    line = next(ln for ln in text.split("\n") if f"key:{key}" in ln)
    edited = line.replace("slide 9", "slide 7") + " (Priya confirmed)"
    text = text.replace(line, edited + "\n- My own line inside the section.")
    memory.write_text(text)
    recall(host, D16, 1, 6, ANDROID_QUERIES)
    second = dream(host, at("2026-03-21"))
    assert second.promoted and ANDROID in memory.read_text()
    return first, second, key, edited


def test_a_rollback_never_removes_an_item_a_human_edited_before_a_later_night(dream_host) -> None:
    """Issue 40 item 1: the human's edits became part of the later run's output; that is no proof
    that only later nights changed the file. Without --force the rollback refuses (naming the
    file), and with --force it keeps the edited item and the added line, removing nothing else."""
    host = dream_host(FILES)
    memory = host.workspace.root / "MEMORY.md"
    first, second, key, edited = _two_runs_with_human_edits_between(host)
    for _ in range(2):  # more nights: the edits stay
        dream(host, at("2026-03-22"))
    before = memory.read_bytes()
    with pytest.raises(RollbackConflict, match="MEMORY.md was edited after run"):
        rollback_run(host, first.run_id)
    assert memory.read_bytes() == before
    out = rollback_run(host, first.run_id, force=True)
    text = memory.read_text()
    assert edited in text and "- My own line inside the section." in text and ANDROID in text
    assert (
        out["kept"] == [f"MEMORY.md: {key}"]
        and f"kept because edited since: MEMORY.md: {key}" in out["message"]
    )
    assert f"dream-{first.run_id}" not in (host.workspace.root / "DREAMS.md").read_text()
    rollback_run(host, out["undo_run"])
    assert memory.read_bytes() == before


def test_a_run_item_edited_since_is_named_when_the_file_changed_only_by_later_nights(dream_host) -> None:
    """When the chain of nights is unbroken but an item the run wrote no longer reads as it wrote
    it, the rollback says which item and changes nothing."""
    host = dream_host(FILES)
    root = host.workspace.root
    memory = root / "MEMORY.md"
    recall(host, D04, 1, 6, PITCH_QUERIES)
    first = dream(host, at("2026-03-10"))
    key = first.promoted[0]["key"]
    # a later night wrote the edit itself (as a run that carried it would): the file's chain is
    # unbroken, yet the item is not what run 1 wrote
    text = memory.read_text().replace("slide 9", "slide 7")
    from lifelong.journal import Journal

    Journal(host.workspace, "20260318-030000-beef", plugin="dreaming").write(memory, text)
    before = memory.read_bytes()
    with pytest.raises(RollbackConflict, match=f"item {key} that this run wrote was edited since"):
        rollback_run(host, first.run_id)
    assert memory.read_bytes() == before


def test_a_forced_rollback_killed_after_one_file_puts_nothing_back_twice(dream_host) -> None:
    """Issue 40 item 7: a forced rollback killed after it reverted MEMORY.md (through its undo
    journal) and before it recorded itself is finished by the next command; reverting MEMORY.md a
    second time put back twice the line the run had removed (a compaction removes lines)."""
    import json

    from lifelong.journal import Journal, unapply

    host = dream_host(FILES)
    ws, root = host.workspace, host.workspace.root
    memory = root / "MEMORY.md"
    original = memory.read_text()
    run_id = "20260310-030000-abcd"
    run = Journal(ws, run_id, plugin="dreaming")  # a night that removed a line and wrote its diary
    run.write(memory, original.replace("- I live in Berlin.\n", ""))
    run.write(root / "DREAMS.md", "# Dream diary\n")
    host.store.conn.execute(
        "INSERT INTO dream_runs(run_id, started_at, mode, status, message, summary) VALUES (?, ?, 'nightly', 'ok', '', '{}')",
        (run_id, "2026-03-10T03:00:00+01:00"),
    )
    memory.write_text(memory.read_text() + "- mine\n")  # a human edit: the rollback must be forced
    # what the killed `dream rollback --force` had done: on record as rolling back, MEMORY.md
    # reverted through its undo journal, DREAMS.md not yet
    state = {"force": True, "undo": "undo-20260311-090000-beef", "status": "ok", "message": ""}
    host.store.conn.execute(
        "UPDATE dream_runs SET status = 'rolling_back', summary = ? WHERE run_id = ?",
        (json.dumps({"rollback": state}), run_id),
    )
    host.store.conn.commit()
    reverted = unapply(original, original.replace("- I live in Berlin.\n", ""), memory.read_text()).text
    Journal(ws, state["undo"], plugin="dreaming").write(memory, reverted, action="rollback")
    out = rollback_run(host, run_id)  # any dream command finishes it first
    text = memory.read_text()
    assert text.count("- I live in Berlin.") == 1 and text.endswith("- mine\n")
    assert not (root / "DREAMS.md").exists() and out["recovered"]
