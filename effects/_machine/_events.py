"""The timeline a machine publishes to its subscribers.

Per batch of inputs, in order: for each input either ``input-received`` then
``state-updated`` (carrying the state right after that input) or
``input-rejected``; then, from one reconciliation against the batch's final
state, ``effect-canceled`` and ``effect-started``. Later, when an effect ends on
its own: ``effect-completed`` or ``effect-failed``. Events are frozen structs
tagged by the class variable ``type``; hosts publish their own events (streamed
text, progress) by subclassing :class:`MachineEvent` and calling ``emit``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

import msgspec

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type, named as in transition(state, input)
E = TypeVar("E")


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
