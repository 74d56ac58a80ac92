"""Delivery of events to subscribers. A subscriber that raises is a bug: the error propagates."""

from __future__ import annotations

from collections.abc import Callable

from ._events import MachineEvent

Handler = Callable[[MachineEvent], None]


class Subscribers:
    """The subscribed handlers, called synchronously in subscription order."""

    __slots__ = ("_handlers", "_next", "_snapshot")

    def __init__(self) -> None:
        self._handlers: dict[int, Handler] = {}
        self._snapshot: tuple[Handler, ...] = ()  # what publish iterates, so (un)subscribing mid-publish is safe
        self._next = 0

    def add(self, handler: Handler) -> Callable[[], None]:
        """Subscribe ``handler``; returns a function that unsubscribes it (calling it twice is harmless)."""
        token = self._next
        self._next += 1
        self._handlers[token] = handler
        self._snapshot = tuple(self._handlers.values())

        def unsubscribe() -> None:
            if self._handlers.pop(token, None) is not None:
                self._snapshot = tuple(self._handlers.values())

        return unsubscribe

    def __bool__(self) -> bool:
        """Whether anyone is subscribed."""
        return bool(self._snapshot)

    def publish(self, event: MachineEvent) -> None:
        """Call every handler with ``event``. A handler that raises stops the delivery: the error propagates
        to whoever published (the machine, which stops with it, or the effect that emitted)."""
        for handler in self._snapshot:
            try:
                handler(event)
            except Exception as error:
                error.add_note(f"raised by subscriber {handler!r} while handling {event.type}")
                raise
