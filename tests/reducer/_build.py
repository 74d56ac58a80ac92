"""Small builders for the reducer's example tests: start a session, fold inputs, read a rejection.

Everything goes through the public API. ``fold`` checks the invariants after
every step, and ``rejected`` checks that ``check`` and ``transition`` agree, so
each example test exercises those two promises as a side effect.
"""

from __future__ import annotations

from typing import Any

import pytest

import agent_core as ac

T0 = 1_000
"""The time of ``session-started`` in every example; later inputs count from here."""

SEARCH = ac.ToolDefinition(
    name="search",
    description="Search the help center.",
    parameters='{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}',
    idempotent=True,
)
FETCH = ac.ToolDefinition(name="fetch", description="Fetch an order by id.")
REFUND = ac.ToolDefinition(name="refund", description="Refund an order.", requires_approval=True)
TOOLS = (SEARCH, FETCH, REFUND)


def started(*, tools: tuple[ac.ToolDefinition, ...] = TOOLS, **config: Any) -> ac.AgentState:
    """A session started at ``T0`` with ``tools`` and an ``AgentConfig`` built from ``config``.

    The turn deadline is off unless ``max_turn_ms`` is given: these tests list the effects a state derives,
    and the deadline has tests of its own."""
    config_struct = ac.AgentConfig(**{"max_turn_ms": None, **config})
    return fold(ac.initial_state(), ac.SessionStarted(timestamp=T0, session_id="s1", config=config_struct, tools=tools))


def in_turn(**config: Any) -> ac.AgentState:
    """A session with one open turn (user message ``u1`` at ``T0 + 1``): phase ``thinking``."""
    return fold(started(**config), user("u1", "Where is my order?", at=T0 + 1))


def fold(state: ac.AgentState, *inputs: ac.AgentInput) -> ac.AgentState:
    """Apply ``inputs`` in order, checking the invariants (and monotonic counters) after each."""
    for inp in inputs:
        after = ac.transition(state, inp)
        ac.check_invariants(after, state)
        state = after
    return state


def rejected(state: ac.AgentState, inp: ac.AgentInput) -> ac.Rejection:
    """The rejection ``transition`` raises for ``inp``; ``check`` must return the same one."""
    with pytest.raises(ac.InvalidInput) as info:
        ac.transition(state, inp)
    assert info.value.index is None
    assert ac.check(state, inp) == info.value.rejection
    return info.value.rejection


def user(message_id: str, content: str = "hello", *, at: int) -> ac.UserMessageReceived:
    """A user message."""
    return ac.UserMessageReceived(timestamp=at, message_id=message_id, content=content)


def ask(*, at: int, tokens: tuple[int, int] = (0, 0), called_at: int | None = None, **calls: str) -> ac.ReActObserved:
    """The model asked for tool calls: ``ask(at=5, t1="search", t2='fetch:{"id":42}')``.

    A value is the tool's name, optionally followed by ``:`` and JSON parameters.
    """
    return asked(calls, at=at, tokens=tokens, called_at=called_at)


def asked(
    calls: dict[str, str], *, at: int, tokens: tuple[int, int] = (0, 0), called_at: int | None = None
) -> ac.ReActObserved:
    """Like :func:`ask`, with the calls as a dict (for ids that are not Python names)."""
    requests = {}
    for call_id, spec in calls.items():
        name, _, parameters = spec.partition(":")
        requests[call_id] = ac.ToolCallRequest(name=name, parameters=parameters or "{}")
    return ac.ReActObserved(
        timestamp=at,
        called_llm_at=at if called_at is None else called_at,
        observation=ac.ContinueReAct(tool_calls=requests),
        usage=ac.Usage(input_tokens=tokens[0], output_tokens=tokens[1]),
    )


def answer(*, at: int, tokens: tuple[int, int] = (0, 0)) -> ac.ReActObserved:
    """The model answered without tool calls (``complete-re-act``)."""
    return ac.ReActObserved(
        timestamp=at,
        called_llm_at=at,
        observation=ac.CompleteReAct(),
        usage=ac.Usage(input_tokens=tokens[0], output_tokens=tokens[1]),
    )


def ok(call_id: str, content: str = "done", *, at: int) -> ac.ToolCallCompleted:
    """A tool call that succeeded."""
    return ac.ToolCallCompleted(timestamp=at, tool_call_id=call_id, result=ac.ToolSuccess(content=content))


def failed(call_id: str, error: str, *, at: int) -> ac.ToolCallCompleted:
    """A tool call that failed."""
    return ac.ToolCallCompleted(timestamp=at, tool_call_id=call_id, result=ac.ToolFailure(error=error))


def llm_keys(state: ac.AgentState) -> list[str]:
    """The keys of the ``call-llm`` effects the state derives (zero or one)."""
    return [key for key in ac.effects_at(state) if key.startswith("call-llm:")]


def result_of(state: ac.AgentState, call_id: str) -> ac.ToolResult | None:
    """The recorded result of a tool call."""
    return state.tool_calls[call_id].result
