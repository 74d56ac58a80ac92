"""How a journal turns a batch into records: the state after each input, the hash chain, turn digests."""

from __future__ import annotations

from collections.abc import Sequence

from agent_core import AgentInput, AgentState, StateEncoder, transition

from .._records import StoredInput, chain_hash
from ._digest import turn_digest
from ._fold import Position

Encoded = tuple[AgentInput, int, bytes]
"""An input with the schema version and MessagePack bytes it is stored as."""


def fold_inputs(state: AgentState, inputs: Sequence[AgentInput]) -> list[AgentState]:
    """The state after each of ``inputs``, from ``state``; an invalid input raises :class:`~agent_core.InvalidInput`."""
    states = []
    for inp in inputs:
        state = transition(state, inp)
        states.append(state)
    return states


def continuing(
    session_id: str, state: AgentState, inputs: Sequence[AgentInput], states: Sequence[AgentState]
) -> Sequence[AgentState]:
    """``states``, once checked to continue ``state`` (their count and last ``step``; the rest is trusted)."""
    step = state.step + len(inputs)
    if len(states) != len(inputs) or states[-1].step != step:
        got = f"{len(states)} ending at step {states[-1].step}" if states else "none"
        raise ValueError(
            f"SessionJournal.append expected {len(inputs)} states ending at step {step} (session "
            f"{session_id!r} is at step {state.step}), got {got}; start the machine "
            "from the journal's state (journal.state), or append the inputs alone"
        )
    return states


def chain(
    position: Position,
    batch: Sequence[Encoded],
    states: Sequence[AgentState],
    records: list[StoredInput],
    encoder: StateEncoder | None = None,
) -> Position:
    """Append the records of ``batch`` (``states``: the state after each) to ``records``; returns the new position.

    Each record carries its chain hash, and a turn digest where a turn ended (``encoder``: the session's, which
    encodes each tool-call record once).
    """
    state, seq, head = position
    for (_, version, data), after in zip(batch, states, strict=True):
        seq += 1
        head = chain_hash(head, data)
        digest = turn_digest(after, encoder) if state.turn is not None and after.turn is None else None
        records.append(StoredInput(seq=seq, schema_version=version, data=data, hash=head, turn_digest=digest))
        state = after
    return Position(state, seq, head)
