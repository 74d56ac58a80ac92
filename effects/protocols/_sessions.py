"""What a protocol endpoint needs from the sessions it serves: their logs, a way to add inputs, and news.

Two kinds of ``Sessions``: a :class:`~effects.protocols.SessionHost` runs the
sessions of one agent itself (a message sent through a protocol is answered in
this process, and streamed text is seen as it comes); :class:`StoredSessions`
only has a store (the viewer's ``agent-core ui``): inputs are appended to the
log with the expected length, for a worker that follows the store
(:func:`effects.follow_store`) to pick up. Either way the log in the store is
what every endpoint reads, so a stream served live and one replayed later are
made of the same records.

Inputs are built from the session's current state by the caller (``make``),
checked by folding them through the reducer first, and written all or nothing:
a request the reducer refuses writes nothing (:class:`Refused`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

import anyio
import anyio.to_thread

from agent_core import AgentInput, AgentState, InvalidInput, transition
from effects import ConcurrencyError, EventStore, SessionJournal, session_exists

Make = Callable[[AgentState, int], Sequence[AgentInput]]
"""Builds the inputs of a request from the session's current state and a timestamp for them."""

POLL_SECONDS = 0.5
"""How often a reader looks at the store when nothing tells it of news (a session no one here runs)."""


class Refused(Exception):
    """A request that cannot be served; nothing was written. ``status`` is the HTTP status it maps to,
    ``code`` a short machine-readable reason."""

    def __init__(self, message: str, *, code: str = "refused", status: int = 409) -> None:
        super().__init__(message)
        self.message, self.code, self.status = message, code, status


class Sessions(Protocol):
    """The sessions a protocol endpoint serves (see the module docstring)."""

    @property
    def store(self) -> EventStore:
        """The store every endpoint reads the logs from."""
        ...

    @property
    def creates(self) -> bool:
        """Whether :meth:`submit` may start a new session (only a host running an agent can)."""
        ...

    async def submit(self, session_id: str, make: Make, *, create: bool = False) -> Written:
        """Build inputs from the current state, check them, and write them all, or raise :class:`Refused`."""
        ...

    async def state(self, session_id: str) -> AgentState:
        """The session's current state (:class:`Refused` with status 404 for an unknown session)."""
        ...

    def version(self, session_id: str) -> int:
        """A number that changes whenever the session has news (a record, streamed text)."""
        ...

    async def wait(self, session_id: str, version: int, timeout: float = POLL_SECONDS) -> None:
        """Return once :meth:`version` differs from ``version``, or after ``timeout`` seconds."""
        ...

    def live_text(self, session_id: str) -> tuple[str, str]:
        """The message being streamed now and its text so far (``("", "")`` when none is seen here)."""
        ...


class Written:
    """The log's length before a submission, and the inputs written."""

    __slots__ = ("inputs", "length")

    def __init__(self, length: int, inputs: Sequence[AgentInput]) -> None:
        self.length, self.inputs = length, tuple(inputs)


def checked(state: AgentState, inputs: Sequence[AgentInput]) -> AgentState:
    """Fold ``inputs`` over ``state`` through the reducer: the state after them, or :class:`Refused` with the
    reducer's explanation for the first one it refuses."""
    for inp in inputs:
        try:
            state = transition(state, inp)
        except InvalidInput as error:
            raise Refused(error.rejection.message, code=error.rejection.code) from None
    return state


def unknown(session_id: str) -> Refused:
    """The refusal for a session the store does not hold."""
    return Refused(
        f"no session {session_id!r}; expected the id of a session of this server", code="not-found", status=404
    )


class StoredSessions:
    """Sessions of a store that no agent runs here: inputs are appended for a worker following the store.

    A message or a decision is appended with the session's expected length, as
    :func:`effects.decide` does: if the session wrote in between, nothing is
    written and the request is refused (ask again). Readers look at the store
    every :data:`POLL_SECONDS` (it may be written by another process).
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store

    @property
    def store(self) -> EventStore:
        """The store."""
        return self._store

    @property
    def creates(self) -> bool:
        """False: no agent runs here to start a session."""
        return False

    async def submit(self, session_id: str, make: Make, *, create: bool = False) -> Written:
        """Append the inputs ``make`` builds, checked against the stored state (see the class)."""
        return await anyio.to_thread.run_sync(self._append, session_id, make, create)

    def _append(self, session_id: str, make: Make, create: bool) -> Written:
        if not session_exists(self._store, session_id):
            if create:
                raise Refused(
                    f"no session {session_id!r}, and this server runs no agent to start one; expected the id of "
                    "a session in its store (start sessions with a worker)",
                    code="not-found",
                    status=404,
                )
            raise unknown(session_id)
        journal = SessionJournal.open(self._store, session_id)
        state = journal.state
        inputs = make(state, max(int(time.time() * 1000), state.timestamp))
        checked(state, inputs)
        length = state.step
        if inputs:
            try:
                journal.append(list(inputs))
            except ConcurrencyError as error:
                raise Refused(f"{error}; send the request again", code="conflict") from None
        return Written(length, inputs)

    async def state(self, session_id: str) -> AgentState:
        """The stored state."""

        def load() -> AgentState:
            if not session_exists(self._store, session_id):
                raise unknown(session_id)
            return SessionJournal.open(self._store, session_id).state

        return await anyio.to_thread.run_sync(load)

    def version(self, session_id: str) -> int:
        """Always 0: a reader of a store looks at it again after its timeout."""
        return 0

    async def wait(self, session_id: str, version: int, timeout: float = POLL_SECONDS) -> None:
        """Sleep ``timeout`` seconds (the store is looked at again after)."""
        await anyio.sleep(timeout)

    def live_text(self, session_id: str) -> tuple[str, str]:
        """Nothing streams here."""
        return "", ""
