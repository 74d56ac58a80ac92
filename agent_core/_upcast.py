"""Upcasters: raw records of an older schema version rewritten, one version step at a time, to the current one."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ._errors import DecodeError
from ._inputs import SCHEMA_VERSION

Record = dict[str, Any]


UPCASTERS: dict[int, Callable[[Record], Record]] = {}
"""``UPCASTERS[v]`` turns one raw record of schema version ``v`` into version ``v + 1``."""


def upcaster(from_version: int) -> Callable[[Callable[[Record], Record]], Callable[[Record], Record]]:
    """Register a function that rewrites a raw record of ``from_version`` into the next version."""

    def register(function: Callable[[Record], Record]) -> Callable[[Record], Record]:
        UPCASTERS[from_version] = function
        return function

    return register


def upcast(record: Record, version: int) -> Record:
    """Bring a raw record from ``version`` up to :data:`SCHEMA_VERSION`."""
    if version > SCHEMA_VERSION:
        raise DecodeError(
            f"schema version {version} is newer than this release reads ({SCHEMA_VERSION}); upgrade agent-core"
        )
    while version < SCHEMA_VERSION:
        step = UPCASTERS.get(version)
        if step is None:
            raise DecodeError(f"no upcaster from schema version {version}; versions known: {sorted(UPCASTERS)}")
        record = step(record)
        version += 1
    return record


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


# Mappings whose keys are ids, not field names: renaming them would break the
# references to those ids in later records (e.g. "call_Ab9" in toolCallId).
_ID_KEYED = frozenset({"toolCalls", "tool_calls"})


def _snake(value: Any, ids: bool = False) -> Any:
    if isinstance(value, dict):
        return {
            (key if ids or not isinstance(key, str) else _CAMEL.sub("_", key).lower()): _snake(
                item, not ids and key in _ID_KEYED
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_snake(item) for item in value]
    return value


@upcaster(0)
def _from_origin(record: Record) -> Record:
    """Version 0: logs of the origin prototype (Moorex's TypeScript agent-core-state-machine).

    Its fields were camelCase, tool results were ``{isSuccess, content|error}``
    and carried ``receivedAt``, and requests carried ``calledAt``.
    """
    record = _snake(record)
    # Only rewrite what has the expected shape; anything else is left for the
    # typed decoding to reject with a field path.
    if record.get("type") == "session-started":
        record["schema_version"] = 1
        config = record.get("config")
        if isinstance(config, dict) and "expand_context_window_size" in config:
            config["context_window_step"] = config.pop("expand_context_window_size")
    observation = record.get("observation")
    requests = observation.get("tool_calls") if isinstance(observation, dict) else None
    if isinstance(requests, dict):
        for request in requests.values():
            if isinstance(request, dict):
                request.pop("called_at", None)
    result = record.get("result")
    if isinstance(result, dict) and "is_success" in result:
        result.pop("received_at", None)
        result["status"] = "success" if result.pop("is_success") else "failure"
    return record
