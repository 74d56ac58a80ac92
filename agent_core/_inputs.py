"""The inputs: past-tense facts, the only way anything enters an agent's state.

Every input is a frozen ``msgspec.Struct`` in the tagged union
:data:`AgentInput` (tag field ``type``, kebab-case tags) and carries
``timestamp``, integer milliseconds since the epoch. Field names are the
public wire format (see the README and `input_json_schema()`); new fields get defaults and go
last, tags and field types never change.

Inputs are not tracked by the garbage collector (``gc=False``): they are
frozen and hold only strings, numbers and parts of inputs, so they cannot form
reference cycles, and decoding a long log spends no time in collections.
"""

from __future__ import annotations

from typing import Literal, Union

import msgspec

from ._config import AgentConfig, ToolDefinition

SCHEMA_VERSION = 1
"""The schema version this release writes (the first public version is 1)."""


class _Input(msgspec.Struct, frozen=True, gc=False, kw_only=True, tag_field="type", omit_defaults=True):
    timestamp: int


# --- payloads -------------------------------------------------------------------


class Usage(msgspec.Struct, frozen=True, gc=False, kw_only=True, omit_defaults=True):
    """Tokens one model call consumed.

    ``input_tokens`` and ``output_tokens`` are the totals (budgets count them);
    the other fields break them down where the provider reports it, each part of
    its total: ``cache_read_tokens`` input tokens read from the provider's prompt
    cache, ``cache_write_tokens`` input tokens written to it, ``reasoning_tokens``
    output tokens the model spent reasoning (thinking). 0 when not reported.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class Spend(msgspec.Struct, frozen=True, gc=False, kw_only=True, omit_defaults=True):
    """What a session spent on what its budgets count: model calls, tool calls, tokens (input and output),
    and cost in nano-units (see :func:`nanos`). A child session's spend is reported to its caller
    (``child-spent``) and counted in the caller's turn and session budgets. ``unpriced``: a model call in it
    could not be priced, so its true cost is unknown (``cost`` counts the priced calls only); a caller that
    counts money cannot keep its cost budgets then."""

    model_calls: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost: int = 0
    unpriced: bool = False


OPAQUE_KINDS = ("thinking", "redacted-thinking", "reasoning", "compaction", "reasoning-content")
"""The opaque item kinds the shipped adapters write (a producer may log others; each adapter reads its own)."""

TEXT_MARKER = "text"
"""The kind of a :class:`ProviderItem` that marks where a part of the reply's text stood."""

TOOL_CALL_MARKER = "tool-call"
"""The kind of a :class:`ProviderItem` that marks where a tool call stood."""

MAX_ITEM_CHARS = 4_000_000
"""The most characters one :class:`ProviderItem`'s ``data`` may hold."""

MAX_REPLY_ITEM_CHARS = 16_000_000
"""The most characters the ``data`` of one reply's items may hold together."""

MAX_REPLY_ITEMS = 4_096
"""The most items (markers included) one reply may carry."""


class ProviderItem(msgspec.Struct, frozen=True, gc=False, kw_only=True, omit_defaults=True):
    """A part of a model's reply that its provider needs back, kept byte for byte; or a marker saying where the
    reply's text or a tool call stood among such parts.

    A :class:`ReActObserved` carries its reply's items in the order the provider
    sent them, and only when the reply has at least one opaque item (so logs of
    models without them are unchanged). Fields:

    * ``kind``: an opaque kind (:data:`OPAQUE_KINDS`: ``thinking`` and
      ``redacted-thinking`` blocks of Anthropic, ``reasoning`` and ``compaction``
      items of OpenAI's Responses API, ``reasoning-content`` of chat-completions
      servers), or a marker: ``text`` (:data:`TEXT_MARKER`), ``tool-call``
      (:data:`TOOL_CALL_MARKER`).
    * ``provider``: who can read it back: ``anthropic``, ``openai-responses``,
      ``openai-chat``. An adapter sends back only its own provider's items.
    * ``model``: the model the adapter asked when the item was made (an adapter
      that needs it sends items back only to that model).
    * ``data``: for an opaque item, the item's JSON object as the provider sent
      it: its fields, their values unchanged (a streamed block assembled from
      its deltas), as a string like a tool call's ``parameters``; adapters send
      it back as it is. For a marker, the provider's envelope of that part without
      what the log holds elsewhere (the text, the call's id, name and
      arguments), e.g. a Responses message's id and phase; or empty.
    * ``ref``: for a ``tool-call`` marker, the call's id as logged; for a
      ``text`` marker, the id of the assistant message that holds the text.
    * ``chars``: for a ``text`` marker, how many characters of that message's
      text stood here (the text markers of a reply cover its message's text, in order).
    """

    kind: str
    provider: str
    model: str = ""
    data: str = ""
    ref: str = ""
    chars: int = 0


class ToolCallRequest(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A tool call the model asked for: the tool's name and its JSON-encoded arguments."""

    name: str
    parameters: str = "{}"


class ContinueReAct(msgspec.Struct, frozen=True, gc=False, kw_only=True, tag_field="type", tag="continue-re-act"):
    """The model asked for tool calls (id -> request); the loop goes on after their results."""

    tool_calls: dict[str, ToolCallRequest]


class CompleteReAct(msgspec.Struct, frozen=True, gc=False, kw_only=True, tag_field="type", tag="complete-re-act"):
    """The model answered without tool calls; the turn is complete."""


Observation = Union[ContinueReAct, CompleteReAct]
"""What a finished model call observed: :class:`ContinueReAct` or :class:`CompleteReAct` (tag ``type``)."""


class ToolSuccess(msgspec.Struct, frozen=True, gc=False, kw_only=True, tag_field="status", tag="success"):
    """A tool call's successful result, as the text the model will see."""

    content: str


class ToolFailure(
    msgspec.Struct, frozen=True, gc=False, kw_only=True, tag_field="status", tag="failure", omit_defaults=True
):
    """A tool call's failure, as the error text the model will see.

    ``code`` names the kind of failure for a :class:`ToolRetry` to match: ``timeout``,
    ``invalid-arguments``, ``not-registered``, ``cancelled``, ``unencodable``, or the
    exception the tool raised (``ConnectionError``, ``myapp.errors.RateLimited``);
    empty when nobody said.
    """

    error: str
    code: str = ""


ToolResult = Union[ToolSuccess, ToolFailure]
"""A tool call's result: :class:`ToolSuccess` or :class:`ToolFailure` (tag ``status``)."""


class OutputProblem(msgspec.Struct, frozen=True, gc=False, kw_only=True, omit_defaults=True):
    """One thing wrong with a model's structured answer: ``where`` in it (a JSON path such as
    ``$.cities[0].population``; ``$`` for the whole answer) and ``what`` (the validator's message)."""

    where: str = "$"
    what: str


RejectionReason = Literal["invalid-output", "empty-answer"]
"""Why an answer was refused: it did not validate against the output schema, or it was empty."""


# --- the inputs ----------------------------------------------------------------


class SessionStarted(_Input, frozen=True, kw_only=True, tag="session-started", omit_defaults=False):
    """First input of every log: who the session is and how it behaves, so a log is self-contained.

    Encoded with every field, ``schema_version`` included, so a later release
    always knows which version wrote the log.
    """

    session_id: str
    schema_version: int = SCHEMA_VERSION
    config: AgentConfig = AgentConfig()
    tools: tuple[ToolDefinition, ...] = ()


class UserMessageReceived(_Input, frozen=True, kw_only=True, tag="user-message-received"):
    """A user message: opens a turn, or joins the open one per ``user_message_policy``."""

    message_id: str
    content: str


class LlmMessageStarted(_Input, frozen=True, kw_only=True, tag="llm-message-started"):
    """The model began a user-visible message (appended empty and streaming)."""

    message_id: str


class LlmMessageCompleted(_Input, frozen=True, kw_only=True, tag="llm-message-completed"):
    """The streaming message is complete; ``content`` is its whole text."""

    message_id: str
    content: str


class ReActObserved(_Input, frozen=True, kw_only=True, tag="re-act-observed"):
    """A model call finished: it asked for tool calls, or completed the turn.

    ``items`` are the reply's provider items (:class:`ProviderItem`) in the order
    the provider sent them (empty, and omitted, for a reply without opaque items). The
    reducer keeps them where ``llm_context`` puts them back: with the batch's
    tool calls (``continue-re-act``), or on the assistant message the call
    completed (``complete-re-act``, which needs a ``text`` marker naming it).

    ``cost`` is what the call cost in nano-units (see :func:`nanos`), priced
    where the reply entered (so a replay needs no price table); ``None`` when
    it was not priced. The turn's and the session's cost budgets count it.
    """

    called_llm_at: int
    observation: Observation
    usage: Usage = Usage()
    items: tuple[ProviderItem, ...] = ()
    output: str = ""
    cost: int | None = None


class LlmCallFailed(_Input, frozen=True, kw_only=True, tag="llm-call-failed"):
    """A model call failed; retryable failures are retried with backoff while attempts remain.

    ``context_too_long``: the provider said the request exceeds the model's
    context; under a compaction policy the context is compacted once, else the
    turn fails with reason ``context-too-long``. While a summarization is asked
    for, the failure is the summarization's.

    ``cost``: what the call cost in nano-units when it answered and its answer
    was refused after it was paid for (a summary that cannot stand for the
    context, a reply whose provider items are unusable); added to the turn's
    and the session's spend. ``None``: nothing was priced.
    """

    error: str
    retryable: bool = False
    retry_after_ms: int | None = None
    context_too_long: bool = False
    cost: int | None = None


class ToolCallStarted(_Input, frozen=True, kw_only=True, tag="tool-call-started"):
    """The runner is about to execute a tool call (logged before the tool runs)."""

    tool_call_id: str


class ToolCallCompleted(_Input, frozen=True, kw_only=True, tag="tool-call-completed"):
    """An external tool call finished with a success or a failure the model will see."""

    tool_call_id: str
    result: ToolResult


class ToolCallApproved(_Input, frozen=True, kw_only=True, tag="tool-call-approved"):
    """A person approved a tool call that requires approval."""

    tool_call_id: str


class ToolCallDenied(_Input, frozen=True, kw_only=True, tag="tool-call-denied"):
    """A person denied a tool call; the model sees a failure result carrying ``reason``."""

    tool_call_id: str
    reason: str = ""


class ContextWindowExpanded(_Input, frozen=True, kw_only=True, tag="context-window-expanded"):
    """Internal tool: the model asked to see more past messages.

    ``usage`` and ``cost`` are those of the model call that asked (as in
    ``re-act-observed``): the turn's and the session's budgets count them.
    """

    usage: Usage = Usage()
    cost: int | None = None


class HistoryToolCallsAdded(_Input, frozen=True, kw_only=True, tag="history-tool-calls-added"):
    """Internal tool: the model asked to see past tool calls (repeated ids are deduplicated); ``usage`` and
    ``cost`` are those of the model call that asked."""

    tool_call_ids: tuple[str, ...]
    usage: Usage = Usage()
    cost: int | None = None


class TimerFired(_Input, frozen=True, kw_only=True, tag="timer-fired"):
    """A ``wait-until`` effect's time came: a retry backoff ended, or the turn's deadline passed."""


class ReActCancelled(_Input, frozen=True, kw_only=True, tag="re-act-cancelled"):
    """The user stopped the current turn."""

    reason: str = ""


class WorkflowActionTaken(_Input, frozen=True, kw_only=True, tag="workflow-action-taken"):
    """An action that moves the session's workflow, such as a person's decision (``plan-approved``).

    Refused when no transition from the current workflow state is triggered by
    ``action``, or when none of their guards passes.
    """

    action: str


class ToolCallInputRequired(_Input, frozen=True, kw_only=True, tag="tool-call-input-required"):
    """A running tool call needs answers from a person before it can go on (an MCP server's ``input_required``).

    ``requests`` is a JSON object (key -> request, e.g. an MCP elicitation); ``request_state`` is opaque
    text the tool gets back with the answers. The call waits, like a call awaiting approval, until
    ``tool-call-input-provided``; then it runs again with the answers.
    """

    tool_call_id: str
    requests: str
    request_state: str = ""


class ToolCallInputProvided(_Input, frozen=True, kw_only=True, tag="tool-call-input-provided"):
    """A person answered a call's ``tool-call-input-required``: ``responses`` is a JSON object (key -> response)."""

    tool_call_id: str
    responses: str


class ToolCallTaskCreated(_Input, frozen=True, kw_only=True, tag="tool-call-task-created"):
    """A running tool call handed its work to a remote task (an MCP task, an A2A task) named ``task_id``.

    Logged before the call waits for the task, so that after a crash the call follows the task
    instead of being sent again.
    """

    tool_call_id: str
    task_id: str


class AnswerRejected(_Input, frozen=True, kw_only=True, tag="answer-rejected"):
    """A model call finished with an answer the turn cannot end with: it did not validate against the
    session's ``output_schema`` (``invalid-output``, with ``problems``), or it had no text and no tool
    call (``empty-answer``).

    The call counts like any other (``usage``, ``cost``, the budgets). A note saying what
    was wrong, where, joins the conversation as message ``message_id`` (role
    ``user``), so the next model call reads it; the turn asks again, up to
    ``max_output_retries`` times for an invalid output and once for an empty
    answer, and then fails with ``reason`` as its reason.
    """

    called_llm_at: int
    reason: RejectionReason
    message_id: str
    problems: tuple[OutputProblem, ...] = ()
    usage: Usage = Usage()
    cost: int | None = None


class PoolVerdictReceived(_Input, frozen=True, kw_only=True, tag="pool-verdict-received"):
    """A budget pool shared by sessions answered the reservation a model call asks for before it starts.

    ``granted``: ``amount`` nano-units are held for the call in pool ``pool``
    under ``reservation_id`` (settled at the call's cost when it ends, or
    expiring if the process dies first), and the call goes on. Refused: the
    pool has not ``amount`` left, and the turn fails with reason
    ``budget-pool``; ``detail`` says what the pool held (shown to people).
    """

    pool: str
    reservation_id: str
    amount: int
    granted: bool
    detail: str = ""


class ContextCompacted(_Input, frozen=True, kw_only=True, tag="context-compacted"):
    """A summarization call finished: ``summary`` replaces, in the context, ``messages[:messages]`` and the tool
    calls ``tool_call_ids`` (the range the state asked for), and what an earlier summary covered.

    ``called_llm_at`` is when the call started, ``usage`` what it consumed and
    ``cost`` what it cost in nano-units (``None``: not priced), counted by the
    turn's and the session's cost budgets like any model call's. The full
    history stays in the state; the internal tools still reach it.
    """

    called_llm_at: int
    summary: str
    messages: int
    tool_call_ids: tuple[str, ...] = ()
    usage: Usage = Usage()
    cost: int | None = None


class ChildSpent(_Input, frozen=True, kw_only=True, tag="child-spent"):
    """The child session that the running call ``tool_call_id`` runs (an agent tool) has spent ``spent`` so far,
    in all: its own model calls, tool calls, tokens and cost, its own children's included.

    Cumulative, so a report sent again (a caller resumed after a crash) changes nothing; the difference from
    the call's previous report counts toward the calling turn's and session's budgets as it happens.
    """

    tool_call_id: str
    spent: Spend
class HandedOff(_Input, frozen=True, kw_only=True, tag="handed-off"):
    """The active agent ``from_agent`` handed the conversation to ``to_agent`` (both named in the config).

    The model of ``from_agent`` called the transfer tool (``tool_call_id`` is the
    provider's id of that call, ``reason`` its argument): its model call ends here,
    and the next one is ``to_agent``'s, with its instructions and tools, over the
    same conversation. ``usage`` and ``cost`` are those of that model call.
    """

    from_agent: str
    to_agent: str
    reason: str = ""
    tool_call_id: str = ""
    usage: Usage = Usage()
    cost: int | None = None


AgentInput = Union[
    SessionStarted,
    UserMessageReceived,
    LlmMessageStarted,
    LlmMessageCompleted,
    ReActObserved,
    LlmCallFailed,
    ToolCallStarted,
    ToolCallCompleted,
    ToolCallApproved,
    ToolCallDenied,
    ContextWindowExpanded,
    HistoryToolCallsAdded,
    TimerFired,
    ReActCancelled,
    WorkflowActionTaken,
    ToolCallInputRequired,
    ToolCallInputProvided,
    ToolCallTaskCreated,
    AnswerRejected,
    PoolVerdictReceived,
    ContextCompacted,
    ChildSpent,
    HandedOff,
]
"""Every input, as one tagged union (tag field ``type``): what ``transition`` accepts and logs hold."""

INPUT_TYPES: tuple[type[_Input], ...] = AgentInput.__args__  # type: ignore[attr-defined]


def tag_of(inp: AgentInput | type[AgentInput]) -> str:
    """The wire tag of an input or of an input class, e.g. ``"tool-call-completed"``."""
    return inp.__struct_config__.tag  # type: ignore[return-value]


INPUT_TAGS: tuple[str, ...] = tuple(tag_of(t) for t in INPUT_TYPES)  # type: ignore[arg-type]
"""Every input tag, in the order of the design's table."""
