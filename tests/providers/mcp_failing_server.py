"""An MCP server (stdio) whose tools fail the ways servers do: a JSON-RPC error, a crash mid-call."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

server = MCPServer("failing")


@server.tool(description="Answers every call with a JSON-RPC error.")
def protocol_error() -> str:
    raise MCPError(code=-32603, message="the backend is down")


@server.tool(description="Kills the server process in the middle of the call.")
def crash() -> str:
    os._exit(3)


if __name__ == "__main__":
    server.run()
