"""An MCP server (stdio) exposing every agent tool the loaded plugins registered
(``memory_search``, ``memory_get``, ...), for runtimes that speak the Model Context Protocol.

Each tool's JSON result is returned both as structured content and as one JSON text block; a tool
error (``{"error": ...}``) comes back with ``isError`` set, never as a crashed server. Calls run on
a worker thread so a slow search never blocks the protocol loop.
"""

from __future__ import annotations

import json
from typing import Any

from . import __version__
from .host import Host


def build_server(host: Host) -> Any:
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    lock = anyio.Lock()  # one SQLite connection: tool calls are serialised

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in host.tools.values()
            ]
        )

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        async with lock:
            result = await anyio.to_thread.run_sync(host.call_tool, params.name, arguments)
        text = json.dumps(result, ensure_ascii=False, default=str)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=result if isinstance(result, dict) else {"result": result},
            is_error=isinstance(result, dict) and "error" in result,
        )

    return Server(
        "lifelong",
        version=__version__,
        instructions="Long-term memory of this agent: search it with memory_search before "
        "answering questions about the past; cite the Source lines.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(host: Host) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(host)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
