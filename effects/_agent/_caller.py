"""The session whose tool call is running: what a tool that starts a child session needs to know.

``call_tool`` sets it around each call, on the effect's own task (and so for
every task the tool starts): a tool reads it with :func:`calling_session`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from .._store import EventStore


@dataclass(frozen=True)
class Caller:
    """The calling session's id, the id of the root of its tree, the store its log is kept in (``None``:
    a session without a store), and whether the call is still wanted: ``open()`` is false once the calling
    session closed the call (its turn was cancelled, or ended), or the session that called *it* closed its own.
    ``depth`` is the calling session's depth in its tree (0: a top-level session)."""

    session_id: str
    root_session_id: str
    store: EventStore | None
    open: Callable[[], bool]
    depth: int = 0


_CALLER: ContextVar[Caller | None] = ContextVar("effects.calling_session", default=None)


@contextmanager
def calling(caller: Caller) -> Iterator[None]:
    """``caller`` is the calling session while the block runs."""
    token = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(token)


def calling_session() -> Caller | None:
    """The session whose tool call is running here; ``None`` outside a tool call."""
    return _CALLER.get()
