"""An MCP server whose tools fail the ways servers do: a JSON-RPC error, a crash mid-call, a flood.

Over stdio by default; with ``--http`` over streamable HTTP on a free loopback
port, whose URL it prints on the first line of its output once it listens
(``--json``: answering with JSON bodies instead of event streams).
"""

from __future__ import annotations

import os
import socket
import sys

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

server = MCPServer("failing")


@server.tool(description="Answers every call with a JSON-RPC error.")
def protocol_error() -> str:
    raise MCPError(code=-32603, message="the backend is down")


@server.tool(description="Kills the server process in the middle of the call.")
def crash() -> str:
    os._exit(3)


def flood() -> str:
    return "x" * 20_000_000


def serve_http() -> None:
    import uvicorn

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    print(f"http://127.0.0.1:{listening.getsockname()[1]}/mcp", flush=True)
    if "--json" in sys.argv:  # one more tool, to answer with a body past a client's bound
        server.add_tool(flood, description="Answers with 20 MB of text.")
    app = server.streamable_http_app(json_response="--json" in sys.argv)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve_http()
    else:
        server.run()
