"""What a journal knows of its commits: those handed over and not yet seen done, and the failure that stops it."""

from __future__ import annotations

from collections import deque
from contextlib import suppress

from .._machine import Pending

Commit = Pending | None
"""What handing a batch over returns: its :class:`~effects.PendingCommit` (a store with a writer), or ``None``."""


class Verdicts:
    """The verdicts of one journal's commits, read from the commits themselves (no callback to wait for).

    A store's writer settles a journal's batches in the order they were
    handed over, and refuses every batch after a failed one (it no longer
    continues the stored log); the journal's failure is the first batch's
    error, the cause of the rest.
    """

    __slots__ = ("failed", "inflight")

    def __init__(self) -> None:
        self.failed: BaseException | None = None
        self.inflight: deque[Pending] = deque()  # handed over, in order, not yet seen done

    def handed(self, done: Pending) -> Pending:
        """``done`` is the newest batch handed to the store's writer."""
        self.inflight.append(done)
        return done

    def failure(self) -> BaseException | None:
        """The first commit error among the batches seen done so far, or ``None``."""
        inflight = self.inflight
        while inflight and inflight[0].done():
            try:
                inflight.popleft().result()
            except Exception as error:  # its error; or a cancelled concurrent.futures.Future's: verdict unknown
                self.failed = self.failed or error
        return self.failed

    def settled(self) -> BaseException | None:
        """Block until every batch handed over is done; then :meth:`failure`."""
        for done in list(self.inflight):
            with suppress(Exception):  # kept by failure() below
                done.result()
        return self.failure()

    def fail(self, error: BaseException) -> None:
        """A batch written without a writer (a store that has no ``submit``) failed with ``error``."""
        self.failed = self.failed or error

    def wait(self, done: Commit) -> None:
        """Block until ``done`` is durable; its error is raised, and the first error of the journal's batches is
        kept as its failure."""
        if done is not None:
            try:
                done.result()
            except Exception as error:
                self.failure()  # the batches handed before it are settled too
                self.failed = self.failed or error
                raise
