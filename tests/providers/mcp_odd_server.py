"""MCP servers that misbehave at the protocol's edges, over stdio: pass the behaviour's name as the argument.

* ``endless``: ``tools/list`` always answers with a ``nextCursor`` (a new one each page);
* ``looping``: ``tools/list`` answers with the same ``nextCursor`` again and again;
* ``chatty``: prints a line that is not a protocol message on its stdout before serving, and serves ``echo``.
"""

from __future__ import annotations

import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def _tool(n: int) -> types.Tool:
    return types.Tool(name=f"tool_{n}", input_schema={"type": "object", "properties": {}})


async def list_endless(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    page = int(params.cursor) if params is not None and params.cursor else 0
    return types.ListToolsResult(tools=[_tool(page)], next_cursor=str(page + 1))


async def list_looping(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[_tool(0)], next_cursor="again")


async def list_echo(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])


async def call_echo(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main(kind: str) -> None:
    handlers = {"endless": list_endless, "looping": list_looping, "chatty": list_echo}
    server = Server(kind, on_list_tools=handlers[kind], on_call_tool=call_echo)
    if kind == "chatty":
        print("hello from a chatty server", flush=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
