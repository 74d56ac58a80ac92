"""Errors of the event log, grouped by who must act::

    StoreError
    ├── ConcurrencyError   another writer appended to the session first: reload and retry
    ├── SessionLeased      another writer holds the session's lease (or took it over): stop it, or wait
    ├── SessionNotFound    no session by that id in the store (also a KeyError)
    ├── SessionExists      creating (forking, importing) a session whose id is taken
    ├── NotAStore          the file is not an agent-core store (not SQLite, or another schema)
    ├── StoreUnavailable   cannot be used now (server down, disk full, read-only): fix that, retry
    ├── StoreDamaged       the database file itself is damaged (truncated, overwritten): restore it
    ├── LogDamaged         stored bytes changed, went missing or were reordered: names the record
    └── ReplayDiverged     the reducer now behaves differently on a logged input: names the record

Bad JSON-lines files raise :class:`agent_core.DecodeError` (with the line number).
"""

from __future__ import annotations

import datetime

from agent_core import STATE_FORMAT

from ._records import Lease


class StoreError(Exception):
    """Base of every error raised by the event log."""


class ConcurrencyError(StoreError):
    """An append expected the session at one length and found another (another writer came first), or at that
    length but ending in another record (``diverged``).

    Nothing was written. Reload the session and decide again; two writers
    never interleave their inputs.
    """

    def __init__(self, session_id: str, expected: int, actual: int, *, diverged: bool = False) -> None:
        self.session_id = session_id
        self.expected = expected
        self.actual = actual
        self.diverged = diverged
        if diverged:
            problem = (
                f"has {actual} inputs, as the append expected, but its last is not the one the batch follows: "
                "another writer appended first, or an earlier batch of this writer was refused"
            )
        else:
            problem = f"has {actual} inputs, but the append expected {expected}: another writer appended first"
        super().__init__(f"session {session_id!r} {problem}; reload the session and retry")


class SessionLeased(StoreError):
    """Another writer holds the session's lease: one writer per session, and this one is not it.

    Raised when a session is opened while a live writer holds it (``taken=False``),
    and when a writer's append, or its renewal, finds that the lease passed to
    another writer after it expired (``taken=True``: this writer is fenced off;
    nothing of the batch was written). ``holder`` is the lease the store holds
    now (``None``: nobody's, as after the other writer closed the session),
    ``now`` the store's time then, in ms since the epoch.
    """

    def __init__(self, session_id: str, holder: Lease | None, now: int, *, taken: bool = False) -> None:
        self.session_id = session_id
        self.holder = holder
        self.now = now
        self.taken = taken
        super().__init__(self._explain())

    @property
    def expires_in(self) -> float:
        """Seconds until the holder's lease expires unless renewed (0: it has; or nobody holds it)."""
        if self.holder is None:
            return 0.0
        return max(0, self.holder.expires_at - self.now) / 1000

    def _explain(self) -> str:
        name, holder = self.session_id, self.holder
        if self.taken:
            now = (
                "nobody holds it now"
                if holder is None
                else f"{holder.holder} holds it since {shown_time(holder.acquired_at)}"
            )
            return (
                f"session {name!r}: this writer's lease on it expired and was taken over ({now}): it was not "
                "renewed in time (the process stalled, or could not reach the store); this writer is fenced "
                "off and nothing of its batch was written; open the session again (open_session) to go on "
                "from what the store holds"
            )
        assert holder is not None
        return (
            f"session {name!r} is being run by another writer, {holder.holder}, since "
            f"{shown_time(holder.acquired_at)}; its lease expires at {shown_time(holder.expires_at)} "
            f"(in {self.expires_in:.0f} s) unless that writer renews it, as a live one does: one writer per "
            "session. Close the session there first; if that process is gone (killed, crashed), open the "
            "session again once the lease expired"
        )


class SessionNotFound(StoreError, KeyError):
    """The store has no session with this id."""

    def __init__(self, session_id: str, known: int = 0) -> None:
        self.session_id = session_id
        hint = "list them with `agent-core sessions DB`" if known else "the store is empty"
        super().__init__(f"no session {session_id!r} in the store ({known} sessions; {hint})")

    def __str__(self) -> str:
        return str(self.args[0])


class SessionExists(StoreError):
    """A new session (fork, import) was asked for an id the store already holds."""

    def __init__(self, session_id: str, length: int) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id!r} already exists ({length} inputs); choose another id")


class NotAStore(StoreError):
    """The file cannot be used as a store: not a SQLite database, or not one agent-core wrote."""


class StoreUnavailable(StoreError):
    """The store cannot be used now: its server is unreachable, its disk full or failing, or it is read-only.

    Nothing was written that was not committed; the message says what to fix,
    then retry (a session resumes from what was committed).
    """


class StoreDamaged(StoreError):
    """The store's database file is damaged (truncated, overwritten): restore it from a backup or an export."""


class LogDamaged(StoreError):
    """A stored record does not match its hash chain, cannot be decoded, or is out of place.

    ``record`` is the 1-based sequence number of the first bad record.
    """

    def __init__(self, session_id: str, record: int, problem: str) -> None:
        self.session_id = session_id
        self.record = record
        self.problem = problem
        super().__init__(
            f"session {session_id!r}, record {record}: {problem}; the log is damaged from here on "
            "(restore it from a backup or an export, or fork the session before this record)"
        )


class ReplayDiverged(StoreError):
    """Replaying the log with this release's reducer gave another state than the one recorded.

    ``record`` is the 1-based sequence number, ``input_type`` the input's tag,
    ``kind`` what was compared (``state hash``, ``turn digest``, ``turn state`` or
    ``acceptance``), ``expected`` what the log recorded and ``actual`` what
    the reducer produced now. ``written_by`` is the state format
    (:data:`agent_core.STATE_FORMAT`) of the older release that wrote the store,
    when its snapshots say so: its hashes are computed differently, and the
    session must be exported and imported to get this release's.
    """

    def __init__(
        self,
        session_id: str,
        record: int,
        input_type: str,
        kind: str,
        expected: str,
        actual: str,
        *,
        written_by: int | None = None,
        rejection_code: str = "",
    ) -> None:
        self.session_id = session_id
        self.record = record
        self.input_type = input_type
        self.kind = kind
        self.expected = expected
        self.actual = actual
        self.written_by = written_by
        self.rejection_code = rejection_code
        super().__init__(
            f"session {session_id!r} diverges at record {record} ({input_type}): "
            f"the log recorded {kind} {expected}, the reducer now gives {actual}; {self.advice}"
        )

    @property
    def unregistered(self) -> bool:
        """The log is intact, but names rules or guards this process has not registered."""
        return self.rejection_code in UNREGISTERED

    @property
    def advice(self) -> str:
        """What to do: re-record an older release's store, or keep the old release (or fork before the record)."""
        if self.written_by is not None:
            return (
                f"the store was written by an older release (state format {self.written_by}; this release "
                f"writes {STATE_FORMAT}), which computed its hashes differently: export the session "
                f"(agent-core export DB {self.session_id} -o FILE) and import it into a new store "
                "(agent-core import NEW_DB FILE), which records this release's hashes"
            )
        if self.unregistered:
            return UNREGISTERED_ADVICE
        advice = "the reducer's behaviour changed: keep the old release for this log"
        if self.record > 1:
            advice += ", or fork it before this record"
        if self.kind in ("turn digest", "state hash"):
            advice += (
                "; if an older release wrote this store, export the session (agent-core export) and import it "
                "into a new store (agent-core import) to record this release's hashes"
            )
        return advice

    def written_by_format(self, state_format: int) -> ReplayDiverged:
        """This divergence, in a store an older release (of state format ``state_format``) wrote."""
        fields = (self.session_id, self.record, self.input_type, self.kind, self.expected, self.actual)
        return ReplayDiverged(*fields, written_by=state_format, rejection_code=self.rejection_code)


UNREGISTERED = frozenset({"unknown-rule", "unknown-guard"})
"""Rejection codes of a ``session-started`` naming rules or guards this process has not registered."""

UNREGISTERED_ADVICE = (
    "the log is intact, but this process has not registered the rules or guards the session names: "
    "import the module that registers them first (agent-core --import MODULE ..., or an entry point in the "
    "group agent_core.extensions; in Python, import it before opening the session)"
)


def shown_time(ms: int) -> str:
    """``ms`` since the epoch as a UTC time a person reads: ``2026-11-27 12:00:31 UTC``."""
    try:
        moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms since the epoch"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
