from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time

import pytest
from lifelong_plugins.recall import service

from lifelong import clock
from lifelong.host import Host
from lifelong.store import Store

NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=clock.zone("Europe/Berlin"))
FILES = {
    "MEMORY.md": "# MEMORY\n- Maya founded Tidewater Labs.\n",
    "memory/2026-03-04.md": "# 2026-03-04\n- The pitch opens with the offline sync demo.\n",
    "memory/2026-03-06.md": "# 2026-03-06\n- Booked the offsite at Gut Boltenhagen.\n",
}


def host_with(make_workspace, module, files=FILES, config=None) -> Host:
    ws = make_workspace(files, config)
    return Host(ws, entry_points=False, extra_plugins=[module])


def test_retrieval_pre_short_circuits(make_workspace, write_plugin) -> None:
    mod = write_plugin(
        "tp_concepts",
        """
        @hookimpl
        def retrieval_pre(ctx, request):
            if request.query == "Tidewater":
                return [dict(chunk_id=-1, path="MEMORY.md", start_line=2, end_line=2,
                             text="- Maya founded Tidewater Labs.", score=1.0)]
            return None
        """,
        ["retrieval_pre"],
    )
    host = host_with(make_workspace, mod)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "Tidewater"})
        assert [r["path"] for r in out["results"]] == ["MEMORY.md"] and out["results"][0]["score"] == 1.0
        other = host.call_tool("memory_search", {"query": "offsite venue", "min_score": 0})
    assert any(r["path"] == "memory/2026-03-06.md" for r in other["results"])
    host.close()


def test_retrieval_post_rescores_and_supplement_merges(make_workspace, write_plugin) -> None:
    mod = write_plugin(
        "tp_focus",
        """
        @hookimpl
        def retrieval_post(ctx, request, candidates):
            for c in candidates:
                if "Boltenhagen" in c.text:
                    c.score = 0.99
            return candidates

        @hookimpl
        def corpus_supplement(ctx, request):
            return [dict(chunk_id=-5, path="wiki/claims/offsite.md", start_line=1, end_line=1, corpus="wiki",
                         text="Claim: the offsite venue is Gut Boltenhagen.", score=0.95)]
        """,
        ["retrieval_post", "corpus_supplement"],
    )
    host = host_with(make_workspace, mod)
    with clock.pinned(NOW):
        mem = host.call_tool("memory_search", {"query": "pitch demo", "min_score": 0})
        assert mem["results"][0]["path"] == "memory/2026-03-06.md"  # boosted by retrieval_post
        assert all(r["corpus"] == "memory" for r in mem["results"])  # no supplement for corpus=memory
        allc = host.call_tool(
            "memory_search", {"query": "pitch demo", "min_score": 0, "corpus": "all", "max_results": 2}
        )
    assert [r["corpus"] for r in allc["results"]] == ["memory", "wiki"]  # per-corpus cap of ceil(2/2)
    # supplement candidates are not chunks of the index: no recall events for them
    paths = {r["path"] for r in host.store.query("SELECT path FROM recall_events")}
    assert "wiki/claims/offsite.md" not in paths
    host.close()


def test_a_crashing_retrieval_plugin_does_not_break_search(make_workspace, write_plugin) -> None:
    mod = write_plugin(
        "tp_crash",
        """
        @hookimpl
        def retrieval_post(ctx, request, candidates):
            raise RuntimeError("scorer exploded")
        """,
        ["retrieval_post"],
    )
    host = host_with(make_workspace, mod)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "offsite", "min_score": 0})
    assert out["results"] and host.faults[0]["plugin"] == "tp_crash"
    host.close()


def test_remote_embedding_failure_degrades_to_fts_only(make_host, monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    host = make_host(FILES, {"embedding": {"provider": "gemini"}})
    with clock.pinned(NOW):
        report = service.index_for(host.ctx).sync()
        out = host.call_tool("memory_search", {"query": "Boltenhagen offsite", "min_score": 0})
    assert report.vectors.startswith("failed") and "GEMINI_API_KEY" in report.vectors
    assert out["results"][0]["path"] == "memory/2026-03-06.md"
    warnings = json.loads((host.workspace.state_dir / "warnings.json").read_text())
    assert warnings == ["embedding: gemini embeddings need GEMINI_API_KEY"]


def test_float32_engine_that_cannot_read_its_weights_falls_back_and_status_says_so(
    make_host, tmp_path
) -> None:
    from lifelong_plugins.embeddings.providers import LocalE5

    from lifelong.cli import status_data

    broken = tmp_path / "weights.bin"
    broken.write_bytes(b"E5S1" + b"\0" * 64)
    host = make_host(FILES)
    assert status_data(host)["embedding"] == {
        "provider": "local",
        "model": None,
        "engine": "float32",
    }
    host._embedder, host._embedder_made = LocalE5(float_weights=broken), True  # a real embedder
    with clock.pinned(NOW):
        report = service.index_for(host.ctx).sync()
        out = host.call_tool("memory_search", {"query": "where is the team offsite", "min_score": 0})
    assert report.embedded == 3 and not report.vectors.startswith("failed")
    assert out["results"][0]["path"] == "memory/2026-03-06.md"
    [warning] = status_data(host)["warnings"]
    assert warning.startswith("embedding: float32 engine unavailable") and str(broken) in warning
    assert "\n" not in warning


def test_no_sqlite_extension_is_loaded_or_reported(make_host) -> None:
    """Vectors are searched in memory; the store loads no extension and status names none."""
    from lifelong.cli import status_data

    host = make_host(FILES)
    with clock.pinned(NOW):
        out = host.call_tool("memory_search", {"query": "where is the team offsite", "min_score": 0})
    assert "memory/2026-03-06.md" in [r["path"] for r in out["results"]]
    assert host.store.query("SELECT count(*) n FROM chunk_vectors")[0]["n"] == 3
    with pytest.raises(Exception, match="no such function"):
        host.store.execute("select vec_version()")
    index = status_data(host)["index"]
    assert set(index) == {"path", "sqlite_version"}


def test_index_watch_follows_atomic_saves(make_workspace) -> None:
    ws = make_workspace(FILES, {"embedding": {"provider": "none"}})
    env = {**os.environ, "LIFELONG_WORKSPACE": str(ws.root)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "lifelong", "index", "--watch"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        line = ""
        while "watching" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
        # an editor's save: write a temp file, then rename it over the original
        tmp = ws.root / "memory" / ".2026-03-06.md.swp"
        tmp.write_text("# 2026-03-06\n- Booked the offsite at Schloss Zeesen instead.\n")
        os.replace(tmp, ws.root / "memory" / "2026-03-06.md")
        seen = ""
        while "1 modified" not in seen and time.monotonic() < deadline:
            seen = proc.stdout.readline()
        assert "1 modified" in seen
    finally:
        proc.terminate()
        code = proc.wait(timeout=10)
    assert code == 0  # SIGTERM ends the watch as Ctrl-C does, not by killing it (-15)
    store = Store(ws.index_path)
    texts = [r["text"] for r in store.query("SELECT text FROM chunks WHERE path = 'memory/2026-03-06.md'")]
    store.close()
    assert any("Schloss Zeesen" in t for t in texts)
