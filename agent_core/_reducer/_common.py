"""What several handlers share: refusing an input, and the guards that find what it refers to."""

from __future__ import annotations

from typing import NoReturn

from .._errors import InvalidInput, Rejection
from .._handoff import active_tools
from .._inputs import AgentInput, tag_of
from .._phase import phase
from .._state import (
    AgentState,
    ToolCallRecord,
    Turn,
)


def reject(state: AgentState, inp: AgentInput, code: str, guard: str, message: str) -> NoReturn:
    """Refuse ``inp``: raise :class:`InvalidInput` with a :class:`Rejection`.

    The dispatcher completes the rejection with the input types valid now
    (it owns the table that knows them), so handlers need not.
    """
    raise InvalidInput(Rejection(code=code, guard=guard, message=message, input_type=tag_of(inp)))


WRONG_PHASE = "wrong-phase"
"""The code of a rejection by phase; the dispatcher appends the input types the phase expects."""


def reject_phase(state: AgentState, inp: AgentInput) -> NoReturn:
    """Refuse an input whose type the current phase does not accept."""
    message = f"{tag_of(inp)} is not accepted while the session is {phase(state).value}"
    reject(state, inp, WRONG_PHASE, "phase", message)


def require_turn(state: AgentState, inp: AgentInput) -> Turn:
    """The open turn, or a rejection naming the phase."""
    turn = state.turn
    if turn is None:
        reject_phase(state, inp)
    return turn


def require_thinking(state: AgentState, inp: AgentInput) -> Turn:
    """The open turn when a model call is what should be running (phase ``thinking``)."""
    turn = state.turn
    if turn is None or turn.open_call_ids or turn.awaiting_ids or turn.retry_at is not None:
        reject_phase(state, inp)
    return turn


def require_not_streaming(state: AgentState, inp: AgentInput, turn: Turn) -> None:
    """A model call's end (an observation or an internal tool) comes after its message is complete."""
    if turn.streaming_message_id:
        reject(
            state,
            inp,
            "still-streaming",
            "message-completed-first",
            f"message {turn.streaming_message_id!r} is still streaming; "
            f"expected llm-message-completed before {tag_of(inp)}",
        )


def require_not_summarizing(state: AgentState, inp: AgentInput) -> None:
    """While a summarization is asked for, the model call that runs is the summarization: nothing of an answer."""
    compaction = state.compaction
    if compaction is not None and compaction.request is not None:
        reject(
            state,
            inp,
            "summarizing",
            "summary-first",
            f"a summarization of the context is under way; expected context-compacted or llm-call-failed "
            f"before {tag_of(inp)}",
        )


def require_new_message_id(state: AgentState, inp: AgentInput, message_id: str) -> None:
    """Message ids are unique across the session, queued messages included."""
    if not message_id:
        reject(state, inp, "empty-id", "message-id-present", "expected a non-empty message_id, got an empty string")
    if message_id in state.message_index or (state.queued and any(m.id == message_id for m in state.queued)):
        reject(
            state,
            inp,
            "duplicate-id",
            "message-id-unique",
            f"message id {message_id!r} is already used in this session; expected a new id",
        )


def find_call(state: AgentState, inp: AgentInput, call_id: str) -> ToolCallRecord:
    """The record of a known tool call, or a rejection for an unknown id."""
    record = state.tool_calls.get(call_id)
    if record is None:
        reject(
            state,
            inp,
            "unknown-tool-call",
            "tool-call-exists",
            f"tool call {call_id!r} is unknown; expected the id of a call requested in this session",
        )
    return record


def find_awaiting_call(state: AgentState, inp: AgentInput, call_id: str) -> tuple[ToolCallRecord, Turn]:
    """A call waiting for a person's decision, or a rejection saying why it is not."""
    record = find_call(state, inp, call_id)
    if record.status != "awaiting-approval":
        if record.status == "awaiting-input":
            message = (
                f"tool call {call_id!r} ({record.name}) waits for input its tool asked for, not for an approval; "
                "expected tool-call-input-provided with the answers"
            )
            reject(state, inp, "awaiting-input", "awaiting-approval", message)
        if not _may_await(state, record.name):
            message = (
                f"tool call {call_id!r} ({record.name}) does not require approval; expected a call awaiting approval"
            )
            reject(state, inp, "approval-not-required", "requires-approval", message)
        message = f"tool call {call_id!r} ({record.name}) was already decided and is {record.status}; expected a call awaiting approval"
        reject(state, inp, "already-decided", "awaiting-approval", message)
    assert state.turn is not None  # awaiting calls exist only in an open turn
    return record, state.turn


def find_running_call(state: AgentState, inp: AgentInput, call_id: str) -> tuple[ToolCallRecord, Turn]:
    """A call whose tool is running (what a tool reports on: a question, a remote task), or a rejection."""
    record = state.tool_calls.get(call_id) or find_call(state, inp, call_id)
    if record.status != "running":
        reject(
            state,
            inp,
            f"call-{record.status}",
            "call-is-running",
            f"tool call {call_id!r} ({record.name}) is {record.status}; expected a running call",
        )
    assert state.turn is not None  # running calls exist only in an open turn
    return record, state.turn


def require_text(state: AgentState, inp: AgentInput, name: str, value: str, expected: str) -> None:
    """Refuse an input whose field ``name`` is empty; ``expected`` says what it should hold."""
    if not value:
        reject(
            state,
            inp,
            f"empty-{name.replace('_', '-')}",
            f"{name}-present",
            f"expected {expected} in {name}, got an empty string",
        )


def _may_await(state: AgentState, name: str) -> bool:
    """Whether a call of ``name`` can ever wait for a person: the tool needs approval, a workflow
    state asks for it, or rules may say ``ask``."""
    tool = active_tools(state).get(name)
    if (tool is not None and tool.requires_approval) or state.config.rules:
        return True
    workflow = state.config.workflow
    return workflow is not None and any(name in ws.approval for ws in workflow.states)
