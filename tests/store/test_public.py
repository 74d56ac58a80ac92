"""The event log's public names: exported from ``effects``, documented."""

from __future__ import annotations

import effects
import effects._store

STORE_NAMES = set(effects._store.__all__)


def test_every_store_name_is_exported_from_effects() -> None:
    assert STORE_NAMES.issubset(effects.__all__)
    assert all(getattr(effects, name) is getattr(effects._store, name) for name in STORE_NAMES)


def test_every_store_name_has_a_docstring() -> None:
    constants = {"DEFAULT_SNAPSHOT_EVERY", "INTERRUPTED"}  # documented where they are defined
    undocumented = [
        name for name in sorted(STORE_NAMES - constants) if not (getattr(effects, name).__doc__ or "").strip()
    ]
    assert undocumented == []
