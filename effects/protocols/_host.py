"""``SessionHost``: runs the sessions of one agent over one store, for the protocol endpoints to drive.

A session is opened (from the store, or new) the first time a request names
it, runs in the host's task group, and stays open while the host runs (the
least recently used idle ones are closed past ``max_sessions``). Everything a
session accepts is committed to the store first, as with
:func:`effects.open_session` (which the host uses), so a host that stops and
starts again resumes every session from its log.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, cast

import anyio
import anyio.abc
import msgspec

from agent_core import AgentConfig, AgentInput, AgentState, tag_of
from effects import (
    EventStore,
    IdSource,
    InputReceived,
    InputRejected,
    MachineEvent,
    Model,
    Session,
    StateUpdated,
    TextDelta,
    Tool,
    open_session,
    session_exists,
)

from ._sessions import POLL_SECONDS, Make, Refused, Written, checked, unknown

logger = logging.getLogger("effects.protocols")

DEFAULT_MAX_SESSIONS = 100
"""How many sessions a host keeps open; past it the least recently used idle ones are closed."""

MAX_SESSION_ID_CHARS = 200
"""The longest session id a request may name."""


class _Live:
    """One open session: its handle, news for readers, and the text it is streaming."""

    def __init__(self, session: Session, stop: anyio.Event) -> None:
        self.session = session
        self.stop = stop
        self.version = 0
        self.changed = anyio.Event()
        self.message_id = ""
        self.text = ""
        self.failed: BaseException | None = None
        self.readers = 0

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, TextDelta):
            if event.message_id != self.message_id:
                self.message_id, self.text = event.message_id, ""
            self.text += event.text
        elif isinstance(event, StateUpdated) and self.message_id:
            turn = event.state.turn
            if turn is None or turn.streaming_message_id != self.message_id:
                self.message_id, self.text = "", ""
        self.poke()

    def poke(self) -> None:
        self.version += 1
        self.changed.set()
        self.changed = anyio.Event()


class SessionHost:
    """The sessions of one agent (a model, tools, a configuration) over one store, run in this process.

    Use it as an async context manager; it closes every session it opened (each
    saves a snapshot) when the block ends. The protocol apps
    (:func:`ag_ui_app`, :func:`a2a_app`, :func:`mcp_server`) drive it: they
    start sessions, send messages and decisions, and read the logs. ``config``
    applies to new sessions; a stored session keeps the configuration its log
    started with. ``clock``, ``ids``, ``durability`` and ``secrets`` are passed
    to :func:`effects.open_session`.
    """

    def __init__(
        self,
        store: EventStore,
        model: Model,
        *,
        tools: Iterable[Tool[..., Any] | Callable[..., Any]] = (),
        config: AgentConfig | None = None,
        ids: IdSource | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        **session_options: Any,
    ) -> None:
        self._store = store
        self._model = model
        self._tools = tuple(tools)
        self._config = config
        self._ids = ids
        self._options = session_options
        self._max = max_sessions
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._opening: dict[str, anyio.Event] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._stack: AsyncExitStack | None = None

    @property
    def store(self) -> EventStore:
        """The store the sessions are logged in."""
        return self._store

    @property
    def creates(self) -> bool:
        """True: the host starts new sessions."""
        return True

    async def __aenter__(self) -> SessionHost:
        async with AsyncExitStack() as stack:
            self._group = await stack.enter_async_context(anyio.create_task_group())
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> bool | None:
        for live in self._live.values():
            live.stop.set()
        stack, self._stack, self._group = self._stack, None, None
        assert stack is not None
        try:
            return await stack.__aexit__(kind, error, traceback)
        except BaseExceptionGroup as group:  # the task group wraps the block's own error: raise it as it came
            if len(group.exceptions) == 1 and not isinstance(group.exceptions[0], BaseExceptionGroup):
                raise group.exceptions[0] from None
            raise

    def running(self, session_id: str) -> Session | None:
        """The open session ``session_id``, or ``None``."""
        live = self._live.get(session_id)
        return live.session if live is not None else None

    async def open(self, session_id: str, *, create: bool = True) -> Session:
        """The running session ``session_id``, opened from the store (or started, with ``create``) if needed.

        Raises :class:`Refused` (404) for an unknown session without ``create``.
        """
        live = await self._open(session_id, create)
        return live.session

    async def _open(self, session_id: str, create: bool) -> _Live:
        while session_id in self._opening:  # another request is opening it
            await self._opening[session_id].wait()
        live = self._live.get(session_id)
        if live is not None:
            if live.failed is not None:
                raise self._reported(session_id, live.failed)
            self._live.move_to_end(session_id)
            return live
        if self._group is None:
            raise RuntimeError("use the SessionHost in `async with` before serving requests")
        _check_id(session_id)
        exists = await anyio.to_thread.run_sync(session_exists, self._store, session_id)
        if not exists and not create:
            raise unknown(session_id)
        opened = self._opening[session_id] = anyio.Event()
        try:
            live = cast(_Live, await self._group.start(self._run, session_id))
        finally:
            del self._opening[session_id]
            opened.set()
        self._close_idle()
        return live

    async def _run(self, session_id: str, *, task_status: anyio.abc.TaskStatus[_Live]) -> None:
        stop = anyio.Event()
        options = {"config": self._config, "ids": self._ids, **self._options}
        live: _Live | None = None
        try:
            async with open_session(self._store, session_id, self._model, tools=self._tools, **options) as session:
                live = _Live(session, stop)
                session.subscribe(live)
                self._live[session_id] = live
                if not session.state.started:
                    await session.machine.until(lambda state: state.started)
                task_status.started(live)
                await stop.wait()
        except Exception as error:  # a bug in an effect, a store that failed: the session stops, visibly
            if live is None:
                raise
            logger.error("session %r stopped: %s: %s", session_id, type(error).__name__, error, exc_info=error)
            live.failed = error
            live.poke()
            return
        finally:
            if live is not None and live.failed is None:
                self._live.pop(session_id, None)
                live.poke()

    def _close_idle(self) -> None:
        """Close the least recently used sessions past ``max_sessions`` that have no turn open and no reader."""
        excess = len(self._live) - self._max
        for live in list(self._live.values()):
            if excess <= 0:
                return
            if live.readers == 0 and live.failed is None and live.session.state.turn is None:
                live.stop.set()
                excess -= 1

    async def submit(self, session_id: str, make: Make, *, create: bool = False) -> Written:
        """Build inputs from the session's state, check them, dispatch them, and wait until the session applied
        them (:class:`Refused`, nothing written, if the reducer refuses one)."""
        live = await self._open(session_id, create)
        session = live.session
        state = session.state
        inputs = list(make(state, session.now_ms()))
        checked(state, inputs)
        if not inputs:
            return Written(state.step, ())
        outcome = _Outcome(inputs)
        unsubscribe = session.subscribe(outcome)
        try:
            for inp in inputs:
                session.dispatch(inp)
            while not outcome.done:
                await live.changed.wait()
                if live.failed is not None:
                    raise self._reported(session_id, live.failed)
        finally:
            unsubscribe()
        if outcome.refused:
            raise Refused(outcome.refused, code="refused")
        return Written(state.step, inputs)

    def _reported(self, session_id: str, error: BaseException) -> Refused:
        """The refusal saying the session stopped; said once: the next request opens it again from its log."""
        self._live.pop(session_id, None)
        return _stopped(session_id, error)

    async def state(self, session_id: str) -> AgentState:
        """The session's current state (opened from the store if it is not running)."""
        live = await self._open(session_id, False)
        return live.session.state

    def version(self, session_id: str) -> int:
        """Changes with every state and every streamed chunk of text of the session."""
        live = self._live.get(session_id)
        return live.version if live is not None else 0

    async def wait(self, session_id: str, version: int, timeout: float = POLL_SECONDS) -> None:
        """Return once the session has news after ``version``, or after ``timeout`` seconds."""
        live = self._live.get(session_id)
        if live is None:
            await anyio.sleep(timeout)
            return
        live.readers += 1
        try:
            with anyio.move_on_after(timeout):
                while live.version == version:
                    await live.changed.wait()
        finally:
            live.readers -= 1

    def live_text(self, session_id: str) -> tuple[str, str]:
        """The message the session streams now and its text so far."""
        live = self._live.get(session_id)
        return (live.message_id, live.text) if live is not None else ("", "")


class _Outcome:
    """Waits until every input of a submission is applied (``input-received``) or one is refused."""

    def __init__(self, inputs: list[AgentInput]) -> None:
        self.waiting = [_identity(inp) for inp in inputs]
        self.done = False
        self.refused = ""

    def __call__(self, event: MachineEvent) -> None:
        if (
            isinstance(event, InputReceived | InputRejected)
            and self.waiting
            and _identity(event.input) == self.waiting[0]
        ):
            self.waiting.pop(0)
            if isinstance(event, InputRejected):
                self.refused = str(getattr(event.rejection, "message", event.rejection))
                self.waiting.clear()
            self.done = not self.waiting


def _identity(inp: AgentInput) -> tuple[str, int, bytes]:
    """An input's tag, time and fields apart from text a redactor may change (enough to find it among others)."""
    fields = {k: v for k, v in msgspec.structs.asdict(inp).items() if k.endswith("_id") or k == "action"}
    return tag_of(inp), inp.timestamp, msgspec.json.encode(fields)


def _stopped(session_id: str, error: BaseException) -> Refused:
    return Refused(
        f"session {session_id!r} stopped: {type(error).__name__}: {error}; its log is intact, and the next "
        "request resumes it from there",
        code="session-stopped",
        status=500,
    )


def _check_id(session_id: str) -> None:
    if not session_id or len(session_id) > MAX_SESSION_ID_CHARS or not session_id.isprintable():
        raise Refused(
            f"expected a session id of 1 to {MAX_SESSION_ID_CHARS} printable characters, got {session_id[:60]!r}",
            code="bad-session-id",
            status=400,
        )
