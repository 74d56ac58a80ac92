"""MCP: an agent's sessions offered as MCP tools (see :func:`effects.protocols.mcp_server`)."""
