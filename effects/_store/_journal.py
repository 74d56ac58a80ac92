"""``SessionJournal``: writes a session's inputs to a store, as the machine's journal."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from agent_core import (
    SCHEMA_VERSION,
    STATE_FORMAT,
    AgentInput,
    AgentState,
    encode_input,
    encode_state,
    state_digest,
    transition,
)

from ._digest import turn_digest
from ._fold import Position
from ._load import load_for_append
from ._protocol import EventStore
from ._records import Origin, Snapshot, StoredInput, chain_hash

DEFAULT_SNAPSHOT_EVERY = 500
"""Inputs between snapshots (at least): bounds the fold on load to a few milliseconds."""

SNAPSHOT_BYTES_PER_INPUT = 2048
"""A snapshot of ``n`` bytes waits at least ``n / 2048`` inputs for the next one.

Writing a snapshot costs time in proportion to the state (about 230 ms for
21 MB at 100,000 inputs, measured by ``benchmarks/store.py``), so a fixed
interval would make appends slower as the session grows. With this spacing
snapshots cost a bounded share of appending, and the fold on load stays in
proportion to the snapshot's own load time.
"""

Encoded = tuple[AgentInput, int, bytes]
"""An input with the schema version and MessagePack bytes it is stored as."""


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
    ) -> None:
        self.store = store
        self.session_id = session_id
        self._position = position or Position.start()
        self._every = max(1, snapshot_every)
        self._parent = parent
        self._snapshot_seq = snapshot_seq
        self._next_snapshot = snapshot_seq + self._every

    @classmethod
    def open(
        cls, store: EventStore, session_id: str, *, snapshot_every: int = DEFAULT_SNAPSHOT_EVERY
    ) -> SessionJournal:
        """A journal continuing an existing session (loaded from its snapshot and tail).

        Raises :class:`LogDamaged` when any record fails the hash chain: nothing is appended to a damaged log.
        """
        position, used = load_for_append(store, session_id)
        return cls(store, session_id, position=position, snapshot_every=snapshot_every, snapshot_seq=used)

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
        if inputs:
            encoded = [(inp, SCHEMA_VERSION, encode_input(inp, format="msgpack")) for inp in inputs]
            self._commit(encoded, self._fold(inputs) if states is None else self._continuing(inputs, states))

    def append_encoded(self, batch: Sequence[Encoded]) -> None:
        """Commit inputs already encoded, possibly of an older schema version (imports keep their bytes)."""
        self._commit(batch, self._fold([inp for inp, _, _ in batch]))

    def _fold(self, inputs: Sequence[AgentInput]) -> list[AgentState]:
        state = self._position.state
        states = []
        for inp in inputs:
            state = transition(state, inp)
            states.append(state)
        return states

    def _continuing(self, inputs: Sequence[AgentInput], states: Sequence[AgentState]) -> Sequence[AgentState]:
        step = self._position.state.step + len(inputs)
        if len(states) != len(inputs) or states[-1].step != step:
            got = f"{len(states)} ending at step {states[-1].step}" if states else "none"
            raise ValueError(
                f"SessionJournal.append expected {len(inputs)} states ending at step {step} (session "
                f"{self.session_id!r} is at step {self._position.state.step}), got {got}; start the machine "
                "from the journal's state (journal.state), or append the inputs alone"
            )
        return states

    def _commit(self, batch: Sequence[Encoded], states: Sequence[AgentState]) -> None:
        state, seq, head = self._position
        records: list[StoredInput] = []
        for (_, version, data), after in zip(batch, states, strict=True):
            seq += 1
            head = chain_hash(head, data)
            ended = state.turn is not None and after.turn is None
            digest = turn_digest(after) if ended else None
            records.append(StoredInput(seq=seq, schema_version=version, data=data, hash=head, turn_digest=digest))
            state = after
        snapshot = None
        if seq >= self._next_snapshot:
            snapshot = _snapshot(state, seq)
            records[-1] = replace(records[-1], state_hash=snapshot.state_hash)
        parent = self._parent if self.seq == 0 else None
        self.store.append(self.session_id, records, expected=self.seq, parent=parent)
        self._position = Position(state, seq, head)
        if snapshot is not None:
            self._save(snapshot)

    def snapshot(self) -> None:
        """Save a snapshot of the current state now, unless the newest one is already there."""
        if self.seq and self._snapshot_seq != self.seq:
            self._save(_snapshot(self.state, self.seq))

    def close(self) -> None:
        """Save a final snapshot, so the next load folds nothing. The store stays open."""
        self.snapshot()

    def _save(self, snapshot: Snapshot) -> None:
        self.store.save_snapshot(self.session_id, snapshot)
        self._snapshot_seq = snapshot.seq
        self._next_snapshot = snapshot.seq + max(self._every, len(snapshot.data) // SNAPSHOT_BYTES_PER_INPUT)


def _snapshot(state: AgentState, seq: int) -> Snapshot:
    data = encode_state(state, format="msgpack")
    return Snapshot(seq=seq, schema_version=STATE_FORMAT, state_hash=state_digest(data), data=data)
