"""The ``call-llm`` effect: ask the model, turn its answer into inputs.

Text becomes ``llm-message-started`` (at the first delta), ``text-delta``
events for display, and ``llm-message-completed`` with the whole text. Then
either an internal tool's input (``context-window-expanded`` /
``history-tool-calls-added``: the model is asked again with a wider context)
or ``re-act-observed`` with the tool calls or ``complete-re-act``, and the
reply's provider items (see ``_reply_items``).

A ``call-llm`` effect whose ``task`` is ``summarize`` is a summarization of the
context (``summarize``), whose result is ``context-compacted``.

Failures: anything the model adapter raises ends the call with
``llm-call-failed``: a :class:`~effects.ModelError` with its ``retryable``
flag (the reducer retries with backoff), any other exception not retryable,
with its type and message (the turn fails with reason ``llm-error``); an error
saying the context is too long carries ``context_too_long``. An error
raised by this handler's own machinery (a subscriber of the streamed text, the
clock) is a bug and propagates.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Container, Iterator, Sequence

import anyio
import msgspec
from msgspec.structs import replace

from agent_core import (
    AgentInput,
    AgentState,
    AnswerRejected,
    CallLlm,
    CompleteReAct,
    ContextWindowExpanded,
    ContinueReAct,
    HandedOff,
    HistoryToolCallsAdded,
    LlmMessageCompleted,
    LlmMessageStarted,
    Observation,
    OutputProblem,
    ReActObserved,
    RejectionReason,
    ToolCallRequest,
    Usage,
    active_agent,
    handoff_targets,
    replace_surrogates,
    transfer_tool_name,
)

from .._arguments import arguments_object
from .._machine import Dispatch
from .._model import INTERNAL_TOOLS, LOAD_OLDER_MESSAGES, ModelError, ModelReply, ModelToolCall
from ._ask import ask_model, failed_input
from ._context import EffectContext
from ._events import TextDelta
from ._hold import Hold, reserve
from ._reply_items import logged_items
from .summarize import summarize

_Ask = Callable[[EffectContext, AgentState, Dispatch[AgentInput], Hold | None], Awaitable[None]]
"""A model call's body: the answer's (``_call``) or the summarization's (``summarize``), given its hold, if any."""


class _Stream:
    """Opens the assistant message at the first text delta and forwards deltas to subscribers.

    An error raised while forwarding (by a subscriber) is kept in ``broken``, so
    the handler re-raises it instead of blaming the model.
    """

    __slots__ = ("broken", "ctx", "dispatch", "message_id", "state")

    def __init__(self, ctx: EffectContext, state: AgentState, dispatch: Dispatch[AgentInput]) -> None:
        self.ctx = ctx
        self.state = state
        self.dispatch = dispatch
        turn = state.turn
        # A message left streaming by a crash: answer into it (the reducer refuses a second one).
        self.message_id = turn.streaming_message_id if turn is not None else ""
        self.broken: BaseException | None = None

    def on_text(self, delta: str) -> None:
        if not delta:
            return
        try:
            if not self.message_id:
                self.message_id = self.ctx.new_message_id("assistant", self.state)
                self.dispatch(LlmMessageStarted(timestamp=self.ctx.stamp(), message_id=self.message_id))
            self.dispatch.emit(TextDelta(message_id=self.message_id, text=delta))
        except BaseException as error:
            self.broken = error
            raise

    def complete(self, text: str) -> None:
        """End the message with the reply's whole text (a model that did not stream sends it as one delta)."""
        if text and not self.message_id:
            self.on_text(text)
        if self.message_id:
            self.dispatch(LlmMessageCompleted(timestamp=self.ctx.stamp(), message_id=self.message_id, content=text))


def call_llm(ctx: EffectContext, eff: CallLlm, state: AgentState, dispatch: Dispatch[AgentInput]) -> Awaitable[None]:
    """Run one model call for ``state`` and dispatch what it produced (awaited).

    With a budget pool, the call first reserves from it and logs the verdict;
    a refusal ends the turn, so the model is not asked. The hold is settled at
    the call's cost before the reply enters the log, or released if the call
    fails or is cancelled. A summarization of the context (``task`` ``summarize``,
    see ``summarize``) is reserved, settled and priced the same way. Without a
    pool it hands back the call's own coroutine: no coroutine of its own is
    held through every model call.
    """
    run = summarize if eff.task == "summarize" else _call
    if not state.config.budget_pool:
        return run(ctx, state, dispatch, None)
    return _held(ctx, state, dispatch, run)


async def _held(ctx: EffectContext, state: AgentState, dispatch: Dispatch[AgentInput], run: _Ask) -> None:
    """``run`` within a hold of the session's budget pool (see :func:`call_llm`)."""
    hold = await reserve(ctx, state, dispatch)
    if hold is None:
        return
    try:
        await run(ctx, state, dispatch, hold)
    finally:
        if not hold.settled:
            with anyio.CancelScope(shield=True):
                await hold.release()


async def _call(ctx: EffectContext, state: AgentState, dispatch: Dispatch[AgentInput], hold: Hold | None) -> None:
    called_at = ctx.stamp(state.timestamp)
    stream = _Stream(ctx, state, dispatch)
    try:
        model, context = ctx.model_call(state)
        reply = await ask_model(ctx, context, stream.on_text, model)
    except Exception as error:
        if stream.broken is not None:
            # Not the model's failure: a subscriber of the streamed text raised (an adapter may have wrapped it).
            raise stream.broken from None
        if hold is not None:  # before the failure ends the turn: nothing waits on a hold once it has
            await hold.release()
        dispatch(failed_input(ctx, error))
        return
    reply = writable_reply(reply)
    cost = ctx.price(reply.usage, model)
    if hold is not None:  # the pool counts what was spent before the log does: a crash between overcounts
        await hold.settle(cost)
    stream.complete(reply.text)
    internal = [call for call in reply.tool_calls if call.name in INTERNAL_TOOLS]
    if internal:  # the call is answered inside the session; its tokens and cost are logged with that
        dispatch(_internal_input(ctx, internal[0], state, reply.usage, cost))
        return
    handoff = _handoff(ctx, reply, state)
    if handoff is not None:
        dispatch(replace(handoff, usage=reply.usage, cost=cost))
        return
    observation = _observation(reply, state.tool_calls)
    output = ""
    if isinstance(observation, CompleteReAct):
        verdict = _judged(ctx, state, reply)
        if isinstance(verdict, AnswerRejected):
            dispatch(replace(verdict, timestamp=ctx.stamp(), called_llm_at=called_at, cost=cost))
            return
        output = verdict
    call_ids = tuple(observation.tool_calls) if isinstance(observation, ContinueReAct) else ()
    try:
        items = logged_items(reply, call_ids, stream.message_id)
    except ModelError as error:  # after the call was paid for: its cost is logged with the failure
        dispatch(replace(failed_input(ctx, error), cost=cost))
        return
    observed = ReActObserved(
        timestamp=ctx.stamp(),
        called_llm_at=called_at,
        observation=observation,
        usage=reply.usage,
        items=items,
        output=output,
        cost=cost,
    )
    dispatch(observed)


def _judged(ctx: EffectContext, state: AgentState, reply: ModelReply) -> str | AnswerRejected:
    """A reply without tool calls, judged: the validated output (empty without an output schema), or the
    rejection of an empty reply or of an answer that does not validate (stamped by the caller)."""
    schema = state.config.output_schema
    if not reply.text.strip():
        reason: RejectionReason = "empty-answer"
        problems: tuple[OutputProblem, ...] = ()
    elif not schema:
        return ""
    else:
        verdict = ctx.output_validator(schema).validate(reply.text)
        if isinstance(verdict, str):
            return verdict
        reason, problems = "invalid-output", verdict
    return AnswerRejected(
        timestamp=0,
        called_llm_at=0,
        reason=reason,
        message_id=ctx.new_message_id("note", state),
        problems=problems,
        usage=reply.usage,
    )


def writable_reply(reply: ModelReply) -> ModelReply:
    """``reply`` with lone surrogates in its text and tool calls replaced by U+FFFD (a JSON escape of half a
    pair decodes to one), so that every codec can write the inputs made of it."""
    calls = reply.tool_calls
    if reply.text.isascii():
        for c in calls:  # a loop, not all(generator): every model call passes here
            if not (c.id.isascii() and c.name.isascii() and c.arguments.isascii()):
                break
        else:
            return reply
    repaired = tuple(
        ModelToolCall(
            id=replace_surrogates(c.id), name=replace_surrogates(c.name), arguments=replace_surrogates(c.arguments)
        )
        for c in calls
    )
    return msgspec.structs.replace(reply, text=replace_surrogates(reply.text), tool_calls=repaired)


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
    ctx: EffectContext, first: ModelToolCall, state: AgentState, usage: Usage, cost: int | None
) -> ContextWindowExpanded | HistoryToolCallsAdded:
    """The input for the model's first internal tool call (one per reply: it changes the context), with the
    call's ``usage`` and ``cost``.

    The reducer decides what it does (a wider window, past calls in the
    context, or the end of a final answer that asked for tools anyway). Only the
    model's arguments are validated here, where they enter: ids that name no
    recorded tool call are left out.
    """
    if first.name == LOAD_OLDER_MESSAGES:
        return ContextWindowExpanded(timestamp=ctx.stamp(), usage=usage, cost=cost)
    known = tuple(i for i in _requested_ids(first.arguments) if i in state.tool_calls)
    return HistoryToolCallsAdded(timestamp=ctx.stamp(), tool_call_ids=known, usage=usage, cost=cost)


MAX_HANDOFF_REASON_CHARS = 2_000
"""The most characters of a handoff's ``reason`` the log keeps (the model's argument is cut there)."""


def _handoff(ctx: EffectContext, reply: ModelReply, state: AgentState) -> HandedOff | None:
    """The ``handed-off`` input for the reply's first call of a transfer tool the active agent offers (it ends the
    model call, as an internal tool does; other calls in the reply are not run), or ``None``."""
    if not (state.config.handoffs or state.config.agents):
        return None
    targets = {transfer_tool_name(name): name for name in handoff_targets(state)}
    call = next((c for c in reply.tool_calls if c.name in targets), None)
    if call is None:
        return None
    parsed = arguments_object(call.arguments)
    reason = parsed.get("reason") if isinstance(parsed, dict) else None
    return HandedOff(
        timestamp=ctx.stamp(),
        from_agent=active_agent(state),
        to_agent=targets[call.name],
        reason=reason[:MAX_HANDOFF_REASON_CHARS] if isinstance(reason, str) else "",
        tool_call_id=call.id,
    )


def _requested_ids(arguments: str) -> list[str]:
    parsed = arguments_object(arguments)
    ids = parsed.get("tool_call_ids") if isinstance(parsed, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
