"""MCP: an agent's sessions offered as MCP tools (see :func:`effects.protocols.mcp_server`).

Importing it imports the official ``mcp`` SDK (the ``mcp`` extra).
"""

from ._http import build_app
from ._server import build

__all__ = ["build", "build_app"]
