"""Real models and real tools: OpenAI-compatible (chat completions), OpenAI Responses and Anthropic model adapters,
MCP tool servers.

The SDKs are optional extras (``openai``, ``anthropic``, ``mcp``); they are
imported when an adapter is built, which raises :class:`MissingExtra` naming
the extra to install when one is absent. A scripted provider server for
testing them offline is in :mod:`effects.testing`.
"""

from .._extras import MissingExtra
from ._limits import StreamLimits
from .anthropic import AnthropicModel
from .demo import chat_demo_model, chat_demo_tools
from .mcp import McpServer, McpServerError, McpTool
from .openai import OpenAIModel
from .openai_responses import OpenAIResponsesModel

__all__ = [
    "AnthropicModel",
    "McpServer",
    "McpServerError",
    "McpTool",
    "MissingExtra",
    "OpenAIModel",
    "OpenAIResponsesModel",
    "StreamLimits",
    "chat_demo_model",
    "chat_demo_tools",
]
