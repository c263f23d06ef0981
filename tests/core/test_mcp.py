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
    assert out["found"]["results"][0]["citation"] == "Source: memory/2026-03-04.md#L1-L2"
    for key, message in (
        ("refused", "outside the workspace"),
        ("bad_type", "max_results: invalid value 'many'"),
        ("internal", "unknown argument(s) source"),
        ("unknown", "unknown tool 'no_such_tool'"),
    ):
        result, is_error = out[key]
        assert message in result["error"] and is_error, key
    assert out["resources"] == ["memory://MEMORY.md", "memory://today"]
    assert out["memory"] == FILES["MEMORY.md"]
    assert out["today"] == FILES["memory/2026-03-05.md"]
    assert dt.date(2026, 3, 5).isoformat() in out["today"]
