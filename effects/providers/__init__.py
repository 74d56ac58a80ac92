"""Real models and real tools: OpenAI-compatible and Anthropic model adapters, MCP tool servers,
and a scripted provider server for testing them offline.

The SDKs are optional extras (``openai``, ``anthropic``, ``mcp``); they are
imported when an adapter is built, which raises :class:`MissingExtra` naming
the extra to install when one is absent.
"""

from ._extras import MissingExtra
from .anthropic import AnthropicModel
from .demo import chat_demo_model, chat_demo_tools
from .fake_server import HOLD, FakeProviderServer, RecordedRequest, Reply, sse
from .fake_streams import FakeToolCall, anthropic_reply, anthropic_stream, error_reply, openai_reply, openai_stream
from .mcp import McpServer, McpTool
from .openai import OpenAIModel

__all__ = [
    "HOLD",
    "AnthropicModel",
    "FakeProviderServer",
    "FakeToolCall",
    "McpServer",
    "McpTool",
    "MissingExtra",
    "OpenAIModel",
    "RecordedRequest",
    "Reply",
    "anthropic_reply",
    "anthropic_stream",
    "chat_demo_model",
    "chat_demo_tools",
    "error_reply",
    "openai_reply",
    "openai_stream",
    "sse",
]
