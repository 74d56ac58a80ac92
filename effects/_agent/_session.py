"""``Agent`` and ``Session``: the door most users start from.

::

    agent = Agent(ScriptedModel([...]), tools=[add], config=AgentConfig(max_tool_calls=10))
    async with agent.running() as session:
        session.send("What is 2 + 3?")
        await session.settled()
        print(session.state.messages)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
    Effect,
    InvalidInput,
    Phase,
    ReActCancelled,
    SessionStarted,
    ToolCallApproved,
    ToolCallDenied,
    UserMessageReceived,
    effects_at,
    initial_state,
    phase,
    transition,
)

from .._clock import Clock, SystemClock
from .._machine import DEFAULT_MAX_BACKLOG, Journal, Machine, MachineEvent
from .._model import Model
from .._tools import Tool, Toolbox
from ._context import DEFAULT_MODEL_TIMEOUT_MS
from ._ids import IdSource, RandomIds
from ._redact import Redactor
from ._runtime import AgentRuntime


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
    ) -> None:
        self.model = model
        self.secrets = Redactor(secrets).secrets  # checked now, where the developer passes them
        self.model_timeout_ms = model_timeout_ms
        self.toolbox = Toolbox(tools)
        self.config = config if config is not None else AgentConfig()
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.ids: IdSource = ids if ids is not None else RandomIds()
        self.session_id = session_id
        self.journal = journal
        self.initial = initial
        self.max_backlog = max_backlog

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Session]:
        """Run a session for the duration of the block; on exit every running effect is cancelled.

        A new session starts with ``session-started`` (config and tool
        definitions), applied on the event loop's next turn so that handlers
        subscribed at the top of the block see it; a resumed one (``initial``)
        reconciles from its state.
        """
        start = self.initial if self.initial is not None else initial_state()
        runtime = AgentRuntime(
            self.model,
            self.toolbox,
            self.clock,
            self.ids,
            floor=lambda: machine.current().timestamp,
            model_timeout_ms=self.model_timeout_ms,
            secrets=self.secrets,
        )
        # The reducer validates as it folds: an InvalidInput it raises is the rejection, so each
        # input is folded once (a separate `check` would fold it a second time).
        machine: Machine[AgentState, AgentInput, Effect] = Machine(
            start,
            transition,
            effects_at,
            runtime.run_effect,
            rejects=InvalidInput,
            journal=self.journal,
            follow_up=runtime.starts,
            max_backlog=self.max_backlog,
        )
        async with machine.running():
            if self.initial is None:
                # Dispatched once running, so subscribers added as the block starts see it too.
                started = SessionStarted(
                    timestamp=runtime.stamp(),
                    session_id=self.session_id or self.ids.new_id("session"),
                    config=self.config,
                    tools=self.toolbox.definitions(),
                )
                machine.dispatch(runtime.redactor.input(started))
            yield Session(machine, runtime)


MAX_MESSAGE_CHARS = 1_000_000
"""The longest user message :meth:`Session.send` accepts."""


def _turn_waits(state: AgentState) -> bool:
    return state.turn is None or phase(state) is Phase.AWAITING_APPROVAL


class Session:
    """A running session: send messages, decide on approvals, cancel a turn, observe.

    Every method dispatches an input stamped by the session's clock; it is
    applied on the event loop's next turn. An input the state refuses (e.g.
    approving a call that needs no approval) changes nothing and reaches
    subscribers as an ``input-rejected`` event with the
    :class:`~agent_core.Rejection`. Call the methods from the event loop's thread.

    When the store falls behind (more than ``Agent(max_backlog=...)`` inputs,
    1,000 by default, wait to be applied and made durable) every method that
    dispatches raises :class:`~effects.Backpressure` and sends nothing: a
    producer in a loop awaits :meth:`wait_for_room` before each input.
    """

    def __init__(self, machine: Machine[AgentState, AgentInput, Effect], runtime: AgentRuntime) -> None:
        self.machine = machine
        self._runtime = runtime

    @property
    def state(self) -> AgentState:
        """The current state (inputs dispatched but not yet applied are not in it)."""
        return self.machine.current()

    @property
    def phase(self) -> Phase:
        """The current phase: ``idle``, ``thinking``, ``acting``, ``awaiting-approval``..."""
        return phase(self.machine.current())

    @property
    def session_id(self) -> str:
        """The session's id (empty until ``session-started`` is applied)."""
        return self.machine.current().session_id

    def send(self, text: str) -> str:
        """Send a user message (``user-message-received``); returns its message id.

        Raises ``ValueError`` for a message longer than :data:`MAX_MESSAGE_CHARS`
        (nothing is sent): it would be stored, and sent to the model, whole.
        """
        if len(text) > MAX_MESSAGE_CHARS:
            raise ValueError(
                f"a user message may have at most {MAX_MESSAGE_CHARS:,} characters, got {len(text):,}; "
                "send a shorter message, or give the model a tool that reads the document"
            )
        message_id = self._runtime.new_message_id("user", self.machine.current())
        self.dispatch(UserMessageReceived(timestamp=self._runtime.stamp(), message_id=message_id, content=text))
        return message_id

    def approve(self, tool_call_id: str) -> None:
        """Approve a tool call awaiting approval (``tool-call-approved``): it runs next."""
        self.dispatch(ToolCallApproved(timestamp=self._runtime.stamp(), tool_call_id=tool_call_id))

    def deny(self, tool_call_id: str, reason: str = "") -> None:
        """Deny a tool call awaiting approval (``tool-call-denied``); the model sees ``reason``."""
        self.dispatch(ToolCallDenied(timestamp=self._runtime.stamp(), tool_call_id=tool_call_id, reason=reason))

    def cancel(self, reason: str = "") -> None:
        """Stop the current turn (``re-act-cancelled``): running tools are cancelled, open calls closed."""
        self.dispatch(ReActCancelled(timestamp=self._runtime.stamp(), reason=reason))

    def dispatch(self, inp: AgentInput) -> None:
        """Dispatch any input (stamp it with :meth:`now_ms` to keep timestamps in order).

        The agent's ``secrets`` in it are replaced by ``[redacted]`` first: the log is shared, so a
        secret a person types into a message is kept out of it like one a tool returns."""
        self.machine.dispatch(self._runtime.redactor.input(inp))

    def now_ms(self) -> int:
        """A timestamp for a new input: the clock's time, never earlier than the last one."""
        return self._runtime.stamp()

    async def wait_for_room(self) -> None:
        """Return once the session accepts another input (at once, unless the store is behind).

        Example: ``for text in texts: await session.wait_for_room(); session.send(text)``.
        """
        await self.machine.wait_for_room()

    async def settled(self) -> None:
        """Return when nothing can progress without outside input or the clock: a reply is done, a
        tool waits for approval, or only a timer (a retry backoff, the deadline) is left.

        For "wait until the model has answered", use :meth:`turn_done`: it also
        waits out retry backoffs and slow tools on a real clock.
        """
        await self.machine.settled()

    async def turn_done(self) -> AgentState:
        """Wait until no turn is open (the model answered, or the turn failed or was cancelled) or the
        turn waits for a person (``awaiting-approval``); return that state.

        ``state.last_outcome`` tells how the turn ended. Retry backoffs, the
        turn deadline and slow tools are waited out. If the session stops
        because of an error meanwhile, raises :class:`~effects.MachineStopped`.
        """
        return await self.machine.until(_turn_waits)

    def subscribe(self, handler: Callable[[MachineEvent], None]) -> Callable[[], None]:
        """Receive every event (the machine's timeline and ``text-delta``); returns the unsubscribe function."""
        return self.machine.subscribe(handler)
