"""Delivery of events to subscribers, where one subscriber raising never breaks the others."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ._events import MachineEvent, SubscriberFailed

Handler = Callable[[MachineEvent], None]

logger = logging.getLogger("effects.machine")


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
        """Call every handler with ``event``; a handler that raises is reported, not propagated."""
        for handler in self._snapshot:
            try:
                handler(event)
            except Exception as error:
                self._report(handler, event, error)

    def _report(self, failed: Handler, event: MachineEvent, error: Exception) -> None:
        logger.error("subscriber %r raised while handling %s", failed, event.type, exc_info=error)
        if isinstance(event, SubscriberFailed):
            return  # a failure while handling a failure report is only logged: no cascade
        report = SubscriberFailed(handler=failed, event=event, error=error)
        for handler in self._snapshot:
            if handler is failed:
                continue
            try:
                handler(report)
            except Exception as second:
                logger.error("subscriber %r raised while handling %s", handler, report.type, exc_info=second)
