"""Test doubles for agents built on agent-core: a scripted model, a manual clock, sequential ids, a
loopback server that speaks the OpenAI and Anthropic wire protocols, and strict fakes of Anthropic's messages
API and OpenAI's Responses API that stream signed thinking, reasoning and compaction items and refuse a request
the way the real API does when those come back missing, altered or moved.

They make a session deterministic and offline::

    from effects import Agent
    from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

    agent = Agent(ScriptedModel([call_tools(("add", {"a": 1, "b": 2})), say("3")]), tools=[add],
                  clock=ManualClock(), ids=SequentialIds())

Production code imports from :mod:`effects`; only tests and demos import from here.
"""

from .._agent import SequentialIds
from .._clock import ManualClock
from .._scripted import ScriptedModel, call_tools, fail, load_older_messages, load_tool_call_results, say
from ._fake_server import HOLD, FakeProviderServer, RecordedRequest, Reply, sse
from ._fake_streams import (
    FakeToolCall,
    anthropic_reply,
    anthropic_stream,
    error_reply,
    openai_reply,
    openai_stream,
    responses_reply,
    responses_stream,
)
from ._strict import Compacted, StrictAnthropicServer, StrictResponsesServer, Thought

__all__ = [
    "HOLD",
    "Compacted",
    "FakeProviderServer",
    "FakeToolCall",
    "ManualClock",
    "RecordedRequest",
    "Reply",
    "ScriptedModel",
    "SequentialIds",
    "StrictAnthropicServer",
    "StrictResponsesServer",
    "Thought",
    "anthropic_reply",
    "anthropic_stream",
    "call_tools",
    "error_reply",
    "fail",
    "load_older_messages",
    "load_tool_call_results",
    "openai_reply",
    "openai_stream",
    "responses_reply",
    "responses_stream",
    "say",
    "sse",
]
