"""``Session``: the handle on a running session that ``Agent.running()`` yields."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from agent_core import (
    AgentInput,
    AgentState,
    Decision,
    Effect,
    PendingApproval,
    Phase,
    ReActCancelled,
    ToolCallInputProvided,
    UserMessageReceived,
    decision_inputs,
    pending_approvals,
    phase,
    replace_surrogates,
)

from .._machine import Machine, MachineEvent
from ._output import loaded_output
from ._runtime import AgentRuntime

T = TypeVar("T")

MAX_MESSAGE_CHARS = 1_000_000
"""The longest user message :meth:`Session.send` accepts."""


class SessionStopped(RuntimeError):
    """An input was given to a session that no longer runs: nothing was sent, applied or logged.

    The ``async with agent.running()`` (or ``open_session``) block ended, or an
    error stopped the session (it is the ``__cause__``). Send inputs inside the
    block; to go on with a durable session, open it again with ``open_session``.
    """


async def _nothing_left() -> None:
    """No child is left waiting: a session without agent tools."""


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

    def __init__(
        self,
        machine: Machine[AgentState, AgentInput, Effect],
        runtime: AgentRuntime,
        children_left_waiting: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.machine = machine
        self._runtime = runtime
        # Ends the turns of the children that closed calls left waiting for a decision, noted so far.
        self._end_children_left_waiting = children_left_waiting or _nothing_left
        self.stopped = False  # set once the block of ``Agent.running()`` that made it ended

    def _refuse_if_stopped(self, what: str) -> None:
        """Raise :class:`SessionStopped` if inputs can no longer reach the session (``what``: the input refused)."""
        failure = self.machine.failure
        if not self.stopped and failure is None:
            return
        name = self.machine.current().session_id
        session = f"session {name!r}" if name else "the session"
        if failure is not None:
            why = f"{session} stopped because of an error ({type(failure).__name__}: {failure})"
        else:
            why = f"{session} has stopped: the `async with agent.running()` (or `open_session`) block ended"
        raise SessionStopped(
            f"{why}; {what} was not sent, and nothing was applied or logged: send inputs inside the block, "
            "or open the session again (open_session) to go on with it"
        ) from failure

    @property
    def state(self) -> AgentState:
        """The current state (inputs dispatched but not yet applied are not in it).

        With a journal it may include a batch whose commit is still in flight
        (under the default ``durability="input"`` no effect starts and no
        subscriber hears of that batch until it is durable); if that commit
        fails, the state goes back to before the batch.
        """
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
        (nothing is sent): it would be stored, and sent to the model, whole. Lone
        surrogates (a file name that is not UTF-8, bytes decoded with
        ``surrogateescape``) become U+FFFD, as in every text from outside: no log can hold them.
        """
        self._refuse_if_stopped("the message")
        if len(text) > MAX_MESSAGE_CHARS:
            raise ValueError(
                f"a user message may have at most {MAX_MESSAGE_CHARS:,} characters, got {len(text):,}; "
                "send a shorter message, or give the model a tool that reads the document"
            )
        message_id = self._runtime.new_message_id("user", self.machine.current())
        text = replace_surrogates(text)
        self.dispatch(UserMessageReceived(timestamp=self._runtime.stamp(), message_id=message_id, content=text))
        return message_id

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The calls waiting for a decision in this session and in its child sessions, at any depth.

        Each has an ``address`` to pass to :meth:`approve` or :meth:`deny`, the
        ``path`` of session ids from this session down to the one holding the call,
        and the call's id, tool and arguments (see :class:`~agent_core.PendingApproval`).
        """
        return pending_approvals(self.machine.current())

    def approve(self, tool_call_id: str) -> None:
        """Approve a tool call awaiting approval (``tool-call-approved``): it runs next.

        ``tool_call_id`` may also be the address of a call waiting in a child
        session (``<child session id>/<tool call id>``, from :attr:`pending_approvals`):
        the decision is logged here as the answer to the call that runs the child,
        which passes it on to the child session.
        """
        self._refuse_if_stopped(f"the approval of tool call {tool_call_id!r}")
        self._decide({tool_call_id: Decision(approve=True)})

    def deny(self, tool_call_id: str, reason: str = "") -> None:
        """Deny a tool call awaiting approval (``tool-call-denied``); the model sees ``reason``.

        As with :meth:`approve`, ``tool_call_id`` may be the address of a child session's call.
        """
        self._refuse_if_stopped(f"the denial of tool call {tool_call_id!r}")
        self._decide({tool_call_id: Decision(approve=False, reason=replace_surrogates(reason))})

    def decide(self, decisions: Mapping[str, bool | str]) -> None:
        """Decide on several waiting calls at once: address -> ``True`` to approve, or the reason of a denial (``False``: a denial without one).

        Decisions on calls of one child session reach it together (one
        ``tool-call-input-provided``), where separate :meth:`approve` calls would
        find the child's call already answered by the first.
        """
        self._refuse_if_stopped(f"the decisions on tool calls {', '.join(map(repr, decisions))}")
        self._decide(
            {
                address: Decision(approve=True)
                if decision is True
                else Decision(approve=False, reason=replace_surrogates(decision) if isinstance(decision, str) else "")
                for address, decision in decisions.items()
            }
        )

    def _decide(self, decisions: Mapping[str, Decision]) -> None:
        for inp in decision_inputs(self.machine.current(), decisions, self._runtime.stamp()):
            self.dispatch(inp)

    def answer(self, tool_call_id: str, responses: Mapping[str, Any]) -> None:
        """Answer the questions a tool call asked (``tool-call-input-provided``): the call runs again with them.

        ``responses`` maps each question's key (from the call's ``input_requests``)
        to its answer, in the protocol's shape (for MCP, ``{"action": "accept",
        "content": {...}}``, or ``{"action": "decline"}``). Raises ``ValueError``
        (nothing sent) for answers that are not JSON.
        """
        try:
            text = json.dumps(dict(responses), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"expected answers that are JSON values, key -> answer; {error}") from None
        text = replace_surrogates(text)
        inp = ToolCallInputProvided(timestamp=self._runtime.stamp(), tool_call_id=tool_call_id, responses=text)
        self.dispatch(inp)

    def cancel(self, reason: str = "") -> None:
        """Stop the current turn (``re-act-cancelled``): running tools are cancelled, open calls closed."""
        self._refuse_if_stopped("the cancel")
        self.dispatch(ReActCancelled(timestamp=self._runtime.stamp(), reason=replace_surrogates(reason)))

    def dispatch(self, inp: AgentInput) -> None:
        """Dispatch any input (stamp it with :meth:`now_ms` to keep timestamps in order).

        The agent's ``secrets`` in it are replaced by ``[redacted]`` first: the log is shared, so a
        secret a person types into a message is kept out of it like one a tool returns."""
        self._refuse_if_stopped(f"the {type(inp).__struct_config__.tag} input")
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

    def output(self, output_type: type[T]) -> T:
        """The last completed turn's structured answer (``state.last_outcome.output``) as ``output_type``.

        Raises :class:`~effects.NoOutput` when the last turn failed (e.g.
        ``invalid-output`` after its retries), was cancelled, is still open, or
        when the session asks for no output type.
        """
        return loaded_output(self.machine.current(), output_type)

    async def turn_output(self, output_type: type[T]) -> T:
        """Wait for the turn to end (:meth:`turn_done`), then return its structured answer as ``output_type``
        (see :meth:`output`)."""
        return loaded_output(await self.turn_done(), output_type)

    def subscribe(self, handler: Callable[[MachineEvent], None]) -> Callable[[], None]:
        """Receive every event (the machine's timeline and ``text-delta``); returns the unsubscribe function.

        The events of the child sessions its agent tools run (and of theirs) come too, each wrapped in a
        :class:`~effects.ChildEvent` that names the child's path in the tree; the session's own are not wrapped."""
        return self.machine.subscribe(handler)
