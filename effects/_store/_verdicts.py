"""What a journal knows of its commits: the newest one handed over, and the failure that stops the journal."""

from __future__ import annotations

from .._machine._pending import Pending

Commit = Pending | None
"""What handing a batch over returns: its :class:`~effects.PendingCommit` (a store with a writer), or ``None``."""


class Verdicts:
    """The verdicts of one journal's commits, read from the commits themselves (no callback to wait for).

    A batch after a failed one fails too (it no longer continues the stored
    log), so the newest batch handed over tells whether the journal may go on.
    """

    __slots__ = ("failed", "last")

    def __init__(self) -> None:
        self.failed: BaseException | None = None
        self.last: Pending | None = None

    def handed(self, done: Pending) -> Pending:
        """``done`` is the newest batch handed to the store's writer."""
        self.last = done
        return done

    def failure(self) -> BaseException | None:
        """The first commit error seen (the newest batch's, once it is done), or ``None``."""
        last = self.last
        if last is not None and last.done():
            self.last = None
            try:
                last.result()
            except Exception as error:  # its error; or a cancelled concurrent.futures.Future's: verdict unknown
                self.failed = self.failed or error
        return self.failed

    def wait(self, done: Commit) -> None:
        """Block until ``done`` is durable; its error is raised, and kept as the journal's failure."""
        if done is not None:
            try:
                done.result()
            except Exception as error:
                self.failed = self.failed or error
                raise
