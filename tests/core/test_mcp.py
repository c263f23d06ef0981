"""The MCP server, driven by the real MCP client over stdio."""

from __future__ import annotations

import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

FILES = {
    "memory/2026-03-04.md": "# 2026-03-04\n- The pitch opens with the offline sync demo (TW-418 fixed).\n"
}


def test_mcp_lists_and_calls_tools(make_workspace) -> None:
    ws = make_workspace(FILES, {"embedding": {"provider": "none"}})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lifelong", "--workspace", str(ws.root), "--now", "2026-03-05T09:00", "mcp"],
    )

    async def session() -> tuple[list[str], dict, dict, bool]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = await s.list_tools()
            found = await s.call_tool("memory_search", {"query": "TW-418"})
            refused = await s.call_tool("memory_get", {"path": "../../etc/passwd"})
            return (
                [t.name for t in tools.tools],
                json.loads(found.content[0].text),
                json.loads(refused.content[0].text),
                bool(refused.is_error),
            )

    names, found, refused, is_error = anyio.run(session)
    assert {"memory_search", "memory_get"} <= set(names)
    assert found["results"][0]["citation"] == "Source: memory/2026-03-04.md#L1-L2"
    assert "outside the workspace" in refused["error"] and is_error
