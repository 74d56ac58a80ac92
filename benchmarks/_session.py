"""A realistic agent session, generated: turns of a user message, rounds of parallel tool calls, an answer.

The sizes of the generated content are meant to look like a real agent's
session; ``session`` yields the inputs lazily, ``bases`` folds one generated log
into idle sessions of several sizes, ``fresh_batches`` makes turns that follow
a session and were never folded before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
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
    initial_state,
    transition,
)

START_MS = 1_767_225_600_000
_TEXT = (
    "The quarterly report shows revenue up eleven percent while costs stayed flat; the team asks "
    "whether the new pricing page caused it, which regions grew fastest, and what to watch next. "
) * 20

TOOLS = (
    ToolDefinition(name="search", description="Search the web.", parameters='{"type":"object"}'),
    ToolDefinition(name="fetch", description="Fetch a URL.", parameters='{"type":"object"}', idempotent=True),
    ToolDefinition(name="delete_file", description="Delete a file.", requires_approval=True),
)
"""The session's tools; ``delete_file`` requires approval."""

# Sizes (characters) of the generated content, meant to look like a real agent's session.
USER_CHARS, STEP_CHARS, ANSWER_CHARS, RESULT_CHARS = 160, 120, 600, 400
ROUNDS, CALLS = 4, 3
INPUTS_PER_TURN = 1 + ROUNDS * (3 + 2 * CALLS) + 3
MESSAGES_PER_TURN = 1 + ROUNDS + 1


def text(seed: int, size: int) -> str:
    """``size`` characters of prose, different for each ``seed``."""
    offset = seed % 97
    return f"{seed}: " + _TEXT[offset : offset + size]


def session_started(timestamp: int = START_MS, session_id: str = "bench") -> SessionStarted:
    """The first input of a benchmark session (default configuration, the tools above)."""
    return SessionStarted(timestamp=timestamp, session_id=session_id, config=AgentConfig(), tools=TOOLS)


def turn(number: int, timestamp: int) -> list[AgentInput]:
    """One turn: a user message, ``ROUNDS`` rounds of (message, ``CALLS`` parallel tool calls), an answer."""
    out: list[AgentInput] = []
    t = timestamp

    def add(inp: AgentInput) -> None:
        nonlocal t
        out.append(inp)
        t += 1

    add(UserMessageReceived(timestamp=t, message_id=f"u{number}", content=text(number, USER_CHARS)))
    for r in range(ROUNDS + 1):
        message_id = f"a{number}.{r}"
        called = t
        add(LlmMessageStarted(timestamp=t, message_id=message_id))
        size = ANSWER_CHARS if r == ROUNDS else STEP_CHARS
        add(LlmMessageCompleted(timestamp=t, message_id=message_id, content=text(number + r, size)))
        usage = Usage(input_tokens=1200, output_tokens=80)
        if r == ROUNDS:
            add(ReActObserved(timestamp=t, called_llm_at=called, observation=CompleteReAct(), usage=usage))
            break
        ids = [f"c{number}.{r}.{k}" for k in range(CALLS)]
        requests = {
            i: ToolCallRequest(name="search" if k % 2 == 0 else "fetch", parameters=f'{{"q":"{number}.{r}.{k}"}}')
            for k, i in enumerate(ids)
        }
        add(
            ReActObserved(
                timestamp=t, called_llm_at=called, observation=ContinueReAct(tool_calls=requests), usage=usage
            )
        )
        for i in ids:
            add(ToolCallStarted(timestamp=t, tool_call_id=i))
        for k, i in enumerate(ids):
            add(
                ToolCallCompleted(
                    timestamp=t, tool_call_id=i, result=ToolSuccess(content=text(k + number, RESULT_CHARS))
                )
            )
    return out


def session(turns: int, *, first_turn: int = 0, timestamp: int = START_MS, start: bool = True) -> Iterator[AgentInput]:
    """A whole session of ``turns`` turns (``INPUTS_PER_TURN`` inputs and ``MESSAGES_PER_TURN`` messages each)."""
    if start:
        yield session_started(timestamp)
    for number in range(first_turn, first_turn + turns):
        yield from turn(number, timestamp + 1 + number * INPUTS_PER_TURN)


def turns_for_messages(messages: int) -> int:
    """How many generated turns give a session of at least ``messages`` messages."""
    return -(-messages // MESSAGES_PER_TURN)


def fold(state: AgentState, inputs: Iterable[AgentInput]) -> AgentState:
    """Apply ``inputs`` to ``state`` one by one."""
    for inp in inputs:
        state = transition(state, inp)
    return state


def bases(sizes: tuple[int, ...]) -> dict[int, AgentState]:
    """Idle sessions of (at least) each size in messages, from one generated log folded once."""
    out: dict[int, AgentState] = {}
    state, done = fold(initial_state(), [session_started()]), 0
    for size in sorted(sizes):
        turns = turns_for_messages(size)
        state = fold(state, session(turns - done, first_turn=done, start=False))
        out[size], done = state, turns
    return out


def fresh_batches(base: AgentState, turns: int, batches: int) -> list[list[AgentInput]]:
    """``batches`` lists of ``turns`` generated turns, each list able to follow ``base``, no two alike."""
    return [fresh_batch(base, turns, k) for k in range(batches)]


def fresh_batch(base: AgentState, turns: int, k: int) -> list[AgentInput]:
    """The ``k``-th list :func:`fresh_batches` makes: ``turns`` turns that follow the ``k - 1`` lists before it."""
    first = base.turns
    origin = base.timestamp - first * INPUTS_PER_TURN  # turn ``first`` starts just after ``base``
    return list(session(turns, first_turn=first + k * turns, timestamp=origin, start=False))
