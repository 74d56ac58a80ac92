"""What a machine asks of its host (controllers that run effects, a journal for durability) and what it
hands each running effect (a :class:`Dispatch`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

I = TypeVar("I")  # noqa: E741 - the input type
I_co = TypeVar("I_co", covariant=True)
I_contra = TypeVar("I_contra", contravariant=True)
S_contra = TypeVar("S_contra", contravariant=True)


class Dispatch(Protocol[I_contra]):
    """What a running effect feeds the machine through: the ``dispatch`` its controller's ``start`` receives.

    * ``dispatch(inp)`` queues ``inp``; it is applied with the next batch.
    * ``await dispatch.dispatch_committed(inp)`` queues ``inp`` and waits until
      the machine applied it (and, with a journal, made it durable): ``True``,
      or ``False`` when the state refused it. An effect that must not act before
      its input is a fact (a tool runs only once its ``tool-call-started`` is
      durable) awaits this instead of watching events.
    * ``dispatch.emit(event)`` publishes a display event (streamed text,
      progress) to the subscribers now; it never enters the journal.

    Once the effect is cancelled, its dispatches and emits are dropped.
    """

    def __call__(self, inp: I_contra, /) -> None:
        """Queue ``inp`` for the next batch. Never blocks; callable from any thread."""
        ...

    async def dispatch_committed(self, inp: I_contra, /) -> bool:
        """Queue ``inp``; return ``True`` once it is applied (and journaled), ``False`` if it was refused."""
        ...

    def emit(self, event: Any, /) -> None:
        """Publish a ``MachineEvent`` subclass instance to the subscribers now (from the loop's thread)."""
        ...


class Controller(Protocol[I_co]):
    """A runnable effect, as returned by ``run_effect(effect, state, key)``.

    ``start(dispatch)`` runs the effect to its end, feeding results back through
    ``dispatch`` (a :class:`Dispatch`). The machine runs it in a task of its own
    task group and stops it by cancelling that task, so an effect needs no
    ``cancel`` method: clean up in ``finally`` blocks or context managers.
    Returning is ``effect-completed``. Raising is a bug: ``effect-failed`` is
    published and the error stops the machine (it leaves ``Machine.running()``);
    an effect turns the failures it expects into inputs instead.
    """

    def start(self, dispatch: Dispatch[I_co], /) -> Awaitable[None]:
        """Run the effect; return when it is done. Usually written ``async def start(self, dispatch)``."""
        ...


class Journal(Protocol[S_contra, I_contra]):
    """Where accepted inputs are made durable before anything depends on them (``Journal[state, input]``).

    ``append(inputs, states)`` is called once per batch with the accepted
    inputs, in order, and the states the machine computed for them:
    ``states[i]`` is the state right after ``inputs[i]`` (so ``states[-1]`` is
    the batch's final state). A journal that records something derived from
    the states (digests, snapshots) reads them there instead of folding the
    inputs a second time. It is called before subscribers see the states and
    before any effect derived from them starts. If it raises, the batch is not
    applied and the machine stops.

    A journal may also offer ``submit(inputs, states)`` returning a
    :class:`PendingCommit` or a ``concurrent.futures.Future`` (anything with
    ``done()``, ``result()`` and ``add_done_callback(fn)``), or ``None`` when
    there is nothing to wait for: the async :class:`Machine` then hands each
    batch over and waits for it without blocking its event loop, so other
    sessions run while the commit waits for the disk; this session's
    subscribers and dependent effects still see the batch only once it is
    done. One that holds an error stops the machine. A writer that settles
    many :class:`PendingCommit` at once (:class:`SqliteStore`,
    :class:`PostgresStore`) wakes each event loop once for all of them.
    """

    def append(self, inputs: Sequence[I_contra], states: Sequence[S_contra], /) -> None:
        """Persist ``inputs`` (``states``: the state after each, same length); raise if they could not be persisted."""
        ...


class Pending(Protocol):
    """What the machine waits on: a :class:`PendingCommit`, or a ``concurrent.futures.Future``."""

    def done(self) -> bool:
        """Whether the verdict is in."""
        ...

    def result(self, timeout: float | None = None) -> object:
        """Wait for the verdict; raise the error it holds."""
        ...

    def add_done_callback(self, fn: Callable[[Any], object], /) -> None:
        """Call ``fn(self)`` once the verdict is in (at once if it is)."""
        ...


class OnLoop:
    """A done-callback that runs ``fn()`` on an event loop through ``schedule`` (a thread-safe call-soon).

    Given to a ``concurrent.futures.Future`` it schedules ``fn`` when the future
    is done; given to a :class:`PendingCommit` settled with a group, it shares
    one ``schedule`` call with every other :class:`OnLoop` of that loop.
    """

    __slots__ = ("fn", "schedule")

    def __init__(self, schedule: Callable[..., object], fn: Callable[[], object]) -> None:
        self.schedule = schedule
        self.fn = fn

    def __call__(self, _done: object) -> None:
        self.schedule(self.fn)


class _FunctionController(Generic[I]):
    """A :class:`Controller` made from an ``async def fn(dispatch)``."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Dispatch[I]], Awaitable[None]]) -> None:
        self.fn = fn

    def start(self, dispatch: Dispatch[I], /) -> Awaitable[None]:
        # Hands back `fn`'s own coroutine rather than awaiting it in one more: a frame less per effect.
        return self.fn(dispatch)

    def __repr__(self) -> str:
        return f"effect({getattr(self.fn, '__qualname__', self.fn)!r})"


def effect(fn: Callable[[Dispatch[I]], Awaitable[None]]) -> Controller[I]:
    """Wrap ``async def fn(dispatch) -> None`` into a :class:`Controller`; usable as a decorator.

    Example::

        def run_effect(request, state, key):
            @effect
            async def tick(dispatch):
                dispatch(Ticked(at=request.at))
            return tick
    """
    return _FunctionController(fn)
