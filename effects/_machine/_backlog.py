"""Back-pressure: a bound on the inputs from outside that wait to be applied and made durable.

A machine applies its queue as one batch and, with a journal that commits on
its own thread, waits for that batch to be durable before the next; inputs
dispatched meanwhile wait in its queue. A producer outside the machine
(``Machine.dispatch``, and through it ``Session.send``, ``approve``, ``deny``,
``cancel``, ``dispatch``) that dispatches faster than the store commits would
grow that queue without bound. So a machine's *backlog* (inputs queued, handed
over from another thread, or in the batch being committed) is bounded by
``max_backlog`` (default :data:`DEFAULT_MAX_BACKLOG`): over it, a dispatch from
outside raises :class:`Backpressure` and queues nothing, and
``await machine.wait_for_room()`` waits until one more is accepted.

Inputs effects dispatch are never refused: each effect dispatches a few inputs
per run, so they are bounded by the effects running; refusing one would lose a
result. The group writer's own queue holds at most one batch per machine.
"""

from __future__ import annotations

import threading

from ._events import Backpressure

DEFAULT_MAX_BACKLOG = 1_000
"""How many inputs a machine holds, not yet applied and durable, before a dispatch from outside is refused."""


class Backlog:
    """A machine's count of inputs not yet applied and durable, beyond its queue, and the bound on them all.

    ``committing`` is the size of the batch whose commit the machine waits
    for; ``crossing`` counts inputs dispatched from other threads that have not
    reached the queue yet (a call-soon in flight).
    """

    __slots__ = ("_lock", "committing", "crossing", "limit")

    def __init__(self, max_backlog: int | None) -> None:
        if max_backlog is not None and (
            not isinstance(max_backlog, int) or isinstance(max_backlog, bool) or max_backlog <= 0
        ):
            raise ValueError(f"Machine: expected a positive int or None for max_backlog, got {max_backlog!r}")
        self.limit = 2**63 if max_backlog is None else max_backlog
        self.committing = 0
        self.crossing = 0
        self._lock = threading.Lock()

    def size(self, queued: int) -> int:
        """The backlog, with ``queued`` inputs in the machine's queue."""
        return queued + self.committing + self.crossing

    def check(self, queued: int) -> None:
        """Raise :class:`Backpressure` if the backlog is full (on the loop's thread, before queueing one)."""
        backlog = self.size(queued)
        if backlog >= self.limit:
            raise Backpressure(backlog, self.limit)

    def set_out(self, queued: int) -> None:
        """One input sets out from another thread: :meth:`check`, then count it as crossing."""
        with self._lock:
            self.check(queued)
            self.crossing += 1

    def arrived(self) -> None:
        """An input set out from another thread reached the queue (on the loop's thread)."""
        with self._lock:
            self.crossing -= 1
