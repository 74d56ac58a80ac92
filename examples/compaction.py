"""Long sessions: a research turn whose tool results outgrow the model's context is summarized as it goes.

The summarization calls are model calls the state asks for; their results are logged (context-compacted),
so replaying the log gives the state, and the context, the model saw. Runs offline with the scripted model.
Output includes: replayed: the same state
"""

import asyncio

from agent_core import AgentConfig, CompactionPolicy, ContextCompacted, LlmContext, context_tokens, replay, state_hash
from effects import Agent, InputReceived, ModelReply, tool
from effects.testing import ScriptedModel, call_tools, say


@tool
def read_page(page: int) -> str:
    """Read one page of the quarterly report."""
    return f"Page {page}: revenue grew {page}% in region {page}. " + "Details and tables follow. " * 40


pages_read = 0


def researcher(context: LlmContext) -> ModelReply:
    """Writes the summary when asked for one; otherwise reads pages 1 to 12, then answers."""
    global pages_read
    if context.task == "summarize":
        return say("The user wants the report's growth figures; each page so far gave its number as the growth in %.")
    if pages_read < 12:
        pages_read += 1
        return call_tools(("read_page", {"page": pages_read}))
    return say("Growth was 1% to 12%, one region per page.")


policy = CompactionPolicy(
    context_window_tokens=2_000, trigger_percent=75, keep_recent_percent=30, summary_max_tokens=300
)


async def main() -> None:
    model = ScriptedModel(researcher)
    agent = Agent(model, tools=[read_page], config=AgentConfig(compaction=policy))
    log = []
    async with agent.running() as session:
        session.subscribe(lambda event: log.append(event.input) if isinstance(event, InputReceived) else None)
        session.send("Read the quarterly report and give me the growth figures.")
        state = await session.turn_done()
    summaries = [inp for inp in log if isinstance(inp, ContextCompacted)]
    largest = max(context_tokens(c) for c in model.calls if c.task == "answer")
    print(f"outcome: {state.last_outcome.kind if state.last_outcome else None}; answer: {state.messages[-1].content}")
    print(
        f"summaries: {len(summaries)}, largest context sent: about {largest} of {policy.context_window_tokens} tokens"
    )
    print(
        f"the first summary covers {summaries[0].messages} message(s) and tool calls {list(summaries[0].tool_call_ids)}"
    )
    print("replayed: the same state" if state_hash(replay(log)) == state_hash(state) else "replay differs!")


asyncio.run(main())
