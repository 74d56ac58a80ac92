"""A batch whose commit fails is not applied: the machine stops with the store's error and its state is the one
before the batch, the state the journal holds, whether the loop was waiting for the commit or the machine was
stopping with the commit in flight."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future

import anyio
import pytest

from effects import Machine, StoreUnavailable

from ._counter import Counter, Inc, Input, check, effects_at, runner, transition

pytestmark = pytest.mark.anyio

REFUSED = StoreUnavailable("the store refused the batch")


class FailsWhenAsked(Future[None]):
    """A commit still in flight until someone asks for its verdict: then it fails."""

    def result(self, timeout: float | None = None) -> None:
        if not self.done():
            self.set_exception(REFUSED)
        return super().result(timeout)


class RefusingJournal:
    """Commits every batch at once, but the ones after ``refuse_from`` fail (now, or when asked)."""

    def __init__(self, refuse_from: int, *, when_asked: bool) -> None:
        self.committed: list[Input] = []
        self.refuse_from = refuse_from
        self.when_asked = when_asked

    def append(self, inputs: Sequence[Input], states: Sequence[Counter], /) -> None:
        self.committed.extend(inputs)

    def submit(self, inputs: Sequence[Input], states: Sequence[Counter], /) -> Future[None]:
        if len(self.committed) < self.refuse_from:
            self.committed.extend(inputs)
            done: Future[None] = Future()
            done.set_result(None)
            return done
        if self.when_asked:
            return FailsWhenAsked()
        failed: Future[None] = Future()
        failed.set_exception(REFUSED)
        return failed


@pytest.mark.parametrize("when_asked", [False, True], ids=["while-waiting", "while-stopping"])
async def test_a_failed_commit_leaves_the_state_before_its_batch(when_asked: bool) -> None:
    journal = RefusingJournal(1, when_asked=when_asked)
    m = Machine(Counter(), transition, effects_at, runner({}), check=check, journal=journal)
    with pytest.raises(StoreUnavailable):
        async with m.running():
            m.dispatch(Inc())
            await m.settled()
            m.dispatch(Inc(5))
            await anyio.wait_all_tasks_blocked()  # the batch is applied and its commit failed, or in flight
            if when_asked:  # the block ends now, the commit in flight: the stop asks for the verdict
                assert m.current() == Counter(count=6)
            else:
                await m.settled()
    assert journal.committed == [Inc()]
    assert m.current() == Counter(count=1)
