"""A tree three levels deep with parallel children at each level: a planner asks a researcher about two topics
at once, each researcher asks a fact finder about two aspects at once, and each finder looks its aspect up.
Shared by the tree tests and the process they kill (``_deep_team_child.py``). The scripts depend only on the
conversation, so a resumed or forked run says the same things as an uninterrupted one."""

from __future__ import annotations

from typing import Any

from agent_core import LlmContext
from effects import Agent, EventStore, ModelReply, Tool, load_state
from effects.testing import ScriptedModel, call_tools, say

from ._team import TOPICS, conversation, planner, question, results

ASPECTS = ("food", "sound")

__all__ = [
    "ASPECTS",
    "TOPICS",
    "conversation",
    "conversations",
    "finder",
    "lookups",
    "planner",
    "researcher",
    "sessions",
    "team",
]


def researcher(context: LlmContext) -> ModelReply:
    """Asks the finder about every aspect of its topic at once, then joins what they found."""
    found = results(context)
    if not found:
        topic = question(context)
        return call_tools(*(("find", {"task": f"{topic} {aspect}"}, f"find-{aspect}") for aspect in ASPECTS))
    return say(f"{question(context)}: " + "; ".join(r.content for r in found))


def finder(context: LlmContext) -> ModelReply:
    """Looks its aspect up, then answers with what it found."""
    found = results(context)
    if not found:
        return call_tools(("lookup", {"aspect": question(context)}, "lookup-1"))
    return say(found[0].content + (" (failed)" if found[0].is_error else ""))


def team(
    lookup: Tool[..., Any], finder_model: Any = None, researcher_model: Any = None, **agent: Any
) -> Tool[..., str]:
    """The planner's tool ``research``: a researcher agent whose tool ``find`` is a finder agent with ``lookup``
    (``finder_model`` and ``researcher_model`` replace their scripted models; ``agent``: more ``Agent`` arguments)."""
    leaf = Agent(finder_model or ScriptedModel(finder), tools=[lookup], **agent)
    middle = Agent(
        researcher_model or ScriptedModel(researcher), tools=[leaf.as_tool("find", "Find one fact.")], **agent
    )
    return middle.as_tool("research", "Research a topic.")


def sessions(root: str) -> tuple[str, ...]:
    """Every session of the tree under ``root``, parents before their children."""
    ids = [root]
    for topic in TOPICS:
        middle = f"{root}:ask-{topic}"
        ids += [middle, *(f"{middle}:find-{aspect}" for aspect in ASPECTS)]
    return tuple(ids)


def lookups() -> tuple[str, ...]:
    """What the four lookups of a whole run look up."""
    return tuple(f"{topic} {aspect}" for topic in TOPICS for aspect in ASPECTS)


def conversations(store: EventStore, root: str) -> dict[str, object]:
    """Each session's conversation, by its place in the tree (its id without the root's)."""
    return {sid[len(root) :]: conversation(load_state(store, sid)) for sid in sessions(root)}
