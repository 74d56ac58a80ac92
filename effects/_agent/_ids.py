"""Where new ids come from: random in production, sequential (deterministic) in tests.

Ids enter the log inside inputs, so a replay never needs the id source again.
"""

from __future__ import annotations

import uuid
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
        """``<kind>-<32 hex digits>``."""
        return f"{kind}-{uuid.uuid4().hex}"


class SequentialIds:
    """Ids such as ``user-1``, ``user-2``, ``assistant-1``: one counter per kind. Deterministic, for tests."""

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}

    def new_id(self, kind: str) -> str:
        """``<kind>-<n>``, where ``n`` counts the ids of that kind made so far."""
        n = self._counters.get(kind, 0) + 1
        self._counters[kind] = n
        return f"{kind}-{n}"
