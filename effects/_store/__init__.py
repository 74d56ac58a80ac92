"""The event log: stores, the machine's journal, loading, verified replay, fork, JSON-lines and resume.

Import the public names from ``effects``.
"""

from ._errors import (
    ConcurrencyError,
    LogDamaged,
    NotAStore,
    ReplayDiverged,
    SessionExists,
    SessionNotFound,
    StoreDamaged,
    StoreError,
    StoreUnavailable,
)
from ._follow import DEFAULT_FOLLOW_INTERVAL, SharedStore, follow_store
from ._fork import fork_session
from ._integrity import turn_digest
from ._journal import SessionJournal
from ._jsonl import export_session, import_session
from ._load import load_state
from ._memory import MemoryStore
from ._open import open_store
from ._postgres import InputsListener, PostgresStore
from ._protocol import EventStore, session_exists
from ._records import Origin, SessionInfo, Snapshot, StoredInput, chain_hash
from ._replay import ReplayReport, replay_session
from ._snapshots import DEFAULT_SNAPSHOT_EVERY
from ._sqlite import SqliteStore
from ._timeline import TimelineEntry, timeline
from ._writer import PendingCommit

__all__ = [
    "DEFAULT_FOLLOW_INTERVAL",
    "DEFAULT_SNAPSHOT_EVERY",
    "ConcurrencyError",
    "EventStore",
    "InputsListener",
    "LogDamaged",
    "MemoryStore",
    "NotAStore",
    "Origin",
    "PendingCommit",
    "PostgresStore",
    "ReplayDiverged",
    "ReplayReport",
    "SessionExists",
    "SessionInfo",
    "SessionJournal",
    "SessionNotFound",
    "SharedStore",
    "Snapshot",
    "SqliteStore",
    "StoreDamaged",
    "StoreError",
    "StoreUnavailable",
    "StoredInput",
    "TimelineEntry",
    "chain_hash",
    "export_session",
    "follow_store",
    "fork_session",
    "import_session",
    "load_state",
    "open_store",
    "replay_session",
    "session_exists",
    "timeline",
    "turn_digest",
]
