"""An MCP server (stdio) exposing every agent tool the loaded plugins registered (``memory_search``,
``memory_get``, ``memory_index`` and those of every other loaded plugin) and two resources,
MEMORY.md and today's daily note, for runtimes that speak the Model Context Protocol.

- Tools are listed with their public input schema (parameters marked ``x-internal``, such as
  recall's ``source``, are the suite's own and are not offered to a model; a call that sets one is
  refused) and their MCP annotations (a tool that writes or records says so).
- Arguments are validated against the schema by the host; every tool error comes back as an MCP
  tool result with ``isError`` set and a one-line message, never as a crashed server.
- Each result is returned as structured content plus one JSON text block. Calls run on a worker
  thread, one at a time (one SQLite connection), so a slow search never blocks the protocol loop.
- Nothing but protocol is written to stdout: log output goes to stderr and the workspace's logs.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from . import __version__, clock
from .host import Host
from .privacy import is_private_text

RESOURCE_MEMORY = "memory://MEMORY.md"
RESOURCE_TODAY = "memory://today"
ANNOTATION_KEYS = {
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
    "title": "title",
}


def _annotations(host_annotations: dict[str, Any] | None) -> Any:
    from mcp import types

    values = {ANNOTATION_KEYS[k]: v for k, v in (host_annotations or {}).items() if k in ANNOTATION_KEYS}
    if not values:  # a tool that says nothing is taken as read-only and idempotent
        values = {"read_only_hint": True, "idempotent_hint": True}
    return types.ToolAnnotations(**values)


def read_resource_text(host: Host, uri: str) -> str:
    ws = host.workspace
    assert ws is not None
    if uri == RESOURCE_MEMORY:
        return ws.read_text(ws.memory_file.name) if ws.memory_file.exists() else ""
    if uri == RESOURCE_TODAY:
        rel = f"memory/{clock.now(ws.timezone).date().isoformat()}.md"
        text = ws.read_text(rel) if (ws.root / rel).exists() else ""
        if is_private_text(rel, text):  # a resource has no scope: a private note stays behind memory_get
            return f"{rel} is a private note: read it with memory_get and scope private"
        return text
    raise ValueError(f"unknown resource {uri!r} (available: {RESOURCE_MEMORY}, {RESOURCE_TODAY})")


def build_server(host: Host) -> Any:
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    lock = anyio.Lock()  # one SQLite connection: tool calls are serialised

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.public_parameters(),
                    annotations=_annotations(t.annotations),
                )
                for t in host.agent_tools()
            ]
        )

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        tool = host.tools.get(params.name)
        internal = sorted(set(arguments) & tool.internal_parameters()) if tool else []
        if tool is not None and not tool.agent:
            result: dict[str, Any] = host.unknown_tool(params.name)
        elif internal:
            result = {"error": f"{params.name}: unknown argument(s) {', '.join(internal)}"}
        else:
            async with lock:
                result = await anyio.to_thread.run_sync(host.call_tool, params.name, arguments)
        text = json.dumps(result, ensure_ascii=False, default=str)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=result if isinstance(result, dict) else {"result": result},
            is_error=isinstance(result, dict) and "error" in result,
        )

    async def list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name="MEMORY.md",
                    uri=RESOURCE_MEMORY,
                    description="The agent's durable memory, loaded at the start of every session.",
                    mime_type="text/markdown",
                ),
                types.Resource(
                    name="today",
                    uri=RESOURCE_TODAY,
                    description="Today's daily note (memory/YYYY-MM-DD.md, in the workspace's time zone).",
                    mime_type="text/markdown",
                ),
            ]
        )

    async def read_resource(_ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        async with lock:
            text = await anyio.to_thread.run_sync(read_resource_text, host, uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    return Server(
        "lifelong",
        version=__version__,
        instructions="Long-term memory of this agent: search it with memory_search before answering "
        "questions about the past; cite the Source lines. Tools whose annotations say they are not "
        "read-only write to the user's notes or record what was looked up.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def serve_stdio(host: Host) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout carries the protocol only
    server = build_server(host)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
