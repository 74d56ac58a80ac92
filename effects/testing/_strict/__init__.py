"""Strict wire fakes of Anthropic's messages API and OpenAI's Responses API (see each module's docstring)."""

from ._parts import Compacted, Thought
from .anthropic import StrictAnthropicServer
from .responses import StrictResponsesServer

__all__ = ["Compacted", "StrictAnthropicServer", "StrictResponsesServer", "Thought"]
