"""The event log: stores, the machine's journal, loading, verified replay, fork, JSON-lines and resume.

Import the public names from ``effects``.
"""

from ._errors import (
    ConcurrencyError,
    LogDamaged,
    NotAStore,
    ReplayDiverged,
    SessionExists,
    SessionLeased,
    SessionNotFound,
    StoreDamaged,
    StoreError,
    StoreUnavailable,
)
from ._follow import DEFAULT_FOLLOW_INTERVAL, SharedStore, follow_store
from ._follow import leasing as leasing
from ._fork import Forked as Forked
from ._fork import child_session_id as child_session_id
from ._fork import fork_session
from ._fork import fork_tree as fork_tree

# For the other parts of effects (not public names):
from ._integrity import Position as Position
from ._integrity import Step as Step
from ._integrity import fold as fold
from ._integrity import turn_digest
from ._journal import Durability as Durability
from ._journal import SessionJournal
from ._jsonl import export_session, import_session
from ._jsonl import parse_log as parse_log
from ._lease import DEFAULT_LEASE_MS, DEFAULT_RENEW_MS, LeaseTerms
from ._load import load_position as load_position
from ._load import load_state
from ._memory import MemoryStore
from ._open import open_store
from ._postgres import DEFAULT_RECONNECT_FOR as DEFAULT_RECONNECT_FOR
from ._postgres import InputsListener, PostgresStore
from ._protocol import SQL_INT_MAX as SQL_INT_MAX
from ._protocol import EventStore, session_exists, sessions_page
from ._records import Lease, Origin, SessionInfo, Snapshot, StoredInput, chain_hash
from ._replay import ReplayReport, replay_session
from ._snapshots import DEFAULT_SNAPSHOT_EVERY
from ._sqlite import SqliteStore
from ._timeline import TimelineEntry, timeline
from ._timeline import answered_by as answered_by
from ._timeline import timeline_entry as timeline_entry
from ._tree import DEFAULT_TREE_LIMIT, SessionNode, session_tree
from ._tree import state_or_why as state_or_why
from ._writer import PendingCommit

__all__ = [
    "DEFAULT_FOLLOW_INTERVAL",
    "DEFAULT_LEASE_MS",
    "DEFAULT_RENEW_MS",
    "DEFAULT_SNAPSHOT_EVERY",
    "DEFAULT_TREE_LIMIT",
    "ConcurrencyError",
    "EventStore",
    "InputsListener",
    "Lease",
    "LeaseTerms",
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
    "SessionLeased",
    "SessionNode",
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
    "session_tree",
    "sessions_page",
    "timeline",
    "turn_digest",
]
