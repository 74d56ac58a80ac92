"""Long sessions written straight into a store for the viewer's tests at scale (no runner: 20,000 inputs take
seconds). A turn is a user message, a model call asking for a tool, the tool's result and an answer: 9 inputs."""

from __future__ import annotations

from collections.abc import Iterator

from agent_core import (
    AgentConfig,
    AgentInput,
    CompleteReAct,
    ContinueReAct,
    LlmMessageCompleted,
    LlmMessageStarted,
    ReActObserved,
    SessionStarted,
    ToolCallCompleted,
    ToolCallRequest,
    ToolCallStarted,
    ToolDefinition,
    ToolSuccess,
    Usage,
    UserMessageReceived,
)
from effects import EventStore, SessionJournal

from ._session import START

INPUTS_PER_TURN = 9
TOOL = ToolDefinition(name="lookup", description="Look a word up.", parameters='{"type":"object"}')


def started(session_id: str) -> SessionStarted:
    return SessionStarted(timestamp=START, session_id=session_id, config=AgentConfig(), tools=(TOOL,))


def turn(number: int) -> list[AgentInput]:
    """Turn ``number`` (from 0), timed one millisecond an input after the session's start."""
    t = START + 1 + number * INPUTS_PER_TURN
    usage = Usage(input_tokens=100, output_tokens=20)
    call = ToolCallRequest(name="lookup", parameters=f'{{"q": "word {number}"}}')
    return [
        UserMessageReceived(timestamp=t, message_id=f"u{number}", content=f"What does word {number} mean?"),
        LlmMessageStarted(timestamp=t + 1, message_id=f"s{number}"),
        LlmMessageCompleted(timestamp=t + 2, message_id=f"s{number}", content="Let me look it up."),
        ReActObserved(
            timestamp=t + 3, called_llm_at=t, observation=ContinueReAct(tool_calls={f"c{number}": call}), usage=usage
        ),
        ToolCallStarted(timestamp=t + 4, tool_call_id=f"c{number}"),
        ToolCallCompleted(
            timestamp=t + 5, tool_call_id=f"c{number}", result=ToolSuccess(content=f"word {number}: a word")
        ),
        LlmMessageStarted(timestamp=t + 6, message_id=f"a{number}"),
        LlmMessageCompleted(timestamp=t + 7, message_id=f"a{number}", content=f"Word {number} is a word."),
        ReActObserved(timestamp=t + 8, called_llm_at=t + 5, observation=CompleteReAct(), usage=usage),
    ]


def turns(first: int, count: int) -> Iterator[AgentInput]:
    for number in range(first, first + count):
        yield from turn(number)


def write_session(store: EventStore, session_id: str, count: int) -> SessionJournal:
    """A session of ``count`` turns (``1 + 9 * count`` inputs) in ``store``; its journal appends more."""
    journal = SessionJournal(store, session_id)
    batch: list[AgentInput] = [started(session_id)]
    for inp in turns(0, count):
        batch.append(inp)
        if len(batch) == 2000:
            journal.append(batch)
            batch = []
    journal.append(batch)
    return journal
