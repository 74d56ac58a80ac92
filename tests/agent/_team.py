"""A planner that asks a researcher agent about two topics in parallel: shared by the sub-agent tests and the
process they kill (``_team_child.py``). The scripts depend only on the conversation, so a resumed run says
the same things as an uninterrupted one."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

import anyio

from agent_core import AgentState, ContextMessage, ContextToolResult, LlmContext
from effects import ModelReply, TextSink, Tool, tool
from effects.testing import ScriptedModel, call_tools, say

TOPICS = ("cats", "dogs")


def question(context: LlmContext) -> str:
    """The last user message."""
    users = [e for e in context.entries if isinstance(e, ContextMessage) and e.role == "user"]
    return users[-1].content


def results(context: LlmContext) -> list[ContextToolResult]:
    """The tool results of the turn, in order."""
    return [e for e in context.entries if isinstance(e, ContextToolResult)]


def researcher(context: LlmContext) -> ModelReply:
    """Looks the topic up, then answers with what it found."""
    found = results(context)
    if not found:
        return call_tools(("lookup", {"topic": question(context)}, "lookup-1"))
    return say(f"{question(context)}: {found[0].content}")


def planner(context: LlmContext) -> ModelReply:
    """Asks the researcher about every topic at once, then sums up what the children answered."""
    found = results(context)
    if not found:
        return call_tools(*(("research", {"task": topic}, f"ask-{topic}") for topic in TOPICS))
    return say(" | ".join(f"{r.content}{' (failed)' if r.is_error else ''}" for r in found))


Conversation = tuple[list[tuple[str, str]], dict[str, tuple[str, str, object]]]


def conversation(state: AgentState) -> Conversation:
    """The messages and the tool calls (name, parameters, result) of a session, without times and ids."""
    messages = [(state.messages[i].role, state.messages[i].content) for i in range(len(state.messages))]
    calls: dict[str, tuple[str, str, object]] = {
        i: (r.name, r.parameters, r.result) for i, r in state.tool_calls.items()
    }
    return messages, calls


class Dying:
    """A model (``script``'s) shared by ``agents`` agents, for a process that kills itself: it dies with SIGKILL
    once every one of them is inside its ``at``-th model call (1: the first; 2: the one after its tool results;
    0: never), so every input before that call is durable in their logs."""

    def __init__(self, script: Callable[[LlmContext], ModelReply], agents: int, at: int) -> None:
        self._agents, self._at, self._inside, self._inner = agents, at, 0, ScriptedModel(script)

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        if (2 if results(context) else 1) == self._at:
            self._inside += 1
            if self._inside == self._agents:
                os.kill(os.getpid(), signal.SIGKILL)  # what a power cut does: no cleanup, no flush
            await anyio.sleep_forever()
        return await self._inner.complete(context, on_text)


def parallel_lookup() -> Tool[..., Any]:
    """A ``lookup(topic)`` tool whose calls all wait until one call of each of :data:`TOPICS` arrived: only calls
    running in parallel (in different children, or subtrees) get past it."""
    arrived: list[str] = []
    every = anyio.Event()

    @tool
    async def lookup(topic: str) -> str:
        """Look a topic up."""
        arrived.append(topic)
        if len(arrived) == len(TOPICS):
            every.set()
        await every.wait()
        return f"{topic} facts"

    return lookup
