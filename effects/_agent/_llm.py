"""The ``call-llm`` effect: ask the model, turn its answer into inputs.

Text becomes ``llm-message-started`` (at the first delta), ``text-delta``
events for display, and ``llm-message-completed`` with the whole text. Then
either an internal tool's input (``context-window-expanded`` /
``history-tool-calls-added``: the model is asked again with a wider context)
or ``re-act-observed`` with the tool calls or ``complete-re-act``. A
:class:`ModelError` becomes ``llm-call-failed`` with its ``retryable`` flag;
any other exception a non-retryable ``llm-call-failed``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Container, Iterator, Sequence
from typing import TYPE_CHECKING

from agent_core import (
    AgentInput,
    AgentState,
    CallLlm,
    CompleteReAct,
    ContextWindowExpanded,
    ContinueReAct,
    HistoryToolCallsAdded,
    InvalidInput,
    LlmCallFailed,
    LlmMessageCompleted,
    LlmMessageStarted,
    Observation,
    ReActObserved,
    ToolCallRequest,
    check,
    llm_context,
    replay,
)

from .._machine._protocols import Dispatch
from .._model import INTERNAL_TOOLS, LOAD_OLDER_MESSAGES, ModelError, ModelReply, ModelToolCall
from ._events import TextDelta

if TYPE_CHECKING:
    from ._runtime import AgentRuntime


class _Stream:
    """Opens the assistant message at the first text delta and forwards deltas to subscribers."""

    __slots__ = ("dispatch_to", "message_id", "rt", "sent")

    def __init__(self, rt: AgentRuntime, dispatch: Dispatch[AgentInput]) -> None:
        self.rt = rt
        self.dispatch_to = dispatch
        self.message_id = ""
        self.sent: list[AgentInput] = []

    def dispatch(self, inp: AgentInput) -> None:
        self.sent.append(inp)
        self.dispatch_to(inp)

    def on_text(self, delta: str) -> None:
        if not delta:
            return
        if not self.message_id:
            self.message_id = self.rt.new_message_id("assistant")
            self.dispatch(LlmMessageStarted(timestamp=self.rt.stamp(), message_id=self.message_id))
        self.rt.emit(TextDelta(message_id=self.message_id, text=delta))

    def complete(self, text: str) -> None:
        """End the message with the reply's whole text (a model that did not stream sends it as one delta)."""
        if text and not self.message_id:
            self.on_text(text)
        if self.message_id:
            self.dispatch(LlmMessageCompleted(timestamp=self.rt.stamp(), message_id=self.message_id, content=text))


async def call_llm(rt: AgentRuntime, eff: CallLlm, state: AgentState, dispatch: Dispatch[AgentInput]) -> None:
    """Run one model call for ``state`` and dispatch what it produced."""
    called_at = rt.stamp()
    stream = _Stream(rt, dispatch)
    if state.turn is not None and state.turn.streaming_message_id:
        # A message left streaming by a crash: answer into it (the reducer refuses a second one).
        stream.message_id = state.turn.streaming_message_id
    try:
        reply = await rt.model.complete(llm_context(state), stream.on_text)
    except ModelError as error:
        dispatch(_failed(rt, _describe(error), error.retryable, error.retry_after_ms))
        return
    except Exception as error:
        dispatch(_failed(rt, f"{type(error).__name__}: {error}", False, None))
        return
    stream.complete(reply.text)
    internal = [call for call in reply.tool_calls if call.name in INTERNAL_TOOLS]
    if internal:
        dispatch(_internal_input(rt, internal, state, stream.sent))
        return
    dispatch(
        ReActObserved(
            timestamp=rt.stamp(),
            called_llm_at=called_at,
            observation=_observation(reply, rt.current().tool_calls),
            usage=reply.usage,
        )
    )


def _failed(rt: AgentRuntime, error: str, retryable: bool, retry_after_ms: int | None) -> LlmCallFailed:
    return LlmCallFailed(timestamp=rt.stamp(), error=error, retryable=retryable, retry_after_ms=retry_after_ms)


def _describe(error: ModelError) -> str:
    text = str(error) or type(error).__name__
    return f"HTTP {error.status}: {text}" if error.status is not None else text


def _observation(reply: ModelReply, taken: Container[str]) -> Observation:
    if not reply.tool_calls:
        return CompleteReAct()
    return ContinueReAct(tool_calls=unique_requests(reply.tool_calls, taken))


def unique_requests(calls: Sequence[ModelToolCall], taken: Container[str]) -> dict[str, ToolCallRequest]:
    """The calls keyed by ids unique in the session: a provider id already used gets ``-2``, ``-3``...

    Providers may repeat ids across turns (or send none: ``call-1``, ``call-2``...);
    the reducer refuses duplicates, so ids are made unique here, deterministically.
    """
    requests: dict[str, ToolCallRequest] = {}
    for call in calls:
        call_id = call.id
        if not call_id or call_id in taken or call_id in requests:
            call_id = next(c for c in _candidates(call.id) if c not in taken and c not in requests)
        requests[call_id] = ToolCallRequest(name=call.name, parameters=call.arguments or "{}")
    return requests


def _candidates(provider_id: str) -> Iterator[str]:
    if provider_id:
        yield provider_id
    base = provider_id or "call"
    for n in itertools.count(2 if provider_id else 1):
        yield f"{base}-{n}"


def _internal_input(
    rt: AgentRuntime, internal: list[ModelToolCall], state: AgentState, sent: list[AgentInput]
) -> AgentInput:
    """The input for the model's first internal tool call (one per reply: it changes the context).

    It is checked against ``state`` (the call's) with this call's own inputs
    (its message) applied, which the machine may not have applied yet. Unknown
    tool call ids are left out; an input that would be refused becomes a
    non-retryable ``llm-call-failed`` saying why, so the turn never waits forever.
    """
    first = internal[0]
    inp: AgentInput
    if first.name == LOAD_OLDER_MESSAGES:
        inp = ContextWindowExpanded(timestamp=rt.stamp())
    else:
        ids = _requested_ids(first.arguments)
        known = tuple(i for i in ids if i in state.tool_calls)
        inp = HistoryToolCallsAdded(timestamp=rt.stamp(), tool_call_ids=known)
    try:
        rejection = check(replay(sent, state), inp)
    except InvalidInput as error:
        rejection = error.rejection
    if rejection is None:
        return inp
    return _failed(rt, f"the model called {first.name}, which cannot apply now: {rejection.message}", False, None)


def _requested_ids(arguments: str) -> list[str]:
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return []
    ids = parsed.get("tool_call_ids") if isinstance(parsed, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
