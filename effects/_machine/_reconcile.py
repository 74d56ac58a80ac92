"""The sans-I/O heart of the machine: which effects to cancel and which to start.

A plain function over key sets, so any event loop (or none) can drive it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import msgspec


class Plan(msgspec.Struct, frozen=True):
    """What a reconciliation decided: keys to ``cancel`` (in running order), keys to ``start`` (in wanted order)."""

    cancel: tuple[str, ...] = ()
    start: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        """True when the plan has anything to do."""
        return bool(self.cancel or self.start)


EMPTY_PLAN = Plan()

_LOOKUPS = (dict, set, frozenset, Mapping, AbstractSet)


def reconcile(running: Iterable[str], wanted: Mapping[str, Any]) -> Plan:
    """Compare the running keys with the keys the state wants now.

    Keys in ``running`` but not in ``wanted`` are cancelled, in the order of
    ``running``; keys in ``wanted`` but not running are started, in the order of
    ``wanted`` (the order ``effects_at`` returned them), so a run is reproducible.
    Cancelling then starting turns the running set into exactly ``wanted``'s keys.
    ``running`` must not repeat a key. A key that is still wanted keeps running
    untouched: an effect's identity is its key, not its value.
    """
    # Mappings and sets answer `in` in constant time; anything else is read once into a dict (ordered).
    if type(running) is not dict and not isinstance(running, _LOOKUPS):
        running = dict.fromkeys(running)
    # List comprehensions, then tuple(): cheaper than tuple(generator) on this hot path.
    cancel = tuple([key for key in running if key not in wanted])
    start = tuple([key for key in wanted if key not in running])
    if cancel or start:
        return Plan(cancel, start)
    return EMPTY_PLAN
