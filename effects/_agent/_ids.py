"""Where new ids come from: random in production, sequential (deterministic) in tests.

Ids enter the log inside inputs, so a replay never needs the id source again.
"""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable


@runtime_checkable
class IdSource(Protocol):
    """Makes a new id for something of ``kind`` (``"session"``, ``"user"``, ``"assistant"``)."""

    def new_id(self, kind: str) -> str:
        """A new id, never returned before by this source."""
        ...


class RandomIds:
    """Ids such as ``user-5f0c...``: a kind prefix and a random UUID. The default."""

    def new_id(self, kind: str) -> str:
        """``<kind>-<32 hex digits>``: a version 4 UUID, as ``uuid.uuid4().hex`` gives, made without building a
        ``UUID`` (every turn makes two)."""
        n = int.from_bytes(os.urandom(16), "big") & _CLEAR | _SET
        return f"{kind}-{n:032x}"


_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))  # the variant and version bits of a UUID...
_SET = (0x8000 << 48) | (4 << 76)  # ... set to RFC 4122's variant and version 4, as uuid.uuid4() sets them


class SequentialIds:
    """Ids such as ``user-1``, ``user-2``, ``assistant-1``: one counter per kind. Deterministic, for tests."""

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}

    def new_id(self, kind: str) -> str:
        """``<kind>-<n>``, where ``n`` counts the ids of that kind made so far."""
        n = self._counters.get(kind, 0) + 1
        self._counters[kind] = n
        return f"{kind}-{n}"
