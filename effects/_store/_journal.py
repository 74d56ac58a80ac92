"""``SessionJournal``: writes a session's inputs to a store, as the machine's journal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from msgspec.structs import replace

from agent_core import SCHEMA_VERSION, AgentInput, AgentState, StateEncoder, encode_input

from ._commit_verdicts import Commit, Verdicts
from ._integrity import Encoded, Position, chain, continuing, fold_inputs
from ._load import load_for_append
from ._protocol import EventStore
from ._records import Lease, Origin, Snapshot, StoredInput
from ._snapshots import DEFAULT_SNAPSHOT_EVERY, SnapshotSchedule, take_snapshot

Durability = Literal["input", "turn"]
"""When a journal commits: ``"input"`` every batch before anything depends on it (the default); ``"turn"`` when
a turn ends or waits for a person, so a crash loses at most the turn in progress."""


class SessionJournal:
    """Appends one session's inputs to an :class:`EventStore`; pass it as a machine's ``journal``.

    Each :meth:`append` is one batch and one transaction: the machine calls it
    with the inputs it accepted in one loop turn and the state after each,
    before any effect depending on them starts and before subscribers see the
    state. From those states the journal records a turn digest where a turn
    ends and, every ``snapshot_every`` inputs (more as the state grows, see
    :data:`SNAPSHOT_BYTES_PER_INPUT`), the full state hash and a snapshot.
    Called without states (a script appending inputs itself), it folds the
    inputs to get them. A journal that lost a race with another writer raises
    :class:`ConcurrencyError`.

    A machine calls :meth:`submit` instead: with a store that has a writer
    thread (:class:`SqliteStore`, :class:`PostgresStore`) the batch is handed over and the machine
    waits for its commit without blocking the event loop, so the batches of
    all sessions of the store share each fsync. ``durability="turn"`` keeps a
    running turn's inputs back and commits them when the turn ends or waits
    for a person (approval): a crash then loses at most the turn in progress.

    ``lease`` (from ``store.acquire_lease``) makes the journal its session's
    one writer: each batch carries the lease's token, and the store refuses
    it (:class:`SessionLeased`, nothing written) once another writer took the
    lease over. Without one, a batch is checked by its expected length alone.
    """

    def __init__(
        self,
        store: EventStore,
        session_id: str,
        *,
        position: Position | None = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
        parent: Origin | None = None,
        snapshot_seq: int = 0,
        durability: Durability = "input",
        lease: Lease | None = None,
    ) -> None:
        if durability not in ("input", "turn"):
            raise ValueError(f"durability expects 'input' or 'turn', got {durability!r}")
        self.durability: Durability = durability
        self.store = store
        self.session_id = session_id
        self._position = position or Position.start()
        self._parent = parent
        self._schedule = SnapshotSchedule(snapshot_every, snapshot_seq)
        self._written = self._position.seq  # the inputs the store holds (or was handed)
        self._pending: list[StoredInput] = []
        self._encoder = StateEncoder()  # every tool-call record, encoded once for the turn digests and snapshots
        self._snapshot: Snapshot | None = None
        self._verdicts = Verdicts()
        self.lease = lease
        self._fence: dict[str, str] = {} if lease is None else {"lease": lease.owner}  # what each write carries

    @classmethod
    def open(
        cls,
        store: EventStore,
        session_id: str,
        *,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
        durability: Durability = "input",
        lease: Lease | None = None,
    ) -> SessionJournal:
        """A journal continuing an existing session (loaded from its snapshot and tail).

        Raises :class:`LogDamaged` when any record fails the hash chain: nothing is appended to a damaged log.
        Take the session's ``lease`` before loading it, so that no other writer appends after the load.
        """
        position, used = load_for_append(store, session_id)
        return cls(
            store,
            session_id,
            position=position,
            snapshot_every=snapshot_every,
            snapshot_seq=used,
            durability=durability,
            lease=lease,
        )

    @property
    def state(self) -> AgentState:
        """The state after the last appended input."""
        return self._position.state

    @property
    def seq(self) -> int:
        """How many inputs the session has (the last record's number)."""
        return self._position.seq

    def append(self, inputs: Sequence[AgentInput], states: Sequence[AgentState] | None = None, /) -> None:
        """Commit ``inputs`` as one batch; raises if the store refuses (the inputs are then not logged).

        ``states[i]`` is the state right after ``inputs[i]``, as a machine passes
        them (see :class:`~effects.Journal`); they must continue this journal's
        state, which is trusted, not re-checked, apart from their count and
        ``step``. Without ``states`` the journal folds the inputs itself, and an
        invalid input raises :class:`~agent_core.InvalidInput`.
        """
        self._verdicts.wait(self.submit(inputs, states))

    def submit(self, inputs: Sequence[AgentInput], states: Sequence[AgentState] | None = None, /) -> Commit:
        """:meth:`append` without waiting: the machine calls this, and waits for the commit without blocking.

        Returns ``None`` when nothing is left to wait for (already written, or
        kept back by ``durability="turn"``), else the store's
        :class:`~effects.PendingCommit`, done once the batch is durable. After
        a failed commit the journal refuses further batches.
        """
        if not inputs:
            return None
        encoded = [(inp, SCHEMA_VERSION, encode_input(inp, format="msgpack")) for inp in inputs]
        state = self._position.state
        after = fold_inputs(state, inputs) if states is None else continuing(self.session_id, state, inputs, states)
        return self._commit(encoded, after)

    def append_encoded(self, batch: Sequence[Encoded]) -> None:
        """Commit inputs already encoded, possibly of an older schema version (imports keep their bytes)."""
        self._verdicts.wait(self._commit(batch, fold_inputs(self._position.state, [inp for inp, _, _ in batch])))

    def _commit(self, batch: Sequence[Encoded], states: Sequence[AgentState]) -> Commit:
        self._refuse_after(self._verdicts.failure())
        self._position = position = chain(self._position, batch, states, self._pending, self._encoder)
        state, seq, head = position
        if seq >= self._schedule.next:
            self._snapshot = snapshot = take_snapshot(state, seq, head, self._encoder)
            self._pending[-1] = replace(self._pending[-1], state_hash=snapshot.state_hash)
            self._schedule.taken(snapshot)
        if self.durability == "turn" and state.turn is not None and not state.turn.awaiting_ids:
            return None  # the turn goes on: committed when it ends or waits for a person
        return self.flush()

    def flush(self) -> Commit:
        """Commit the inputs not committed yet (``durability="turn"`` keeps a running turn's inputs back).

        With a store that has a writer (``submit``: :class:`SqliteStore`, :class:`PostgresStore`) the
        batch is handed over and the returned :class:`~effects.PendingCommit` is done once it is
        durable; otherwise it is written before this returns (``None``).
        """
        if not self._pending and self._snapshot is None:
            return None
        records, self._pending = self._pending, []
        snapshot, self._snapshot = self._snapshot, None
        expected = self._written
        self._written = records[-1].seq if records else expected
        parent = self._parent if expected == 0 else None
        submit = getattr(self.store, "submit", None)
        if submit is None:
            try:
                if records:
                    self.store.append(self.session_id, records, expected=expected, parent=parent, **self._fence)
                if snapshot is not None:
                    self.store.save_snapshot(self.session_id, snapshot)
            except Exception as error:  # as a writer's failed commit: the journal stops here
                self._verdicts.fail(error)
                raise
            return None
        return self._verdicts.handed(
            submit(self.session_id, records, expected=expected, parent=parent, snapshot=snapshot, **self._fence)
        )

    def snapshot(self) -> None:
        """Save a snapshot of the current state now, unless the newest one is already there.

        Waits for the batches in flight first: after a failed commit the
        journal's state is not the log's, and it raises instead of saving it.
        """
        self._refuse_after(self._verdicts.settled())
        if self.seq and self._schedule.last != self.seq:
            self._save(take_snapshot(self.state, self.seq, self._position.head, self._encoder))

    def close(self) -> None:
        """Commit what is pending and save a final snapshot, so the next load folds nothing. The store stays open.

        After a failed commit (also one still in flight when called) it saves
        nothing: the store holds what it committed, and the failure was raised
        to the batch's waiter. Inputs kept back by ``durability="turn"`` behind
        the failure are not lost quietly: it raises, naming them.
        """
        failed = self._verdicts.settled()
        if failed is not None:
            if self._pending:
                first, last = self._pending[0].seq, self._pending[-1].seq
                raise RuntimeError(
                    f"session {self.session_id!r}: inputs {first} to {last}, kept back until the turn ends, "
                    f"were never committed: an earlier batch of this journal failed to commit ({failed}); "
                    "load the session to see what the store holds"
                ) from failed
            return
        self._verdicts.wait(self.flush())
        self.snapshot()

    def _refuse_after(self, failed: BaseException | None) -> None:
        if failed is not None:
            raise RuntimeError(
                f"session {self.session_id!r}: an earlier batch of this journal failed to commit ({failed}); "
                "nothing more is appended through it: reopen it with SessionJournal.open"
            ) from failed

    def _save(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot  # with the records still pending, if any: one commit
        self._verdicts.wait(self.flush())
        self._schedule.taken(snapshot)
