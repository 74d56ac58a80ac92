"""A research team: a planner asks two researchers at once, then a writer; each runs as a child session.

The planner's model calls the agent tool `research` twice in one reply (the two
researchers run in parallel), then `write` with what they found. Each child has
its own log in the planner's store, under `<planner>:<tool call>`, whose
`session-started` names its parent; a crash resumes each from its log, and
forking the planner forks them as they stood. The writer's `publish` needs a
person's approval, asked for and given through the planner's session. Swap ScriptedModel for a real
adapter (effects.providers) to run the team on a provider.
It also prints each session's parent, e.g. `plan:write-1 <- plan (tool call write-1), root plan`.
Output includes: approving plan:write-1/call-1 (plan -> plan:write-1)
"""

import asyncio
import tempfile
from pathlib import Path

from agent_core import AgentState, ContextMessage, ContextToolResult, Lineage, LlmContext
from effects import Agent, ModelReply, SqliteStore, fork_session, load_state, open_session, tool
from effects.testing import ScriptedModel, call_tools, say

FACTS = {"cats": "cats purr", "dogs": "dogs bark"}


def task(context: LlmContext) -> str:
    return [e for e in context.entries if isinstance(e, ContextMessage) and e.role == "user"][-1].content


def results(context: LlmContext) -> list[str]:
    return [e.content for e in context.entries if isinstance(e, ContextToolResult)]


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return FACTS.get(topic, "nothing found")


# A person approves what the writer publishes: the writer's call waits in the planner's session, decided there.
@tool(requires_approval=True)
def publish(text: str) -> str:
    """Publish a report."""
    return f"published: {text}"


def researcher(context: LlmContext) -> ModelReply:
    found = results(context)
    return say(f"{task(context)}: {found[0]}") if found else call_tools(("lookup", {"topic": task(context)}))


def writer(context: LlmContext) -> ModelReply:
    found = results(context)
    return say(found[0]) if found else call_tools(("publish", {"text": f"team-report: {task(context)}"}))


def planner(context: LlmContext) -> ModelReply:
    found = results(context)
    if not found:  # two calls in one reply: the researchers run in parallel
        return call_tools(*(("research", {"task": topic}, f"research-{topic}") for topic in FACTS))
    if len(found) == len(FACTS):
        return call_tools(("write", {"task": "; ".join(found)}, "write-1"))
    return say(found[-1])


research = Agent(ScriptedModel(researcher), tools=[lookup]).as_tool("research", "Research one topic.")
write = Agent(ScriptedModel(writer), tools=[publish]).as_tool("write", "Write and publish the report.")


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "team.db")
        async with open_session(store, "plan", ScriptedModel(planner), tools=[research, write]) as session:
            session.send("What do cats and dogs do?")
            state = await session.turn_done()  # the writer's publish waits for a person: so does the planner
            for waiting in session.pending_approvals:
                print("approving", waiting.address, "(" + " -> ".join(waiting.path) + ")")
                session.approve(waiting.address)
            state = await session.turn_done()
        print(state.messages[len(state.messages) - 1].content)
        for info in store.sessions():  # the planner and its three children, each with its own log
            print(info.session_id, "<-", parent(load_state(store, info.session_id).config.lineage))
        # Fork the planner once both researchers had answered: the fork takes them along, not the writer.
        at = next(n for n in range(1, state.step) if researched(load_state(store, "plan", at=n)))
        fork = fork_session(store, "plan", at)
        print("forked:", *(i.session_id for i in store.sessions() if i.session_id.startswith(fork.session_id)))


def parent(lineage: Lineage | None) -> str:
    if lineage is None:
        return "(the root)"
    return f"{lineage.parent_session_id} (tool call {lineage.parent_tool_call_id}), root {lineage.root_session_id}"


def researched(state: AgentState) -> bool:
    calls = [state.tool_calls.get(f"research-{topic}") for topic in FACTS]
    return all(call is not None and call.status == "completed" for call in calls)


asyncio.run(main())
