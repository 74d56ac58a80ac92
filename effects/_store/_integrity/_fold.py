"""Folding stored records into a state, checking the hash chain and, on request, the recorded hashes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from agent_core import (
    AgentInput,
    AgentState,
    DecodeError,
    InvalidInput,
    StateEncoder,
    initial_state,
    state_digest,
    tag_of,
    transition,
)

from .._errors import LogDamaged, ReplayDiverged
from .._records import GENESIS, StoredInput, chain_hash
from ._digest import RECENT_TOOL_CALLS, turn_digest


class Position(NamedTuple):
    """A point in a session: the state after record ``seq``, and that record's chain hash ``head``."""

    state: AgentState
    seq: int
    head: bytes

    @classmethod
    def start(cls) -> Position:
        """Before the first record: the initial state, record 0, the chain's genesis hash."""
        return cls(initial_state(), 0, GENESIS)


Step = Callable[[StoredInput, AgentInput, AgentState, AgentState], None]
"""Called after each record with the record, its input, the state before and the state after."""


def fold(
    session_id: str,
    records: Iterable[StoredInput],
    start: Position,
    stop: int,
    *,
    digests: bool = True,
    states: bool = False,
    on_step: Step | None = None,
) -> Position:
    """Apply ``records`` (which must continue ``start``) up to record ``stop``.

    Always checks numbering and the hash chain (:class:`LogDamaged`) and that
    the reducer accepts each input (:class:`ReplayDiverged`). ``digests``
    also compares recorded turn digests, ``states`` the recorded full state
    hashes (costly on long sessions: it encodes the whole state).
    """
    state, seq, head = start
    encoder = StateEncoder(keep=RECENT_TOOL_CALLS)  # the newest tool-call records, encoded once for the digests
    for record, inp, chained in _verified(session_id, records, stop, seq, start.head):
        after = _apply(session_id, record, inp, state)
        if digests:
            _check_turn(session_id, record, inp, state, after, encoder)
        if states and record.state_hash is not None:
            _compare(session_id, record, inp, "state hash", record.state_hash, state_digest(after))
        if on_step is not None:
            on_step(record, inp, state, after)
        state, seq, head = after, record.seq, chained
    return Position(state, seq, head)


def _verified(
    session_id: str, records: Iterable[StoredInput], stop: int, seq: int, head: bytes
) -> Iterator[tuple[StoredInput, AgentInput, bytes]]:
    """Each record after ``seq`` up to ``stop`` with its decoded input and chain hash (see :func:`chained`)."""
    for record, chained_hash in chained(session_id, records, stop, seq, head):
        yield record, _decode(session_id, record), chained_hash


def chained(
    session_id: str, records: Iterable[StoredInput], stop: int, seq: int = 0, head: bytes = GENESIS
) -> Iterator[tuple[StoredInput, bytes]]:
    """Each record after ``seq`` up to ``stop`` with its chain hash, after checking its number and its place
    in the hash chain, without decoding it; raises :class:`LogDamaged` where the log is broken."""
    for record in records:
        if record.seq > stop:
            break
        seq += 1
        if record.seq != seq:
            raise LogDamaged(
                session_id, seq, f"found record {record.seq} where record {seq} belongs (missing or moved)"
            )
        head = chain_hash(head, record.data)
        if head != record.hash:
            raise LogDamaged(session_id, seq, "its bytes do not match its hash (changed, or copied from elsewhere)")
        yield record, head
    if seq < stop:
        raise LogDamaged(session_id, seq + 1, f"record is missing: the log ends at record {seq}, expected {stop}")


def _decode(session_id: str, record: StoredInput) -> AgentInput:
    try:
        return record.decode()
    except DecodeError as error:
        raise DecodeError(error.detail, record=record.seq, path=error.path, source=f"session {session_id!r}") from None


def _apply(session_id: str, record: StoredInput, inp: AgentInput, state: AgentState) -> AgentState:
    try:
        return transition(state, inp)
    except InvalidInput as error:
        rejection = error.rejection
        raise ReplayDiverged(
            session_id,
            record.seq,
            tag_of(inp),
            "acceptance",
            "accepted",
            f"rejected ({rejection})",
            rejection_code=rejection.code,
        ) from None


def _check_turn(
    session_id: str,
    record: StoredInput,
    inp: AgentInput,
    before: AgentState,
    after: AgentState,
    encoder: StateEncoder,
) -> None:
    ended = before.turn is not None and after.turn is None
    if record.turn_digest is None and not ended:
        return
    if record.turn_digest is None or not ended:
        expected, actual = ("a turn end", "an open turn") if not ended else ("an open turn", "a turn end")
        raise ReplayDiverged(session_id, record.seq, tag_of(inp), "turn state", expected, actual)
    _compare(session_id, record, inp, "turn digest", record.turn_digest, turn_digest(after, encoder))


def _compare(session_id: str, record: StoredInput, inp: AgentInput, kind: str, expected: bytes, actual: bytes) -> None:
    if expected != actual:
        raise ReplayDiverged(session_id, record.seq, tag_of(inp), kind, expected.hex(), actual.hex())


def checked_inputs(session_id: str, records: Iterable[StoredInput], stop: int) -> Iterable[AgentInput]:
    """The inputs of records ``1..stop``, checking numbering and the hash chain but not folding them."""
    for _, inp, _ in _verified(session_id, records, stop, 0, GENESIS):
        yield inp
