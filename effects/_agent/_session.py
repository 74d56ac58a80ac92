"""``Agent`` and its ``Session``: the door most users start from.

::

    agent = Agent(ScriptedModel([...]), tools=[add], config=AgentConfig(max_tool_calls=10))
    async with agent.running() as session:
        session.send("What is 2 + 3?")
        await session.settled()
        print(session.state.messages)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Literal

import anyio
import msgspec
from pydantic import BaseModel

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
    Effect,
    InvalidInput,
    Lineage,
    Phase,
    ReActCancelled,
    SessionStarted,
    check,
    effects_at,
    initial_state,
    transition,
)

from .._clock import Clock, SystemClock
from .._machine import DEFAULT_MAX_BACKLOG, Journal, Machine
from .._model import Model
from .._money import BudgetPools, Pricing, default_pricing
from .._store import EventStore, SessionJournal, child_session_id, session_exists
from .._tools import Tool, Toolbox
from ._agent_cycles import unbounded_cycle
from ._agent_tool import CALLER_CANCELLED, AgentTool
from ._caller import Caller
from ._context import DEFAULT_MODEL_TIMEOUT_MS
from ._durable import durable_journal
from ._handoffs import ContextFilter, handoff_setup, missing_agents
from ._ids import IdSource, RandomIds
from ._left_waiting import LeftWaiting
from ._output import OutputType, output_validator
from ._redact import Redactor
from ._runtime import AgentRuntime
from ._session_handle import Session
from ._tree import forwarded


class Agent:
    """An agent: a model, tools and a configuration. ``running()`` runs one session of it.

    ``tools`` are :func:`~effects.tool`-decorated functions (plain functions are
    wrapped). ``clock`` defaults to the wall clock and ``ids`` to random ids;
    tests pass a :class:`~effects.ManualClock` and :class:`~effects.SequentialIds`.
    ``session_id`` defaults to a new id from ``ids``. A model call that has not
    answered after ``model_timeout_ms`` (on ``clock``; default 10 minutes,
    ``None`` for no limit) fails as a retryable ``llm-call-failed``.
    ``secrets`` are values (at least 8 characters) that no input may hold: each
    occurrence in the model's text and tool-call arguments, tool results and
    errors, model errors and a person's messages becomes ``[redacted]`` before it
    enters the log, the state or a subscriber's events (``ValueError`` for a
    shorter value). They are not stored: pass them again when the session resumes.

    ``journal`` receives every accepted input, with the state after it, before
    anything depends on it (a :class:`~effects.SessionJournal` on a store makes
    the session durable; see :class:`~effects.Journal`). To resume a session, pass its
    folded state as ``initial``: no ``session-started`` is dispatched, and the
    effects the state derives start again (a tool call that was ``running`` is
    run and completed, not started twice).

    ``max_backlog`` bounds the inputs sent from outside that wait to be applied
    and made durable (default 1,000): over it, ``Session.send`` and the other
    methods raise :class:`~effects.Backpressure`; see :meth:`Session.wait_for_room`.

    ``output_type`` asks every turn for a structured answer: a pydantic model
    (validated by pydantic) or a JSON Schema of an object, as a dict or JSON text
    (validated by the ``jsonschema`` package, the ``json-schema`` extra). Its
    schema becomes ``config.output_schema``; an answer that does not validate is
    shown to the model and asked again (``config.max_output_retries``); the
    validated answer is ``state.last_outcome.output``, and
    :meth:`Session.output` returns it as the type. ``TypeError``/``ValueError``
    here for a type whose schema is not an object's.

    ``pricing`` prices each model call where its reply enters (the cost is
    logged on ``re-act-observed``; see :data:`~effects.Pricing`): by default
    ``"genai-prices"``, the :class:`~effects.GenaiPrices` table when the
    ``prices`` extra is installed (else calls are not priced); ``None`` prices
    nothing. A config with a cost budget (``max_cost``, ``max_session_cost``)
    needs a pricing: ``running()`` refuses it without one. A config naming a
    ``budget_pool`` needs ``pools`` (:class:`~effects.BudgetPools`), where the
    pool is kept: each model call reserves from it before it starts.

    ``handoffs`` are the agents this one's model may hand the conversation to
    (other ``Agent`` objects, or the ``name`` of one reached otherwise, e.g. the
    starting agent): each is offered as a tool ``transfer_to_<name>``, and when
    the model calls it the named agent's model, instructions
    (``config.system_prompt``) and tools take over the same session. Agents that
    take part need a ``name`` (and may have a ``description``, which the transfer
    tool shows). ``handoff_context`` (optional) makes what this agent's model
    calls send from the context the state gives: applied where the model is
    called, never logged. See the Handoffs guide.
    """

    def __init__(
        self,
        model: Model,
        *,
        tools: Iterable[Tool[..., Any] | Callable[..., Any]] = (),
        config: AgentConfig | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        session_id: str | None = None,
        journal: Journal[AgentState, AgentInput] | None = None,
        initial: AgentState | None = None,
        model_timeout_ms: int | None = DEFAULT_MODEL_TIMEOUT_MS,
        max_backlog: int | None = DEFAULT_MAX_BACKLOG,
        secrets: Iterable[str] = (),
        output_type: OutputType | None = None,
        pricing: Pricing | Literal["genai-prices"] | None = "genai-prices",
        pools: BudgetPools | None = None,
        name: str = "",
        description: str = "",
        handoffs: Iterable[Agent | str] = (),
        handoff_context: ContextFilter | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.handoffs: tuple[Agent | str, ...] = tuple(handoffs)
        self.handoff_context = handoff_context
        self.pools = pools
        self.model = model
        self.pricing = default_pricing() if pricing == "genai-prices" else pricing
        self.secrets = Redactor(secrets).secrets  # checked now, where the developer passes them
        self.model_timeout_ms = model_timeout_ms
        self.toolbox = Toolbox(tools)
        self.config = config if config is not None else AgentConfig()
        self.output_type = output_type
        self.output = output_validator(output_type) if output_type is not None else None
        if self.output is not None:
            self.config = _with_output_schema(self.config, self.output.schema)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.ids: IdSource = ids if ids is not None else RandomIds()
        self.session_id = session_id
        self.journal = journal
        self.initial = initial
        self.max_backlog = max_backlog
        self._wanted: Callable[[], bool] | None = None  # a child session's: whether the call running it is open
        self._held: dict[str, AgentState] = {}  # children in memory that wait for a decision, by session id

    def _refuse_config(self, config: AgentConfig) -> None:
        """Refuse, before anything runs, money settings the session could not keep: a cost budget with no
        pricing, a budget pool with nowhere to keep it (the reducer judges the rest at ``session-started``)."""
        if config.budget_pool and self.pools is None:
            raise ValueError(
                f"budget_pool {config.budget_pool!r} needs the pools it is kept in; expected "
                "Agent(pools=BudgetPools.sqlite(PATH, per_call=...)) or BudgetPools.postgres(DSN, per_call=...), got none"
            )
        budgets = [name for name in ("max_cost", "max_session_cost") if getattr(config, name) is not None]
        if budgets and self.pricing is None:
            raise ValueError(
                f"{' and '.join(budgets)} need a pricing to count the cost of model calls; expected "
                "Agent(pricing=...) (a callable (model, usage) -> amount), or the 'prices' extra installed "
                "for the default genai-prices table, got no pricing"
            )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Session]:
        """Run a session for the duration of the block; on exit every running effect is cancelled.

        A new session starts with ``session-started`` (config and tool
        definitions), applied on the event loop's next turn so that handlers
        subscribed at the top of the block see it; a resumed one (``initial``)
        reconciles from its state. A ``session-started`` the reducer refuses (a
        rule or guard this process has not registered, a workflow naming a tool
        the agent lacks, nonsense limits) raises :class:`~agent_core.InvalidInput`
        with the reducer's explanation here, before the block runs: nothing is
        journaled. Once the block ended, the :class:`Session` refuses every input
        (:class:`SessionStopped`).
        """
        start = self.initial if self.initial is not None else initial_state()
        setup = handoff_setup(self)  # refuses agents that cannot work together, naming them
        cycle = unbounded_cycle(self)
        if cycle is not None:
            raise ValueError(cycle)
        config = setup.config(self.config) if setup is not None else self.config
        self._refuse_config(start.config if self.initial is not None else config)
        missing = missing_agents(start.config, setup) if self.initial is not None else []
        if missing:
            raise ValueError(
                f"session {start.session_id!r} hands off between agents {', '.join(map(repr, missing))}, which this "
                "Agent does not declare; expected the same agents (handoffs=[...]) as when the session started"
            )
        runtime = AgentRuntime(
            self.model,
            setup.toolbox if setup is not None else self.toolbox,
            self.clock,
            self.ids,
            floor=lambda: machine.current().timestamp,
            model_timeout_ms=self.model_timeout_ms,
            secrets=self.secrets,
            output=self.output,
            pricing=self.pricing,
            pools=self.pools,
            store=self.journal.store if isinstance(self.journal, SessionJournal) else None,
            stored_id=self.journal.session_id if isinstance(self.journal, SessionJournal) else None,
            current=lambda: machine.current(),
            wanted=self._wanted,
            speakers=setup.speakers if setup is not None else None,
        )
        left_waiting = LeftWaiting(runtime.toolbox, runtime)

        def follow_up(before: AgentState, after: AgentState) -> list[AgentInput]:
            left_waiting.note(before, after)
            return runtime.starts(before, after)

        # The reducer validates as it folds: an InvalidInput it raises is the rejection, so each
        # input is folded once (a separate `check` would fold it a second time).
        machine: Machine[AgentState, AgentInput, Effect] = Machine(
            start,
            transition,
            effects_at,
            runtime.run_effect,
            rejects=InvalidInput,
            journal=self.journal,
            follow_up=follow_up,
            max_backlog=self.max_backlog,
        )
        started = None
        if self.initial is None:
            started = runtime.redactor.input(
                SessionStarted(
                    timestamp=runtime.stamp(),
                    session_id=self.session_id or self.ids.new_id("session"),
                    config=config,
                    tools=self.toolbox.definitions(),
                )
            )
            refused = check(start, started)
            if refused is not None:  # a config the reducer refuses: say so here, not by a session that never starts
                raise InvalidInput(refused)
        session = Session(machine, runtime, lambda: left_waiting.end(machine))
        try:
            async with left_waiting.watching(machine) as watch, machine.running():
                watch()
                if started is not None:
                    # Dispatched once running, so subscribers added as the block starts see it too.
                    machine.dispatch(started)
                yield session
        finally:
            session.stopped = True

    def as_tool(
        self,
        name: str,
        description: str,
        *,
        input_type: type[BaseModel] | None = None,
        timeout_ms: int | None = None,
        max_model_calls: int | None = None,
        max_tool_calls: int | None = None,
        max_tokens: int | None = None,
        max_cost: int | None = None,
        max_depth: int | None = None,
    ) -> AgentTool:
        """This agent as a tool another agent's model can call: each call runs a *child session* of it.

        The model sends ``{"task": "..."}`` (with ``input_type``, a pydantic model,
        an object of that model instead); the child gets it as its user message
        (the object as JSON), runs one turn, and the call's result is its last
        answer, or its structured output as JSON when this agent has an
        ``output_type``. A turn that fails or is cancelled is a failure result
        the calling model reads.

        The child session is kept in the calling session's store (in memory when
        the caller has none) under the id ``<calling session id>:<tool call id>``;
        its ``session-started`` records its lineage (``config.lineage``: the calling
        session, its tool call, the root session). It is a normal session:
        ``replay --verify``, ``show`` and ``inspect`` work on it alone. A calling
        session resumed after a crash reopens the same child and resumes it from its log.
        Calls in the same model reply run in parallel, as any tools do. ``timeout_ms``
        bounds one call (else the calling toolbox's default, two minutes); a call that runs out
        of time ends the child's turn as cancelled, in its log.

        What a child spends (model calls, tool calls, tokens, cost) counts toward the calling
        turn's and session's budgets as it happens (``child-spent`` inputs in the caller's log);
        a child of an agent without a ``budget_pool`` draws from the caller's pool. ``max_model_calls``,
        ``max_tool_calls``, ``max_tokens`` and ``max_cost`` give each child turn smaller budgets than
        this agent's config has (the smaller of the two applies): a child over one fails its turn, and
        the call gets a failure result the calling model reads.

        ``max_depth`` bounds how deep below its root session a call of this tool may start a child (1: only
        from a top-level session): a call beyond it is a failure result (code ``max-depth``) the calling model
        reads. Agents that call each other as tools in a cycle need it on one tool of the cycle: a session that
        reaches such a cycle without one is refused when it starts, naming the tools.

        A call of the child that needs approval makes this call wait too: the
        calling session shows it among its :attr:`Session.pending_approvals` (phase
        ``awaiting-approval``), and a decision taken there (``approve`` /
        ``deny`` with the call's address) reaches the child, which goes on.

        Raises ``ValueError`` for a configuration its sessions would refuse at ``session-started``.
        """
        limits = {"max_model_calls": max_model_calls, "max_tool_calls": max_tool_calls, "max_tokens": max_tokens}
        config = _limited(self.config, {**limits, "max_cost": max_cost})
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"agent tool {name!r}: expected max_depth of 1 or more (or None), got {max_depth}")
        self._refuse_config(config)
        probe = SessionStarted(
            timestamp=0,
            session_id=f"{name}:check",
            config=msgspec.structs.replace(
                config,
                lineage=Lineage(parent_session_id="caller", parent_tool_call_id="call", root_session_id="caller"),
            ),
            tools=self.toolbox.definitions(),
        )
        refused = check(initial_state(), probe)
        if refused is not None:  # said where the agent is made into a tool, not when a model first calls it
            raise ValueError(f"agent tool {name!r}: its agent's configuration is refused: {refused.message}")
        return AgentTool(
            lambda caller, session_id, lineage: self._open_child(config, caller, session_id, lineage),
            self._cancel_child,
            name=name,
            description=description,
            input_type=input_type,
            timeout_ms=timeout_ms,
            max_depth=max_depth,
            agent=self,
            config=config,
        )

    def _open_child(
        self, config: AgentConfig, caller: Caller, session_id: str, lineage: Lineage
    ) -> AbstractAsyncContextManager[Session]:
        """The child session ``session_id`` of this agent (with ``config``, its limits given by ``as_tool``): in
        the caller's store (new, or resumed from its log), or in memory. Without a pool of its own, the child
        draws from the caller's."""
        config = msgspec.structs.replace(config, lineage=lineage)
        pools = self.pools
        if not config.budget_pool and caller.budget_pool:
            config = msgspec.structs.replace(config, budget_pool=caller.budget_pool)
            pools = pools if pools is not None else caller.pools
        return self._child_in(caller.store, session_id, config, caller.open, pools)

    @asynccontextmanager
    async def _child_in(
        self,
        store: EventStore | None,
        session_id: str,
        config: AgentConfig,
        wanted: Callable[[], bool],
        pools: BudgetPools | None,
    ) -> AsyncIterator[Session]:
        if store is None:
            # A child in memory that waits for a decision is held here until its caller's call comes back with it.
            held = self._held.pop(session_id, None)
            async with self._child(session_id, config, None, wanted, pools, held).running() as session:
                try:
                    yield session
                finally:
                    if session.phase is Phase.AWAITING_APPROVAL and session.machine.failure is None:
                        self._held[session_id] = session.state
            return
        journal = durable_journal(store, session_id, self.clock)
        async with journal as opened, self._child(session_id, config, opened, wanted, pools).running() as session:
            yield session

    async def _cancel_child(self, caller: Caller, session_id: str, reason: str) -> None:
        """End the open turn of the child ``session_id`` of ``caller`` as cancelled for ``reason``: in its log
        (:meth:`_cancel_stored`), or in the state held for it in memory while it waits for a decision, which runs
        once more to end its turn (its events reach the caller's subscribers), and ends its own children's."""
        if caller.store is not None:
            await self._cancel_stored(caller.store, session_id, reason)
            return
        if session_id not in self._held:  # a child in memory that does not wait ended with the call that ran it
            return
        pools = self.pools if self.pools is not None else caller.pools
        async with self._child_in(None, session_id, self.config, lambda: True, pools) as session:
            with forwarded(session, session_id, caller.publish):
                session.cancel(reason)
                await session.machine.until(lambda s: s.turn is None)
                await session._end_children_left_waiting()  # while its caller still hears its events

    async def _cancel_stored(self, store: EventStore, session_id: str, reason: str) -> None:
        """End the open turn of the stored child ``session_id`` as cancelled for ``reason``: its log only, nothing
        runs. The children its open calls were running or waiting on (stored under their call ids) end the same way."""
        async with durable_journal(store, session_id, self.clock, interrupted=False) as journal:
            state = journal.state
            cancel = ReActCancelled(timestamp=max(self.clock.now_ms(), state.timestamp), reason=reason)
            if check(state, cancel) is not None:  # no turn is open (a child whose turn had ended is left as it is)
                return
            assert state.turn is not None
            open_calls = state.turn.open_call_ids + state.turn.awaiting_ids
            await anyio.to_thread.run_sync(journal.append, [cancel])
        for call_id in open_calls:
            grandchild = child_session_id(session_id, call_id)
            if await anyio.to_thread.run_sync(session_exists, store, grandchild):
                await self._cancel_stored(store, grandchild, CALLER_CANCELLED)

    def _child(
        self,
        session_id: str,
        config: AgentConfig,
        journal: SessionJournal | None,
        wanted: Callable[[], bool],
        pools: BudgetPools | None,
        held: AgentState | None = None,
    ) -> Agent:
        resumed = (journal is not None and journal.seq > 0) or held is not None
        child = Agent(
            self.model,
            tools=self.toolbox,
            config=None if resumed else config,
            clock=self.clock,
            ids=self.ids,
            session_id=session_id,
            journal=journal,
            initial=journal.state if journal is not None and resumed else held,
            model_timeout_ms=self.model_timeout_ms,
            max_backlog=self.max_backlog,
            secrets=self.secrets,
            output_type=self.output_type,
            pricing=self.pricing,
            pools=pools,
            name=self.name,
            description=self.description,
            handoffs=self.handoffs,
            handoff_context=self.handoff_context,
        )
        child._wanted = wanted
        return child


def _limited(config: AgentConfig, limits: dict[str, int | None]) -> AgentConfig:
    """``config`` with each limit given in ``limits`` (``None``: not given) where it is smaller than the config's."""
    smaller = {}
    for name, value in limits.items():
        current = getattr(config, name)
        if value is not None and (current is None or value < current):
            smaller[name] = value
    return msgspec.structs.replace(config, **smaller) if smaller else config


def _with_output_schema(config: AgentConfig, schema: str) -> AgentConfig:
    """``config`` asking for ``schema``; a config that already asks for another one is a mistake."""
    if config.output_schema and config.output_schema != schema:
        raise ValueError(
            "the config's output_schema differs from the output_type's schema; "
            "expected one of them (pass output_type, and leave config.output_schema empty)"
        )
    return msgspec.structs.replace(config, output_schema=schema)
