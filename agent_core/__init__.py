"""agent-core: an LLM agent as a pure, event-sourced state machine.

``transition(state, input) -> state`` folds typed inputs; ``effects_at(state)``
derives the model calls, tool calls and timers that should be running. The
state decides which effects run, so a log of inputs replays to the same state
and a crashed agent resumes by folding its log. Nothing here does I/O.
"""

from ._codec import decode_input, decode_log, encode_input, encode_log, input_json_schema
from ._config import AgentConfig, ToolDefinition
from ._context import (
    ContextEntry,
    ContextMessage,
    ContextToolCall,
    ContextToolCalls,
    ContextToolResult,
    LlmContext,
    llm_context,
)
from ._effects import CallLlm, CallTool, Effect, WaitUntil, effects_at
from ._errors import AgentCoreError, DecodeError, InvalidInput, InvariantViolation, Rejection
from ._inputs import (
    INPUT_TAGS,
    SCHEMA_VERSION,
    AgentInput,
    CompleteReAct,
    ContextWindowExpanded,
    ContinueReAct,
    HistoryToolCallsAdded,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    Observation,
    ReActCancelled,
    ReActObserved,
    SessionStarted,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallRequest,
    ToolCallStarted,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    Usage,
    UserMessageReceived,
    tag_of,
)
from ._invariants import check_invariants
from ._phase import Phase, phase
from ._reducer import INPUT_KINDS, VALID_INPUTS, WRITE_SETS, InputKind, check, transition, valid_inputs
from ._replay import replay
from ._state import AgentState, Message, PastToolCall, ToolCallRecord, Turn, TurnOutcome, initial_state
from ._state_codec import STATE_FORMAT, decode_state, encode_state, state_digest, state_hash
from ._toolset import ToolSet, not_registered
from ._upcast import UPCASTERS, upcaster
from ._vector import Vector

__all__ = [
    "INPUT_KINDS",
    "INPUT_TAGS",
    "SCHEMA_VERSION",
    "STATE_FORMAT",
    "UPCASTERS",
    "VALID_INPUTS",
    "WRITE_SETS",
    "AgentConfig",
    "AgentCoreError",
    "AgentInput",
    "AgentState",
    "CallLlm",
    "CallTool",
    "CompleteReAct",
    "ContextEntry",
    "ContextMessage",
    "ContextToolCall",
    "ContextToolCalls",
    "ContextToolResult",
    "ContextWindowExpanded",
    "ContinueReAct",
    "DecodeError",
    "Effect",
    "HistoryToolCallsAdded",
    "InputKind",
    "InvalidInput",
    "InvariantViolation",
    "LlmCallFailed",
    "LlmContext",
    "LlmMessageCompleted",
    "LlmMessageStarted",
    "Message",
    "Observation",
    "PastToolCall",
    "Phase",
    "ReActCancelled",
    "ReActObserved",
    "Rejection",
    "SessionStarted",
    "TimerFired",
    "ToolCallApproved",
    "ToolCallCompleted",
    "ToolCallDenied",
    "ToolCallRecord",
    "ToolCallRequest",
    "ToolCallStarted",
    "ToolDefinition",
    "ToolFailure",
    "ToolResult",
    "ToolSet",
    "ToolSuccess",
    "Turn",
    "TurnOutcome",
    "Usage",
    "UserMessageReceived",
    "Vector",
    "WaitUntil",
    "check",
    "check_invariants",
    "decode_input",
    "decode_log",
    "decode_state",
    "effects_at",
    "encode_input",
    "encode_log",
    "encode_state",
    "initial_state",
    "input_json_schema",
    "llm_context",
    "not_registered",
    "phase",
    "replay",
    "state_digest",
    "state_hash",
    "tag_of",
    "transition",
    "upcaster",
    "valid_inputs",
]
