"""Passing a child session's events up to its caller's subscribers, each wrapped with its path in the tree."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .._machine import MachineEvent
from ._events import ChildEvent, SessionClosed, SessionOpened
from ._session_handle import Session


def as_child_event(session_id: str, event: MachineEvent) -> ChildEvent:
    """``event`` of the child session ``session_id`` as its caller publishes it: the child's id first in the path."""
    if isinstance(event, ChildEvent):  # from a grandchild: one path, root side first, never nested wrappers
        return ChildEvent(path=(session_id, *event.path), event=event.event)
    return ChildEvent(path=(session_id,), event=event)


@contextmanager
def forwarded(session: Session, session_id: str, publish: Callable[[MachineEvent], None]) -> Iterator[None]:
    """While the block runs, every event of the child ``session`` goes to ``publish`` as a :class:`ChildEvent`,
    between a :class:`SessionOpened` and a :class:`SessionClosed`.

    An error ``publish`` raises (a subscriber of the caller) is raised in the
    child's machine, which stops: the calling side reports it (see ``call_tool``).
    """
    publish(as_child_event(session_id, SessionOpened(state=session.state)))
    unsubscribe = session.subscribe(lambda event: publish(as_child_event(session_id, event)))
    try:
        yield
    finally:
        unsubscribe()
        publish(as_child_event(session_id, SessionClosed(state=session.state)))
