"""``PendingCommit``: a batch handed to a writer thread, done once durable; the writer settles a whole group at once.

A ``concurrent.futures.Future`` per batch costs a condition and a lock, and
each done-callback that wakes an event loop costs a self-pipe write and a
wake-up. A writer that commits hundreds of batches per transaction settles
them with :func:`settle` instead: each batch's verdict is recorded before
anyone is told, plain callbacks run, and the callbacks bound for an event
loop (:class:`OnLoop`) go to that loop in one call per group.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from ..._machine import OnLoop

logger = logging.getLogger("effects.machine")

_MAKING_WAITER = threading.Lock()  # two threads blocking on one commit share one event


class PendingCommit:
    """A batch handed to a store's writer: done once it is durable, or holding the error that kept it out.

    It answers as a ``concurrent.futures.Future`` does (``done``, ``result``,
    ``exception``, ``add_done_callback``), without a lock of its own: a thread
    that blocks in ``result`` gets an event made for it. A commit in flight
    cannot be called back: :meth:`cancel` returns ``False`` and the verdict
    always arrives. Callbacks run on the writer's thread, or at once on the
    caller's when the verdict is already in.
    """

    __slots__ = ("_callbacks", "_done", "_error", "_waiter")

    def __init__(self) -> None:
        self._done = False
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[PendingCommit], object]] = []
        self._waiter: threading.Event | None = None

    def __repr__(self) -> str:
        verdict = "pending" if not self._done else "committed" if self._error is None else f"failed: {self._error!r}"
        return f"<PendingCommit {verdict}>"

    def done(self) -> bool:
        """Whether the verdict is in (committed, or failed)."""
        return self._done

    def cancelled(self) -> bool:
        """Always ``False``: a commit is never called back."""
        return False

    def cancel(self) -> bool:
        """Always ``False`` (as for a running ``Future``): the writer commits the batch or fails it regardless."""
        return False

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The error that kept the batch out, or ``None`` once it is durable; waits up to ``timeout`` seconds.

        Raises ``TimeoutError`` when the verdict is not in by then.
        """
        if not self._done:
            self._block(timeout)
        return self._error

    def result(self, timeout: float | None = None) -> None:
        """Return once the batch is durable; raise the error that kept it out (see :meth:`exception`)."""
        error = self.exception(timeout)
        if error is not None:
            raise error

    def add_done_callback(self, fn: Callable[[PendingCommit], object], /) -> None:
        """Call ``fn(self)`` once the verdict is in: from the writer's thread, or now if it is in already."""
        self._callbacks.append(fn)
        if self._done:  # the writer may have drained the list before the append: drain what is left here
            self._run_callbacks(None)

    def _block(self, timeout: float | None) -> None:
        with _MAKING_WAITER:
            if self._waiter is None:
                self._waiter = threading.Event()
        # The writer marks the commit done before it looks for a waiter: one of the two sees the other.
        if not self._done and not self._waiter.wait(timeout):
            raise TimeoutError(f"the commit was not done within {timeout} s; it is still in flight")

    def _run_callbacks(self, wakes: dict[Callable[..., object], list[Callable[[], object]]] | None) -> None:
        callbacks = self._callbacks
        while callbacks:
            try:
                fn = callbacks.pop(0)  # atomic: a callback another thread drains runs there, once
            except IndexError:
                return
            if wakes is not None and type(fn) is OnLoop:
                wakes.setdefault(fn.schedule, []).append(fn.fn)
                continue
            try:
                fn(self)
            except Exception:
                logger.exception("a done-callback of %r raised", self)


def settle(commits: Sequence[PendingCommit], errors: Sequence[BaseException | None]) -> None:
    """Give each commit its verdict (``None``: durable), run the callbacks, and wake each event loop once.

    Every verdict of the group is recorded before any callback runs, so
    whoever wakes reads a settled group.
    """
    for commit, error in zip(commits, errors, strict=True):
        commit._error = error
        commit._done = True
    wakes: dict[Callable[..., object], list[Callable[[], object]]] = {}
    for commit in commits:
        commit._run_callbacks(wakes)
        if commit._waiter is not None:
            commit._waiter.set()
    for schedule, fns in wakes.items():
        try:
            schedule(_run_all, fns)
        except Exception:  # such as an event loop closed meanwhile: nobody is left there to wake
            logger.exception("could not wake the event loop of %d commit waiters", len(fns))


def _run_all(fns: list[Callable[[], object]]) -> None:
    """Run every callback; the first error is raised after the others ran (the event loop reports it)."""
    first: Exception | None = None
    for fn in fns:
        try:
            fn()
        except Exception as error:
            first = first or error
    if first is not None:
        raise first
