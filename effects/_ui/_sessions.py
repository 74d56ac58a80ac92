"""The viewer's list of sessions, a page at a time, each with its phase (or why it cannot be read), and the tree
of sessions one session belongs to."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import msgspec

from agent_core import DecodeError, phase

from .._store import (
    EventStore,
    LogDamaged,
    NotAStore,
    ReplayDiverged,
    SessionInfo,
    SessionNode,
    StoreDamaged,
    load_state,
    session_exists,
    session_tree,
    sessions_page,
)
from ._bounds import PAGE_BYTES, SESSIONS_PER_PAGE, TREE_SESSIONS, size
from ._cursor import Cursors

UNREADABLE = (LogDamaged, ReplayDiverged, StoreDamaged, NotAStore, DecodeError)
"""Errors of a session this release cannot read (damaged, or its reducer changed): the message says which."""

KEPT_PHASES = 4096
"""Phases remembered by session and head: listing again folds only the sessions that changed."""


class SessionList:
    """Pages of a store's sessions, oldest first. A session's phase is folded once per head it has."""

    def __init__(self, store: EventStore, cursors: Cursors) -> None:
        self.store = store
        self.cursors = cursors
        self._lock = threading.Lock()
        self._phases: OrderedDict[tuple[str, bytes], dict[str, str]] = OrderedDict()

    def page(self, offset: int = 0, limit: int = SESSIONS_PER_PAGE) -> dict[str, Any]:
        """Sessions ``offset`` on, at most ``limit`` (up to :data:`SESSIONS_PER_PAGE`), ending early past
        :data:`PAGE_BYTES`; ``total`` is how many the store holds."""
        if not 1 <= limit <= SESSIONS_PER_PAGE:
            raise ValueError(f"a page lists 1 to {SESSIONS_PER_PAGE} sessions; got limit={limit}")
        infos, count = sessions_page(self.store, offset=offset, limit=limit)  # the page alone is read
        listed: list[dict[str, Any]] = []
        total = 0
        for info in infos:
            entry = {**msgspec.to_builtins(info), **self.phase(info)}
            listed.append(entry)
            total += size(entry)
            if total >= PAGE_BYTES:
                break
        return {"sessions": listed, "offset": offset, "total": count}

    def phase(self, info: SessionInfo) -> dict[str, str]:
        """``{"phase": ...}``, or ``{"phase": "unreadable", "error": why}`` for a session that cannot be read."""
        key = (info.session_id, info.head)
        with self._lock:
            known = self._phases.get(key)
        if known is not None:
            return known
        state = self.cursors.head(info.session_id, info.length)
        try:
            if state is None:
                state = load_state(self.store, info.session_id)
            found = {"phase": phase(state).value}
        except UNREADABLE as error:
            found = {"phase": "unreadable", "error": str(error)}
        with self._lock:
            self._phases[key] = found
            while len(self._phases) > KEPT_PHASES:
                self._phases.popitem(last=False)
        return found


def tree_of(store: EventStore, session_id: str) -> Any:
    """The tree ``session_id`` belongs to, from the root its lineage names (itself when it has none, or when
    the root is not in the store), at most :data:`TREE_SESSIONS` sessions below the root. Only the first record
    is read to find the root; a root with no session named below it is not folded at all (no ``phase``)."""
    try:
        lineage = load_state(store, session_id, 1).config.lineage  # session-started holds it
    except UNREADABLE:
        lineage = None
    root = session_id
    if lineage is not None and session_exists(store, lineage.root_session_id):
        root = lineage.root_session_id
    if not sessions_page(store, prefix=f"{root}:", limit=1)[1]:
        return msgspec.to_builtins(SessionNode(session_id=root, inputs=store.session(root).length))
    return msgspec.to_builtins(session_tree(store, root, limit=TREE_SESSIONS))
