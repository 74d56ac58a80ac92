"""``fork_session``: a new session that starts with a prefix of another (rollback is a fork)."""

from __future__ import annotations

from ._errors import SessionExists
from ._integrity import Position, fold
from ._journal import SessionJournal
from ._protocol import EventStore, session_exists
from ._records import Origin, StoredInput
from ._snapshots import DEFAULT_SNAPSHOT_EVERY


def child_session_id(parent_session_id: str, tool_call_id: str) -> str:
    """The id of the child session that the call ``tool_call_id`` of ``parent_session_id`` runs."""
    return f"{parent_session_id}:{tool_call_id}"


def fork_session(
    store: EventStore,
    session_id: str,
    at: int,
    *,
    new_id: str | None = None,
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
) -> SessionJournal:
    """Copy records ``1..at`` of ``session_id`` into a new session and return its journal.

    The copied records keep their bytes and hashes, so both logs share their
    chain up to ``at``, and the new session's metadata names its parent and
    ``at`` (the log itself is not changed: its ``session-started`` still
    carries the original id). ``new_id`` defaults to ``"<session_id>@<at>"``
    (with a ``.2``, ``.3``... suffix when taken). Rolling a session back to
    step ``at`` is this fork; continue it through the returned journal.
    """
    length = store.session(session_id).length
    if not 1 <= at <= length:
        raise ValueError(f"session {session_id!r} has records 1 to {length}; cannot fork at {at}")
    target = new_id if new_id is not None else _free_id(store, f"{session_id}@{at}")
    if new_id is not None and session_exists(store, new_id):
        raise SessionExists(new_id, store.session(new_id).length)
    copied: list[StoredInput] = []
    start = Position.start()
    end = fold(session_id, store.read(session_id, 1, at), start, at, on_step=lambda record, *_: copied.append(record))
    store.append(target, copied, expected=0, parent=Origin(session_id=session_id, seq=at))
    journal = SessionJournal(store, target, position=end, snapshot_every=snapshot_every)
    journal.snapshot()
    return journal


def _free_id(store: EventStore, base: str) -> str:
    candidate, number = base, 1
    while session_exists(store, candidate):
        number += 1
        candidate = f"{base}.{number}"
    return candidate
