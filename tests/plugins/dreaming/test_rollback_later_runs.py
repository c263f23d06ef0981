"""Issue 15 item 6: rolling back an older run while later runs have written MEMORY.md and
DREAMS.md since. Later nights' output is not a human edit: the rollback removes exactly the older
run's items and diary entry, keeps the later runs' output, needs no --force, and can be undone."""

from __future__ import annotations

from lifelong_plugins.dreaming.run import history, rollback_run

from .conftest import at, dream
from .test_run import ANDROID, D04, D16, FILES, PITCH_QUERIES, recall


def test_an_older_run_rolls_back_without_force_and_keeps_later_runs_output(dream_host) -> None:
    host = dream_host(FILES)
    root = host.workspace.root
    memory, dreams = root / "MEMORY.md", root / "DREAMS.md"
    original = memory.read_bytes()
    recall(host, D04, 1, 6, PITCH_QUERIES)
    first = dream(host, at("2026-03-10"))
    assert first.promoted
    android = {
        f"2026-03-{d}": [q]
        for d, q in zip(
            (17, 18, 19, 20),
            (
                "android release",
                "android release april",
                "priya android release",
                "moving the android release",
            ),
            strict=True,
        )
    }
    recall(host, D16, 1, 6, android)
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
