"""A fast version of ``python -m evals.concurrency`` (issue 14): two writers appending and
searching, a dreamer, a first index that embeds everything then a forced one, and a watcher,
all real CLI processes on one workspace, for a few seconds. Nothing lost or duplicated, no
"database is locked" reaching a user, every appended line findable after the final index."""

from __future__ import annotations

from lifelong_evals.concurrency import run


def test_concurrent_writers_dreamer_index_and_watcher_lose_nothing() -> None:
    r = run(seconds=6, files=12, seed=3)
    assert r["appended"] >= 2
    assert r["lost_in_file"] == 0 and r["not_findable"] == 0 and r["duplicated"] == 0, r["examples"]
    assert r["database_locked"] == 0 and r["other_failures"] == 0, r["examples"]
