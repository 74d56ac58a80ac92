"""Registering a pure function under a name (guards, rules, compaction strategies): one name, one function."""

from __future__ import annotations

from typing import Any


def register(table: dict[str, Any], kind: str, name: str, fn: Any) -> Any:
    """Register ``fn`` under ``name`` in ``table`` (``kind`` names what it is, in the errors); returns ``fn``.

    Raises ``ValueError`` for an empty name, or one another function already holds.
    """
    held = table.get(name)
    if not name:
        raise ValueError(f"expected a non-empty {kind} name, got an empty string")
    if held is not None and held is not fn:
        raise ValueError(
            f"{kind} {name!r} is already registered to {held.__qualname__}; "
            f"expected a new name for {fn.__qualname__}, or register it once"
        )
    table[name] = fn
    return fn
