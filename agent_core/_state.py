r"""The agent's state: frozen Structs, with persistent collections for what grows with the session.

Messages, the tool-call order and the workflow audit are :class:`Vector`\ s
(persistent sequences), tool-call records and the message index maps by id
(an ``immutables.Map`` while small, a :class:`Table` past 4,096 entries): adding
one shares every other entry with the previous state, and none leaves the
cycle collector more to walk as the session grows (see each for how), so a
transition costs the same at 100 messages and at 100,000 with the collector on. Order is kept by position and by ``seq``, the
number of the input that created an item; identity never comes from
timestamps, because two inputs may share a millisecond.

Every Struct here omits its default values when encoded (``omit_defaults``),
so the state's canonical document, and its hash, stay the same when a release
adds a field with a default.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from immutables import Map

from ._compaction._state import ContextCompaction
from ._config import AgentConfig
from ._inputs import ProviderItem, Spend, ToolResult
from ._table import Table
from ._toolset import ToolSet
from ._vector import Vector
from ._workflow import WorkflowMove

Role = Literal["user", "assistant"]
ToolCallStatus = Literal["awaiting-approval", "pending", "running", "completed", "awaiting-input"]
OutcomeKind = Literal["completed", "failed", "cancelled"]

# ``gc=False``: these frozen Structs only ever point at values that existed before
# them, so they cannot form reference cycles, and the cycle collector need not
# track them. A long session holds hundreds of thousands of them; untracked, they
# neither trigger collections nor get walked by one, and each is 16 bytes smaller.
# They are also what lets the nodes of a Vector and the runs of a Table go
# untracked: a Struct here that the collector tracked would keep them tracked.


class Message(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """A user or assistant message. ``streaming`` is true between ``llm-message-started`` and its completion.

    ``items`` are the provider items of the model call that answered with this
    message and completed the turn (``complete-re-act``), in their order.
    """

    id: str
    role: Role
    content: str
    streaming: bool = False
    seq: int = 0
    at: int = 0
    items: tuple[ProviderItem, ...] = ()


class ToolCallRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """One external tool call: what the model asked for, where it stands, and its result once completed.

    ``items``: the provider items of the model call that asked for the call's
    batch, held by the batch's first call (the others' are empty).

    A call whose tool asked a person for input is ``awaiting-input`` with the questions in
    ``input_requests`` (a JSON object) and the tool's opaque ``request_state``; once answered it is
    ``pending`` again with ``input_responses``, which the tool receives when it runs again.
    ``input_rounds`` counts the questions asked. ``task_id`` names the remote task the call
    follows (``tool-call-task-created``): after a crash the call follows it instead of running again.
    ``attempt`` counts the call's failed attempts that its tool's :class:`ToolRetry`
    tries again; while ``retry_at`` is set the call is ``pending``, backing off until
    then, and ``last_error`` is the failure that will be retried.
    """

    id: str
    name: str
    parameters: str
    status: ToolCallStatus
    result: ToolResult | None = None
    turn: int = 0
    seq: int = 0
    requested_at: int = 0
    completed_at: int = 0
    items: tuple[ProviderItem, ...] = ()
    input_requests: str = ""
    request_state: str = ""
    input_responses: str = ""
    input_rounds: int = 0
    task_id: str = ""
    attempt: int = 0
    retry_at: int | None = None
    last_error: str = ""
    child_spent: Spend | None = None


PAST_TOOL_CALLS_LISTED = 20
"""How many recent past tool calls :func:`llm_context` lists for the history tool."""


class PastToolCall(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """A completed tool call outside the context that the model may load with the history tool."""

    id: str
    name: str
    parameters: str


class Turn(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """The open ReAct loop: its context window, its tool calls, and the counters its guards read.

    ``open_call_ids`` are the calls waiting to run or running, ``awaiting_ids``
    those waiting for a person (a decision, or the input a tool asked for); both in request order.
    ``context_rev`` changes exactly when what the next model call would send
    changes, so the ``call-llm`` effect key follows it.
    ``deadline`` is when the turn's running time reaches ``max_turn_ms``; while
    the turn only waits for a person's approval, ``paused_at`` holds when that
    wait began, no deadline timer runs, and the deadline moves on by the wait
    when the turn runs again (see :func:`running_deadline`).
    ``output_retries`` and ``empty_answers`` count the answers refused so far
    (``answer-rejected``: an output that did not validate, an empty reply).
    ``repeats`` counts each (tool, arguments as written) pair asked in the turn; stuck
    detection adds up the spellings of one canonical form (see :func:`canonical_arguments`).
    ``cost`` is what the turn's model calls cost (nano-units); ``unpriced`` is
    set when one of them could not be priced while a cost budget or pool is on,
    or in a child session (its caller's roll-up then keeps the cost unknown).
    """

    number: int
    started_at: int
    context_window_size: int
    tool_call_ids: tuple[str, ...] = ()
    open_call_ids: tuple[str, ...] = ()
    awaiting_ids: tuple[str, ...] = ()
    model_calls: int = 0
    tool_call_count: int = 0
    tokens: int = 0
    attempt: int = 0
    retry_at: int | None = None
    deadline: int | None = None
    context_rev: int = 0
    final_answer: bool = False
    exhausted: str = ""
    streaming_message_id: str = ""
    repeats: tuple[tuple[str, str, int], ...] = ()
    paused_at: int | None = None
    output_retries: int = 0
    empty_answers: int = 0
    cost: int = 0
    unpriced: bool = False
    children_spent: Spend | None = None


def running_deadline(turn: Turn) -> int | None:
    """The time ``turn``'s deadline timer fires at, or ``None`` when it has none or waits for an approval."""
    return turn.deadline if turn.paused_at is None else None


class TurnOutcome(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """How the last turn ended. ``reason`` is a short code (``max-tool-calls``, ``timeout``...), ``detail`` the text.

    ``output``: in a session with an ``output_schema``, the completed turn's
    validated answer as JSON text (empty otherwise).
    """

    kind: OutcomeKind
    reason: str = ""
    detail: str = ""
    turn: int = 0
    at: int = 0
    output: str = ""
    spent: Spend | None = None


_NO_MESSAGES: Vector[Message] = Vector()
_NO_INDEX: Map[str, int] = Map()
_NO_CALLS: Map[str, ToolCallRecord] = Map()
_NO_LOG: Vector[str] = Vector()
_NO_TOOLS = ToolSet()
_NO_AUDIT: Vector[WorkflowMove] = Vector()


class AgentState(msgspec.Struct, frozen=True, kw_only=True, gc=False, omit_defaults=True):
    """The whole state of one agent session. Never mutated; every transition returns a new one.

    ``messages`` is the sequence of :class:`Message` in the order they arrived
    (``message_index`` maps a message id to its position); ``tool_calls`` maps
    tool call id to :class:`ToolCallRecord`, and ``tool_call_log`` is the
    sequence of tool call ids in request order. ``turn`` is ``None`` between turns.
    ``tools`` is a read-only :class:`ToolSet` (name -> definition) in declared order.
    ``step`` counts accepted inputs; ``timestamp`` is the last one's time.
    ``past_calls`` are the newest calls of the finished turns, newest first (at
    most :data:`PAST_TOOL_CALLS_LISTED`), kept so that ``llm_context`` lists them
    without scanning the log.
    ``workflow_state`` is the state of ``config.workflow`` the session is in
    (empty without a workflow) and
    ``audit`` every workflow move, oldest first (a :class:`Vector`: a move appends without copying the audit).
    ``cost`` is what the session's priced model calls cost, in nano-units (see :func:`nanos`).
    ``compaction`` is where context compaction stands (``None`` unless ``config.compaction`` is set).
    ``agent`` is the active agent when a handoff gave the conversation to another than the one the session
    started with (empty: that one, ``config.agent_name``; see :func:`active_agent`).
    """

    started: bool = False
    session_id: str = ""
    config: AgentConfig = AgentConfig()
    tools: ToolSet = _NO_TOOLS
    timestamp: int = 0
    step: int = 0
    messages: Vector[Message] = _NO_MESSAGES
    message_index: Map[str, int] | Table[str, int] = _NO_INDEX
    tool_calls: Map[str, ToolCallRecord] | Table[str, ToolCallRecord] = _NO_CALLS
    tool_call_log: Vector[str] = _NO_LOG
    turn: Turn | None = None
    turns: int = 0
    last_outcome: TurnOutcome | None = None
    queued: tuple[Message, ...] = ()
    called_llm_at: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    past_calls: tuple[PastToolCall, ...] = ()
    workflow_state: str = ""
    audit: Vector[WorkflowMove] = _NO_AUDIT
    cost: int = 0
    compaction: ContextCompaction | None = None
    children_spent: Spend | None = None
    agent: str = ""


STATE_FIELDS: tuple[str, ...] = AgentState.__struct_fields__

_INITIAL = AgentState()


def initial_state() -> AgentState:
    """The state before ``session-started``: phase ``not-started``, nothing else accepted."""
    return _INITIAL
