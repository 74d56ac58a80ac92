"""A tree three levels deep with parallel children: ``plan`` asks ``research`` about cats and dogs at once; each
researcher asks ``deeper`` (a leaf agent with a ``lookup`` tool), and the two leaves' lookups run at the same
time. Shared by the tests that look at a tree (events, spans, ``show --tree``, the viewer)."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from agent_core import AgentState, LlmContext
from effects import Agent, EventStore, ModelReply, Session, open_session
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._team import TOPICS, parallel_lookup, planner, question, researcher, results

ROOT = "plan"
SESSIONS = {  # every session of the tree -> its parent (the root has none)
    ROOT: "",
    **{f"{ROOT}:ask-{topic}": ROOT for topic in TOPICS},
    **{f"{ROOT}:ask-{topic}:deep-1": f"{ROOT}:ask-{topic}" for topic in TOPICS},
}


def middle(context: LlmContext) -> ModelReply:
    """Passes its task to the leaf, then reports what the leaf said."""
    found = results(context)
    if not found:
        return call_tools(("deeper", {"task": question(context)}, "deep-1"))
    return say(f"via leaf: {found[0].content}")


def tree_agents(clock: ManualClock) -> Agent:
    """The ``research`` level of the tree (with its leaf below it); the root's model is :func:`planner`."""
    lookup = parallel_lookup()  # only leaves running in parallel, in different subtrees, get past it
    leaf = Agent(ScriptedModel(researcher), tools=[lookup], clock=clock, ids=SequentialIds())
    return Agent(ScriptedModel(middle), tools=[leaf.as_tool("deeper", "Ask the leaf.")], clock=clock)


async def grow_tree(store: EventStore, watch: Callable[[Session], object] = lambda s: None) -> AgentState:
    """Run the root's one turn in ``store``; ``watch`` is called with the root session before it starts."""
    clock = ManualClock()
    research = tree_agents(clock).as_tool("research", "Research a topic.")
    async with open_session(store, ROOT, ScriptedModel(planner), tools=[research], clock=clock) as session:
        watch(session)
        session.send("tell me about pets")
        with anyio.fail_after(10):
            return await session.turn_done()
