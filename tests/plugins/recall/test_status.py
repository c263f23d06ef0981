"""What ``lifelong status`` says about vectors before and after the first index."""

from __future__ import annotations

import datetime as dt

from lifelong_plugins.recall.status import recall_status

from lifelong import clock

NOW = dt.datetime(2026, 3, 24, 9, tzinfo=dt.UTC)
FILES = {"memory/2026-03-04.md": "- The pitch opens with the demo.\n"}


def test_before_the_first_index_status_names_the_configured_embedder_and_that_nothing_is_indexed(
    make_host,  # noqa: ANN001
) -> None:
    host = make_host(FILES, {"embedding": {"provider": "local"}})
    with clock.pinned(NOW):
        report = recall_status(host.ctx)
    first = report.summary[0]
    assert "FTS-only" not in first
    assert "local" in first and "nothing indexed yet" in first
    assert report.data["embedder"] is None and report.data["embedder_configured"] == "local"


def test_with_embedding_provider_none_status_says_search_is_fts_only(make_host) -> None:  # noqa: ANN001
    host = make_host(FILES, {"embedding": {"provider": "none"}})
    with clock.pinned(NOW):
        report = recall_status(host.ctx)
    assert "FTS-only" in report.summary[0] and "embedding.provider none" in report.summary[0]
    assert report.data["embedder_configured"] == "none"
