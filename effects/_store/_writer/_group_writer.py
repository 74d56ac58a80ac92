"""``GroupWriter``: one thread per store that commits the writes of all sessions together, one fsync per group."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from ._pending_commit import PendingCommit, settle

J = TypeVar("J")  # a job: what one session's batch asks to write


class GroupWriter(Generic[J]):
    """Takes jobs from any thread and commits whatever is pending as one transaction, in submission order.

    While one group commits (and waits for its fsync) the next group gathers, so
    under load each fsync carries the batches of many sessions: the group commit
    of PostgreSQL and InnoDB. A job that fails (a :class:`ConcurrencyError`)
    fails alone; a commit that fails fails every job of its group. The thread
    starts with the first job and ends at :meth:`close`, after the writes
    already submitted are committed. ``grouping=False`` commits one write per
    transaction (the baseline group commit is measured against).
    """

    def __init__(
        self, commit: Callable[[Sequence[J]], list[BaseException | None]], name: str, *, grouping: bool = True
    ) -> None:
        self._commit = commit
        self._grouping = grouping
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[J, PendingCommit] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self.groups = 0  # transactions committed so far (the benchmarks report writes per commit)

    def submit(self, job: J) -> PendingCommit:
        """Queue ``job``; the :class:`PendingCommit` is done once its group is committed (or holds the error).

        Waits only for a :meth:`close` in progress, so no job is queued behind the thread's stop marker.
        """
        done = PendingCommit()
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._jobs.put((job, done))
        return done

    def close(self) -> None:
        """Commit what was submitted, then stop the thread (a later :meth:`submit` starts it again)."""
        with self._start:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._jobs.put(None)
                thread.join()

    def _run(self) -> None:
        while True:
            first = self._jobs.get()
            group = [] if first is None else [first]
            stop = first is None
            while not stop and self._grouping:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                stop = job is None
                if job is not None:
                    group.append(job)
            if group:
                self._write(group)
            if stop:
                return

    def _write(self, group: list[tuple[J, PendingCommit]]) -> None:
        errors: list[BaseException | None]
        try:
            errors = self._commit([job for job, _ in group])
            if len(errors) != len(group):
                raise RuntimeError(f"the store's commit answered {len(errors)} verdicts for {len(group)} writes")
        except BaseException as failure:  # the commit itself failed: every batch of the group fails with it
            errors = [failure] * len(group)
        self.groups += 1
        settle([done for _, done in group], errors)  # each event loop waiting on the group is woken once
