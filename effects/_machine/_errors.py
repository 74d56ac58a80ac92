"""Errors by which a machine stops: a bug in an effect, a subscriber, the reducer or the journal.

Exceptions always propagate: an error raised by an effect's own code, by a
subscriber, by ``transition`` (other than its ``rejects`` types), by
``effects_at`` or by the journal stops the machine and leaves
``Machine.running()`` as itself. These classes cover what has no exception of
its own.
"""

from __future__ import annotations

from typing import Any


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
