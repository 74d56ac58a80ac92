"""The reducer: one handler per input kind and a dispatcher, both driven by one table of input kinds."""

from __future__ import annotations

from msgspec.structs import replace

from .._encodable import MAX_TIMESTAMP_MS, shown_integer, unencodable
from .._errors import InvalidInput, Rejection
from .._inputs import AgentInput, ContextCompacted, HandedOff, WorkflowActionTaken, tag_of
from .._phase import phase
from .._state import AgentState
from ._common import WRONG_PHASE, reject, reject_phase
from ._compaction import CONTEXT_TOO_LONG
from ._deadline import pause_or_resume
from ._table import HANDLERS, INPUT_KINDS, VALID_INPUTS, WRITE_SETS, InputKind
from .on_session_started import on_session_started
from .on_tool_call_input_required import MAX_INPUT_ROUNDS


def transition(state: AgentState, inp: AgentInput) -> AgentState:
    """Apply one input: pure, deterministic, total over valid inputs.

    Raises :class:`InvalidInput` (with a :class:`Rejection`) for an input the
    state cannot accept: wrong phase, unknown or repeated ids, time going
    backwards, a decision on a call that needs none, a value no codec can write
    (see :func:`~agent_core.replace_surrogates`)... Nothing is ignored.
    """
    handler = HANDLERS.get(type(inp))
    if handler is None:
        raise TypeError(f"expected an agent_core input (one of the AgentInput classes), got {type(inp).__name__}")
    try:
        if inp.timestamp < state.timestamp:
            reject(
                state,
                inp,
                "time-went-backwards",
                "monotonic-time",
                f"timestamp {shown_integer(inp.timestamp)} is earlier than the state's {state.timestamp}; "
                "expected a timestamp at or after it",
            )
        if inp.timestamp > MAX_TIMESTAMP_MS:
            reject(
                state,
                inp,
                "timestamp-range",
                "timestamp-is-a-time",
                f"timestamp {shown_integer(inp.timestamp)} is after the year 9999; expected milliseconds since the epoch, "
                f"at most {MAX_TIMESTAMP_MS}",
            )
        problem = unencodable(inp)
        if problem is not None:
            reject(
                state,
                inp,
                "not-encodable",
                "encodable-values",
                f"the input holds {problem}, which no codec can write; expected text without lone surrogates "
                "(replace them: agent_core.replace_surrogates) and integers within 64 bits",
            )
        if not state.started and handler is not on_session_started:
            reject_phase(state, inp)
        return pause_or_resume(handler(state, inp))
    except InvalidInput as error:
        raise InvalidInput(_valid_now(error.rejection, state)) from None


def _valid_now(rejection: Rejection, state: AgentState) -> Rejection:
    valid = valid_inputs(state)
    message = rejection.message
    if rejection.code == WRONG_PHASE:
        message = f"{message}; expected one of: {', '.join(valid)}"
    return replace(rejection, message=message, valid_now=valid)


def check(state: AgentState, inp: AgentInput) -> Rejection | None:
    """``None`` if ``transition(state, inp)`` would succeed, else the :class:`Rejection` it would raise."""
    try:
        transition(state, inp)
    except InvalidInput as error:
        return error.rejection
    return None


def valid_inputs(state: AgentState) -> tuple[str, ...]:
    """The input types the state's current phase may accept, sorted (``workflow-action-taken`` only
    in a session with a workflow, ``context-compacted`` only under a compaction policy, ``handed-off`` only
    in a session that declares handoffs)."""
    valid = VALID_INPUTS[phase(state)]
    if state.config.workflow is None:
        valid = valid - _WORKFLOW_ONLY
    if state.config.compaction is None:
        valid = valid - _COMPACTION_ONLY
    if not state.config.handoffs and not state.config.agents:
        valid = valid - _HANDOFF_ONLY
    return tuple(sorted(valid))


_WORKFLOW_ONLY = frozenset({tag_of(WorkflowActionTaken)})
_COMPACTION_ONLY = frozenset({tag_of(ContextCompacted)})
_HANDOFF_ONLY = frozenset({tag_of(HandedOff)})


__all__ = [
    "CONTEXT_TOO_LONG",
    "INPUT_KINDS",
    "MAX_INPUT_ROUNDS",
    "VALID_INPUTS",
    "WRITE_SETS",
    "InputKind",
    "check",
    "transition",
    "valid_inputs",
]
