"""A planner whose writer children (and a grandchild under an editor) call an approval-gated ``write``: shared by
the approval tests and the process they kill (``_gated_child.py``). The scripts depend only on the conversation."""

from __future__ import annotations

from collections.abc import Callable

from agent_core import ContextToolResult, LlmContext
from effects import Agent, ModelReply, tool
from effects.testing import ScriptedModel, call_tools, say

if __package__:
    from ._team import question, results
else:  # run as a script's neighbour (``_gated_child.py``)
    from _team import question, results

TOPICS = ("cats", "dogs")


def writer(context: LlmContext) -> ModelReply:
    """Writes about the topic (a call that waits for a person), then says how it went."""
    found = results(context)
    if not found:
        return call_tools(("write", {"topic": question(context)}, "write-1"))
    return say(f"{question(context)}: {found[0].content}")


def planner(context: LlmContext) -> ModelReply:
    """Asks a writer about every topic at once, then sums up their answers."""
    found = results(context)
    if not found:
        return call_tools(*(("ask", {"task": topic}, f"ask-{topic}") for topic in TOPICS))
    return say(" | ".join(r.content for r in found))


def editor(context: LlmContext) -> ModelReply:
    """Passes the task on to a writer below it, then answers with what came back."""
    found: list[ContextToolResult] = results(context)
    if not found:
        return call_tools(("deeper", {"task": question(context)}, "deep-1"))
    return say(f"edited {found[0].content}")


def gated_write(ran: Callable[[str], None]) -> object:
    """The ``write`` tool, which needs approval; ``ran`` hears each topic it writes."""

    @tool(requires_approval=True)
    def write(topic: str) -> str:
        """Write about a topic (a person approves it first)."""
        ran(topic)
        return f"wrote {topic}"

    return write


def writers(ran: Callable[[str], None]) -> Agent:
    """The writer agent, offered as the tool ``ask``."""
    return Agent(ScriptedModel(writer), tools=[gated_write(ran)])  # type: ignore[list-item]
