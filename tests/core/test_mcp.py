"""The MCP server, driven by the real MCP client over stdio."""

from __future__ import annotations

import datetime as dt
import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

FILES = {
    "MEMORY.md": "# MEMORY\n\n- Prefers short answers.\n",
    "memory/2026-03-04.md": "# 2026-03-04\n- The pitch opens with the offline sync demo (TW-418 fixed).\n",
    "memory/2026-03-05.md": "# 2026-03-05\n- Today: rehearsed the pitch.\n",
}


def test_mcp_lists_and_calls_tools_and_reads_resources(make_workspace) -> None:
    ws = make_workspace(FILES, {"embedding": {"provider": "none"}})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lifelong", "--now", "2026-03-05T09:00", "mcp", "--workspace", str(ws.root)],
    )

    async def session() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            found = await s.call_tool("memory_search", {"query": "TW-418"})
            refused = await s.call_tool("memory_get", {"path": "../../etc/passwd"})
            bad_type = await s.call_tool("memory_search", {"query": "x", "max_results": "many"})
            internal = await s.call_tool("memory_search", {"query": "x", "source": "gate"})
            unknown = await s.call_tool("no_such_tool", {})
            service = await s.call_tool("dream_night", {})  # a suite-internal service, never listed
            resources = [str(r.uri) for r in (await s.list_resources()).resources]
            memory = (await s.read_resource("memory://MEMORY.md")).contents[0].text
            today = (await s.read_resource("memory://today")).contents[0].text
            return {
                "tools": tools,
                "found": json.loads(found.content[0].text),
                "refused": (json.loads(refused.content[0].text), refused.is_error),
                "bad_type": (json.loads(bad_type.content[0].text), bad_type.is_error),
                "internal": (json.loads(internal.content[0].text), internal.is_error),
                "unknown": (json.loads(unknown.content[0].text), unknown.is_error),
                "service": (json.loads(service.content[0].text), service.is_error),
                "resources": resources,
                "memory": memory,
                "today": today,
            }

    out = anyio.run(session)
    tools = out["tools"]
    assert {"memory_search", "memory_get"} <= set(tools)
    assert "source" not in tools["memory_search"].input_schema["properties"]  # internal parameter hidden
    assert tools["memory_search"].annotations.read_only_hint is False  # it records recall events
    assert "Records what was looked up" in tools["memory_search"].description
    assert tools["memory_get"].annotations.read_only_hint is True
    assert out["found"]["results"][0]["citation"] == "Source: memory/2026-03-04.md#L2-L2"  # the matching line
    for key, message in (
        ("refused", "outside the workspace"),
        ("bad_type", "max_results: invalid value 'many'"),
        ("internal", "unknown argument(s) source"),
        ("unknown", "unknown tool 'no_such_tool'"),
        ("service", "unknown tool 'dream_night'"),
    ):
        result, is_error = out[key]
        assert message in result["error"] and is_error, key
    for key in ("unknown", "service"):  # the tools it names are exactly the ones listed
        available = out[key][0]["error"].split("available: ", 1)[1]
        assert sorted(available.split(", ")) == sorted(tools), key
    assert out["resources"] == ["memory://MEMORY.md", "memory://today"]
    assert out["memory"] == FILES["MEMORY.md"]
    assert out["today"] == FILES["memory/2026-03-05.md"]
    assert dt.date(2026, 3, 5).isoformat() in out["today"]


def test_every_layer_is_served_and_writers_say_so(make_workspace) -> None:
    """Issue 20's tool list over real stdio: the wiki, why and remember tools are listed with
    descriptions and annotations; `remember` writes today's daily through the contradiction gate
    and reports the decision; a wiki lookup of an unknown id is an MCP error, not a crash."""
    ws = make_workspace(FILES, {"embedding": {"provider": "none"}})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lifelong", "--now", "2026-03-05T09:00", "mcp", "--workspace", str(ws.root)],
    )

    async def session() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            remembered = await s.call_tool("remember", {"text": "The pitch rehearsal moved to Friday 10:00."})
            missing = await s.call_tool("wiki_get", {"lookup": "entity.nobody-at-all"})
            after = await s.call_tool("memory_search", {"query": "rehearsal Friday"})
            return {
                "tools": tools,
                "remembered": (json.loads(remembered.content[0].text), remembered.is_error),
                "missing": (json.loads(missing.content[0].text), missing.is_error),
                "after": json.loads(after.content[0].text),
            }

    out = anyio.run(session)
    tools = out["tools"]
    wanted = {"memory_why", "wiki_search", "wiki_get", "wiki_apply", "wiki_lint", "remember"}
    assert wanted <= set(tools), sorted(tools)
    assert "dream_night" not in tools  # a service for other plugins, never offered to a model
    for name in wanted:
        assert len(tools[name].description) > 40 and tools[name].input_schema["type"] == "object", name
    for writer in ("remember", "wiki_apply"):
        assert tools[writer].annotations.read_only_hint is False, writer
    for reader in ("memory_why", "wiki_search", "wiki_get"):
        assert tools[reader].annotations.read_only_hint is True, reader
    result, is_error = out["remembered"]
    assert not is_error and result.get("decision", {}).get("action", result.get("action")) in (
        "allow",
        "warn",
    )
    daily = (ws.root / "memory" / "2026-03-05.md").read_text()
    assert daily.startswith(FILES["memory/2026-03-05.md"]) and "moved to Friday 10:00" in daily
    assert any("2026-03-05" in r["path"] for r in out["after"]["results"])
    result, is_error = out["missing"]
    assert is_error and "error" in result
