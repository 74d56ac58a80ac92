"""Waiting on a running machine: :meth:`Machine.settled` and :meth:`Machine.until`, and the error that
stopped it, which every waiter is told."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel

from ._events import MachineStopped


class Waits:
    """The events waiters sleep on, woken when the machine goes quiet, applies a batch, or stops."""

    __slots__ = ("_applied", "_quiet", "failure")

    def __init__(self) -> None:
        self._quiet: anyio.Event | None = None  # set when the machine may be settled
        self._applied: anyio.Event | None = None  # set after the next batch
        self.failure: BaseException | None = None  # what stopped the machine, if an error did

    def fail(self, error: BaseException) -> None:
        """Record the error that is stopping the machine (the first one counts)."""
        if self.failure is None:
            self.failure = error

    def raise_if_failed(self, method: str) -> None:
        """Raise :class:`MachineStopped` (caused by the error) if an error stopped the machine."""
        if self.failure is not None:
            raise MachineStopped(
                f"Machine.{method}(): the machine stopped because of an error: {self.failure!r}"
            ) from self.failure

    async def settled(self, is_settled: Callable[[], bool], running: Callable[[], bool]) -> None:
        """Return when ``is_settled()`` holds across two scheduling passes, or the machine stopped."""
        while True:
            while not is_settled():
                if self._quiet is None:
                    self._quiet = anyio.Event()
                await self._quiet.wait()
                if not running():
                    self.raise_if_failed("settled")
                    return  # stopped meanwhile: nothing will progress any more
            # trio resumes the tasks woken in one pass in random order: two passes let them all run.
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            if is_settled():
                return

    async def until(self, holds: Callable[[], bool], running: Callable[[], bool], method: str = "until") -> None:
        """Return once ``holds()`` after some batch; raise if the machine stops first (naming ``Machine.method``)."""
        while not holds():
            if not running():
                self.raise_if_failed(method)
                raise RuntimeError(f"Machine.{method}(): the machine is not running, so the state will not change")
            if self._applied is None:
                self._applied = anyio.Event()
            await self._applied.wait()

    def quiet(self) -> None:
        """The machine may be settled: wake :meth:`settled` waiters to check."""
        if self._quiet is not None:
            self._quiet.set()
            self._quiet = None

    def waiting_for_quiet(self) -> bool:
        """Whether anyone waits in :meth:`settled`."""
        return self._quiet is not None

    def applied(self) -> None:
        """A batch went through: wake :meth:`until` waiters to check."""
        if self._applied is not None:
            self._applied.set()
            self._applied = None

    def stopped(self) -> None:
        """The machine stopped: wake everyone."""
        self.quiet()
        self.applied()
