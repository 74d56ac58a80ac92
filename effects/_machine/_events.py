"""The timeline a machine publishes to its subscribers, and the errors by which it stops.

Per batch of inputs, in order: for each input either ``input-received`` then
``state-updated`` (carrying the state right after that input) or
``input-rejected``; then, from one reconciliation against the batch's final
state, ``effect-canceled`` and ``effect-started``. Later, when an effect ends on
its own: ``effect-completed`` or ``effect-failed``. Events are frozen structs
tagged by the class variable ``type``; hosts publish their own events (streamed
text, progress) by subclassing :class:`MachineEvent` and calling ``emit``.

Exceptions always propagate: an error raised by an effect's own code, by a
subscriber, by ``transition`` (other than its ``rejects`` types), by
``effects_at`` or by the journal stops the machine and leaves
``Machine.running()`` as itself. :class:`EffectInputRefused` and
:class:`MachineStopped` name what has no exception of its own;
:class:`Backpressure` refuses a dispatch from outside when the backlog is full.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

import msgspec

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type, named as in transition(state, input)
E = TypeVar("E")

NO_LONGER_DERIVED = "key no longer derived"
"""Cancellation reason when the state stops deriving an effect's key."""

MACHINE_STOPPED = "machine stopped"
"""Cancellation reason when the machine stops."""


class MachineEvent(msgspec.Struct, frozen=True, kw_only=True):
    """Base of every event a machine publishes; ``type`` is the kebab-case tag of the concrete class.

    Subclass it for custom events published with ``Machine.emit`` (they never enter the journal).
    """

    type: ClassVar[str] = "machine-event"


class InputReceived(MachineEvent, Generic[I], frozen=True, kw_only=True):
    """An input was accepted and is about to be folded into the state."""

    type: ClassVar[str] = "input-received"
    input: I


class StateUpdated(MachineEvent, Generic[I, S], frozen=True, kw_only=True):
    """``state`` is the state right after ``input``: a state that folding the log up to that input reproduces."""

    type: ClassVar[str] = "state-updated"
    input: I
    state: S


class InputRejected(MachineEvent, Generic[I], frozen=True, kw_only=True):
    """``input`` was refused and changed nothing.

    ``rejection`` is what ``check`` returned, or, when ``transition`` raised one of
    the machine's ``rejects`` types, the error's ``rejection`` attribute (the
    error itself if it has none).
    """

    type: ClassVar[str] = "input-rejected"
    input: I
    rejection: Any


class EffectStarted(MachineEvent, Generic[E], frozen=True, kw_only=True):
    """The state derives ``effect`` under ``key`` and it was not running: it starts now."""

    type: ClassVar[str] = "effect-started"
    key: str
    effect: E


class EffectCanceled(MachineEvent, Generic[E], frozen=True, kw_only=True):
    """The effect under ``key`` was cancelled; ``reason`` says why (e.g. ``key no longer derived``)."""

    type: ClassVar[str] = "effect-canceled"
    key: str
    effect: E
    reason: str


class EffectCompleted(MachineEvent, Generic[E], frozen=True, kw_only=True):
    """The effect under ``key`` returned. It is not started again while the state keeps deriving ``key``."""

    type: ClassVar[str] = "effect-completed"
    key: str
    effect: E


class EffectFailed(MachineEvent, Generic[E], frozen=True, kw_only=True):
    """The effect under ``key`` raised ``error`` (or ``run_effect`` raised for it).

    Published just before the error stops the machine: an exception from an
    effect's own code is a bug, and it leaves ``Machine.running()``. Failures an
    effect expects (a tool raising, a provider error) are turned into inputs by
    the effect itself and never reach this event.
    """

    type: ClassVar[str] = "effect-failed"
    key: str
    effect: E
    error: BaseException


class EffectInputRefused(RuntimeError):
    """An effect dispatched an input that the state refused, and the state still derives the effect.

    The effect's work is lost and nothing would ever move the session on, so
    the machine stops instead of looking settled. (A refusal after which the
    effect's key is gone is a harmless race, e.g. a tool finishing as the user
    cancels the turn: it is only an ``input-rejected`` event.)
    """

    def __init__(self, key: str, inp: Any, rejection: Any) -> None:
        self.key = key
        self.input = inp
        self.rejection = rejection
        tag = getattr(inp, "type", None) or type(inp).__name__
        super().__init__(
            f"effect {key!r} dispatched {tag}, which the state refused ({rejection}); an effect must "
            "dispatch inputs that are valid for the state it runs in: this is a bug in the effect or the reducer"
        )


class MachineStopped(RuntimeError):
    """Raised by ``Machine.settled()`` when the machine stopped because of an error while the caller waited.

    The error that stopped it is the ``__cause__``; the task holding
    ``Machine.running()`` receives the error itself.
    """


class Backpressure(RuntimeError):
    """A dispatch from outside found the machine's backlog full: the input was not queued.

    ``backlog`` inputs wait to be applied and made durable, as many as the
    machine's ``limit`` (``max_backlog``): the store (or the event loop) is
    behind the producer. ``await machine.wait_for_room()`` (or
    ``session.wait_for_room()``) before dispatching again, or give the machine
    a larger ``max_backlog``.
    """

    def __init__(self, backlog: int, limit: int) -> None:
        self.backlog = backlog
        self.limit = limit
        super().__init__(
            f"the machine holds {backlog:,} inputs not yet applied and durable, its bound (max_backlog={limit:,}); "
            "the input was not queued: the store is behind the producer. Await wait_for_room() on the session "
            "or machine before dispatching more, or raise max_backlog"
        )
