"""Privacy tiers (issue 14): a note under memory/private/ or marked ``privacy: private`` is found
only by a private-scope search, read only with that scope, never reaches the gate's note in a
group chat, and never becomes a wiki page."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from lifelong_plugins.recall import service

from lifelong import clock
from lifelong.cli import cli
from lifelong.privacy import corpus_predicate, gate_scope, is_private, is_private_text

NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=clock.zone("Europe/Berlin"))

FILES = {
    "MEMORY.md": "# MEMORY\n\n- Maya founded Tidewater Labs in Berlin.\n",
    "memory/private/health.md": "# Health\n\n- Dr Okafor prescribed lisinopril for my blood pressure.\n",
    "memory/2026-03-10.md": "---\nprivacy: private\n---\n# 2026-03-10\n\n- The Zurich locker code is 4471 at Okafor clinic.\n",
    "memory/2026-03-12.md": "# 2026-03-12\n\n- Booked the Zurich offsite venue for the team.\n- Dr Okafor moved to Basel.\n",
}


def paths(results) -> set[str]:
    return {c.path for c in results}


def search(host, query: str, **kw):
    with clock.pinned(NOW):
        return service.run_search(host.ctx, service.make_request(host.ctx, query=query, **kw)).results


def test_the_rule() -> None:
    assert is_private("memory/private/a.md") and is_private("./memory/private/x/b.md")
    assert is_private("notes/a.md", {"privacy": "Private"}) and not is_private(
        "notes/a.md", {"privacy": "shared"}
    )
    assert not is_private("memory/privates.md") and not is_private("memory/2026-01-01.md", {"privacy": 1})
    assert is_private_text("n.md", "---\nprivacy: private\n---\nx\n")
    assert not is_private_text("n.md", "---\nprivacy: [unclosed\n---\nx\n")  # malformed: read as none
    assert gate_scope({"chat_type": "direct", "scope": "private"}) == "private"
    assert gate_scope({"scope": "private"}) == "private"  # a chat type left out is direct
    assert gate_scope({"chat_type": "group", "scope": "private"}) == "shared"
    assert gate_scope({"chat_type": "direct"}) == "shared"
    assert corpus_predicate("all", "shared") == ("c.corpus != ?", ["private"])
    assert corpus_predicate("memory", "private")[1] == ["memory", "private"]


def test_private_notes_need_the_private_scope(make_host) -> None:
    host = make_host(FILES)
    for corpus in ("memory", "all"):
        for query in ("lisinopril blood pressure", "Okafor", "Dr Okafor"):  # hybrid and concept index
            shared = search(host, query, corpus=corpus, min_score=0)
            assert paths(shared) <= {"memory/2026-03-12.md", "MEMORY.md"}, (query, paths(shared))
        assert "memory/2026-03-10.md" not in paths(
            search(host, "Zurich locker code", corpus=corpus, min_score=0)
        )
    private = search(host, "lisinopril blood pressure", scope="private")
    assert "memory/private/health.md" in paths(private)
    assert next(c for c in private if c.path == "memory/private/health.md").corpus == "private"
    assert "memory/2026-03-10.md" in paths(search(host, "Zurich locker code", scope="private"))
    # the shared daily stays findable in both scopes
    assert "memory/2026-03-12.md" in paths(search(host, "Zurich offsite venue"))


def test_memory_get_and_the_tools_refuse_a_private_note_without_the_scope(make_host) -> None:
    host = make_host(FILES)
    refused = host.call_tool("memory_get", {"path": "memory/private/health.md"})
    assert "private note" in refused["error"] and "scope private" in refused["error"]
    assert "lisinopril" not in json.dumps(refused)
    got = host.call_tool("memory_get", {"path": "memory/private/health.md", "scope": "private"})
    assert "lisinopril" in got["text"]
    with clock.pinned(NOW):
        found = host.call_tool("memory_search", {"query": "lisinopril", "min_score": 0})
        assert all(r["path"] != "memory/private/health.md" for r in found["results"])
        bad = host.call_tool("memory_search", {"query": "lisinopril", "scope": "everyone"})
    assert "error" in bad


def test_the_gate_injects_private_notes_only_into_a_direct_chat_that_asks(make_host) -> None:
    host = make_host(FILES, {"plugins": {"gate": {"allowed_chat_types": ["direct", "group"]}}})
    question = "what did Dr Okafor prescribe for my blood pressure?"

    def note(session: dict) -> str:
        with clock.pinned(NOW):
            return host.before_reply(session, question).note

    assert "lisinopril" in note({"id": "d1", "chat_type": "direct", "scope": "private"})
    assert "lisinopril" not in note({"id": "d2", "chat_type": "direct"})
    assert "lisinopril" not in note({"id": "g1", "chat_type": "group", "scope": "private"})
    # the same session asking again in the other scope does not reuse the cached note
    assert "lisinopril" not in note({"id": "d1", "chat_type": "direct"})


def test_cli_search_and_get_take_a_scope(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "lifelong.yaml").write_text(yaml.safe_dump({"timezone": "Europe/Berlin"}))
    run = CliRunner()
    base = ["--workspace", str(root), "--now", "2026-03-24T09:00"]
    shared = run.invoke(cli, [*base, "search", "lisinopril", "--json", "--min-score", "0"])
    assert shared.exit_code == 0 and "memory/private/health.md" not in shared.output
    private = run.invoke(cli, [*base, "search", "lisinopril", "--scope", "private", "--json"])
    assert private.exit_code == 0 and "memory/private/health.md" in private.output
    refused = run.invoke(cli, [*base, "get", "memory/private/health.md"])
    assert refused.exit_code != 0 and "private note" in refused.output and "lisinopril" not in refused.output
    assert (
        "lisinopril"
        in run.invoke(cli, [*base, "get", "memory/private/health.md", "--scope", "private"]).output
    )


def test_the_wiki_never_compiles_a_private_daily(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "lifelong.yaml").write_text(
        yaml.safe_dump({"timezone": "Europe/Berlin", "embedding": {"provider": "none"}})
    )
    (root / "MEMORY.md").write_text("# MEMORY\n")
    for day in ("2026-03-10", "2026-03-11", "2026-03-12"):
        (root / "memory" / f"{day}.md").write_text(
            f"---\nprivacy: private\n---\n# {day}\n\n- Quentin Halloway owes me 900 euros.\n"
        )
    (root / "memory" / "2026-03-13.md").write_text(
        "# 2026-03-13\n\n- Acme Robotics hired Dana.\n- Acme Robotics ships in May.\n"
    )
    result = CliRunner().invoke(
        cli, ["--workspace", str(root), "--now", "2026-03-24T09:00", "wiki", "compile"]
    )
    assert result.exit_code == 0, result.output
    pages = "".join(p.read_text() for p in (root / "wiki").rglob("*.md"))
    assert "Acme" in pages
    assert "Halloway" not in pages and "900 euros" not in pages


def test_private_chunks_form_their_own_corpus(make_host) -> None:
    host = make_host(
        {"memory/private/a.md": "# A\n\n- secret plan\n", "memory/2026-03-01.md": "# d\n\n- open plan\n"}
    )
    with clock.pinned(NOW):
        service.index_for(host.ctx).sync()
    rows = dict(host.store.conn.execute("SELECT corpus, count(*) FROM chunks GROUP BY corpus").fetchall())
    assert rows.get("private") == 1 and rows.get("memory") == 1
    recall = next(r for r in host.call("status_report", ctx=host.ctx) if r and r.plugin == "recall")
    assert recall.data["files_private"] == 1 and "(1 private)" in recall.summary[0]


def test_session_start_and_the_today_resource_keep_a_private_daily_back(tmp_path: Path) -> None:
    from lifelong import Memory
    from lifelong.mcp_server import RESOURCE_TODAY, read_resource_text

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "lifelong.yaml").write_text(
        yaml.safe_dump({"timezone": "Europe/Berlin", "embedding": {"provider": "none"}})
    )
    (root / "MEMORY.md").write_text("# MEMORY\n")
    (root / "memory" / "2026-03-24.md").write_text(
        "---\nprivacy: private\n---\n# 2026-03-24\n\n- Therapy at 5 with Dr Okafor.\n"
    )
    (root / "memory" / "2026-03-23.md").write_text("# 2026-03-23\n\n- Shipped the Zurich offsite plan.\n")
    with clock.pinned(NOW), Memory(root) as memory:
        group = memory.session_start({"id": "g", "chat_type": "group", "scope": "private"})
        direct = memory.session_start({"id": "d", "chat_type": "direct"})
        mine = memory.session_start({"id": "m", "chat_type": "direct", "scope": "private"})
        resource = read_resource_text(memory.host, RESOURCE_TODAY)
    assert "Zurich" in group and "Therapy" not in group
    assert "Zurich" in direct and "Therapy" not in direct
    assert "Therapy" in mine
    assert "Therapy" not in resource and "private note" in resource
