"""``AgentRuntime``: the agent's ``run_effect``, over the narrow context its effect handlers use.

One runtime serves one session. Each effect ``effects_at`` derives goes to
the handler of its kind (one module each, as the reducer has one per input
kind): ``call-llm`` asks the model, ``call-tool`` runs a tool, ``wait-until``
sleeps on the clock; each dispatches its outcome back as inputs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import assert_never

from agent_core import (
    AgentInput,
    AgentState,
    CallLlm,
    CallTool,
    Effect,
    LlmContext,
    ToolCallStarted,
    Usage,
    WaitUntil,
    active_agent,
    effects_at,
    llm_context,
)

from .._clock import Clock
from .._machine import Controller, Dispatch
from .._model import Model
from .._money import BudgetPools, Pricing, model_name, priced
from .._store import EventStore
from .._tools import SessionSlots, Slots, Toolbox
from ._context import DEFAULT_MODEL_TIMEOUT_MS
from ._handoffs import Speaker
from ._ids import IdSource
from ._output import JsonSchemaOutput, OutputValidator
from ._redact import RedactingDispatch, Redactor
from .call_llm import call_llm
from .call_tool import call_tool
from .wait_until import WaitUntilAlarm, wait_until


class AgentRuntime:
    """The :class:`EffectContext` of one session, and its ``run_effect``.

    ``floor`` gives the timestamp of the newest input applied (the machine's
    ``current().timestamp``): new timestamps never go below it nor below any
    stamped before, even if the wall clock is set back. ``store`` is where the session's
    log is kept (under ``stored_id``), and so where the child sessions its tool calls start are kept; ``current``
    gives the session's current state (the machine's), for :meth:`call_open`, and ``wanted``
    whether the tool call running this session (a child) is still open. Every input and streamed
    text an effect dispatches has the ``secrets`` replaced by ``[redacted]`` first. ``speakers`` are the
    session's agents by name when it has handoffs: the active agent's model answers (else ``model``).
    """

    def __init__(
        self,
        model: Model,
        toolbox: Toolbox,
        clock: Clock,
        ids: IdSource,
        floor: Callable[[], int] = lambda: 0,
        model_timeout_ms: int | None = DEFAULT_MODEL_TIMEOUT_MS,
        secrets: Iterable[str] = (),
        output: OutputValidator | None = None,
        pricing: Pricing | None = None,
        pools: BudgetPools | None = None,
        store: EventStore | None = None,
        stored_id: str | None = None,
        current: Callable[[], AgentState] | None = None,
        wanted: Callable[[], bool] | None = None,
        speakers: Mapping[str, Speaker] | None = None,
    ) -> None:
        self._speakers = speakers
        self._wanted = wanted
        self._current = current
        self._store = store
        self._stored_id = stored_id
        self._pools = pools
        self.redactor = Redactor(secrets)
        self._output = output
        self._pricing = pricing
        self._model_name = model_name(model)
        self._model = model
        self._model_timeout_ms = model_timeout_ms
        self._toolbox = toolbox
        self._clock = clock
        self._loop_clock = bool(getattr(clock, "loop_deadlines", False))
        self._ids = ids
        self._floor = floor
        self._last = 0
        self._slots = SessionSlots(toolbox.limits.max_concurrent_per_session)

    @property
    def model(self) -> Model:
        """The session's model."""
        return self._model

    def model_call(self, state: AgentState) -> tuple[Model, LlmContext]:
        """The model that answers in ``state`` (the active agent's) and what it is sent (through the agent's
        ``handoff_context`` when it has one)."""
        context = llm_context(state)
        speaker = self._speakers.get(active_agent(state)) if self._speakers is not None else None
        if speaker is None:
            return self._model, context
        if speaker.context_filter is not None:
            context = speaker.context_filter(context)
        return speaker.model, context

    @property
    def toolbox(self) -> Toolbox:
        """The session's tools."""
        return self._toolbox

    @property
    def clock(self) -> Clock:
        """The session's clock."""
        return self._clock

    @property
    def model_timeout_ms(self) -> int | None:
        """How long a model call may take on the session's clock (``None``: unbounded)."""
        return self._model_timeout_ms

    @property
    def store(self) -> EventStore | None:
        """Where the session's log is kept (child sessions are kept there too); ``None``: nowhere."""
        return self._store

    @property
    def stored_id(self) -> str | None:
        """The id the session's log is kept under in ``store`` (``None``: no store)."""
        return self._stored_id

    def call_open(self, tool_call_id: str) -> bool:
        """Whether the call is pending or running in the session's current state (always, without ``current``),
        and the session is still wanted by the call that runs it (a child session's ``wanted``)."""
        if self._wanted is not None and not self._wanted():
            return False
        if self._current is None:
            return True
        record = self._current().tool_calls.get(tool_call_id)
        return record is not None and record.status in ("pending", "running")

    def stamp(self, at_least: int = 0) -> int:
        """The timestamp for a new input: the clock's time, never earlier than any input the session has."""
        now, floor = self._clock.now_ms(), self._floor()
        if now < self._last:
            now = self._last
        if now < floor:
            now = floor
        if now < at_least:
            now = at_least
        self._last = now
        return now

    def output_validator(self, schema: str) -> OutputValidator:
        """The agent's output validator when it gave ``schema``; else one for the logged schema (a session
        resumed without its output type), kept for the next answers."""
        if self._output is None or self._output.schema != schema:
            self._output = JsonSchemaOutput(schema)
        return self._output

    def tool_slot(self) -> Slots:
        """A place for one tool call under the session's bound, then the process's (``async with`` it)."""
        return self._slots.slot()

    def new_message_id(self, kind: str, state: AgentState) -> str:
        """A message id from the id source, skipping ids ``state`` already uses (e.g. after a resume)."""
        used, queued = state.message_index, {m.id for m in state.queued} if state.queued else ()
        message_id = self._ids.new_id(kind)
        while message_id in used or message_id in queued:
            message_id = self._ids.new_id(kind)
        return message_id

    @property
    def budget_pools(self) -> BudgetPools | None:
        """Where the session's budget pool is kept (``None``: the session has none)."""
        return self._pools

    def new_reservation_id(self) -> str:
        """A new id for a reservation in a budget pool, from the id source."""
        return self._ids.new_id("reservation")

    def price(self, usage: Usage, model: Model | None = None) -> int | None:
        """What a model call with ``usage`` cost, in nano-units, by the session's pricing; ``None`` unpriced.
        ``model`` is the model that answered, when not the session's (another agent's, after a handoff)."""
        name = self._model_name if model is None or model is self._model else model_name(model)
        return priced(self._pricing, name, usage)

    def starts(self, before: AgentState, after: AgentState) -> list[AgentInput]:
        """The ``tool-call-started`` inputs of the calls a batch made runnable: pending in ``after`` with a
        ``call-tool`` effect derived there, and not already so in ``before``.

        The machine's ``follow_up``: applied at the end of the batch that made
        the calls runnable (a model's observation, an approval), they are
        journaled in its commit, and the tools find their calls ``running``
        and start without a commit of their own. A call that was runnable
        before the batch already has its effect, which starts it itself (after
        a resume), so it is left to it.
        """
        fresh = _runnable(after)
        if not fresh:
            return []
        earlier = _runnable(before)
        at = 0
        started: list[AgentInput] = []
        for call_id in fresh:  # a loop: on 3.11 a comprehension here would make cells on every batch
            if call_id not in earlier:
                at = at or self.stamp(after.timestamp)
                started.append(ToolCallStarted(timestamp=at, tool_call_id=call_id))
        return started

    def run_effect(self, eff: Effect, state: AgentState, key: str) -> Controller[AgentInput]:
        """The controller that runs ``eff`` (derived from ``state`` under ``key``) with its kind's handler; a
        ``wait-until`` on a clock that follows the event loop's is an alarm (a loop timer under asyncio)."""
        if type(eff) is WaitUntil and self._loop_clock:
            return WaitUntilAlarm(self, eff)
        return _Run(self, eff, state)


class _Run:
    """A controller: the effect, the state it was derived from, and the context to run it in."""

    __slots__ = ("ctx", "eff", "state")

    def __init__(self, ctx: AgentRuntime, eff: Effect, state: AgentState) -> None:
        self.ctx, self.eff, self.state = ctx, eff, state

    def start(self, dispatch: Dispatch[AgentInput], /) -> Awaitable[None]:
        # Hands back the handler's own coroutine: no frame of its own per effect.
        eff = self.eff
        redactor = self.ctx.redactor
        if redactor.secrets:  # values from the model and the tools enter here: no secret gets past
            dispatch = RedactingDispatch(dispatch, redactor)
        if isinstance(eff, CallTool):
            return call_tool(self.ctx, eff, self.state, dispatch)
        if isinstance(eff, CallLlm):
            return call_llm(self.ctx, eff, self.state, dispatch)
        if isinstance(eff, WaitUntil):
            return wait_until(self.ctx, eff, dispatch)
        assert_never(eff)

    def __repr__(self) -> str:
        return f"<agent effect {self.eff!r}>"


def _runnable(state: AgentState) -> list[str]:
    """The pending calls ``state`` derives a ``call-tool`` effect for, in ``effects_at``'s order."""
    turn = state.turn
    if turn is None or not turn.open_call_ids:
        return []
    calls = state.tool_calls
    runnable: list[str] = []
    for call_id in turn.open_call_ids:
        if calls[call_id].status == "pending":
            break
    else:
        return runnable
    for eff in effects_at(state).values():  # loops: on 3.11 a comprehension here would make cells on every batch
        if isinstance(eff, CallTool) and calls[eff.tool_call_id].status == "pending":
            runnable.append(eff.tool_call_id)
    return runnable
