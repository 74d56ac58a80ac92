"""A stored session's AG-UI events, replayed from its log without a server."""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunStartedEvent

from agent_core import initial_state, transition
from effects import EventStore

from ._positions import Position, tag_of
from ._projection import AgUiProjection
from ._stream import META


def replayed(store: EventStore, session_id: str) -> list[dict[str, Any]]:
    """The events of every record of ``session_id``, each with ``metadata["agent-core"]["position"]``."""
    projection, state = AgUiProjection(), initial_state()
    out: list[dict[str, Any]] = []
    for record in store.read(session_id):
        inp = record.decode()
        after = transition(state, inp)
        for number, event in enumerate(projection.step(record.seq, inp, state, after)):
            position = str(Position(record.seq, number, 0, tag_of(record.hash)))
            stamped = event.model_copy(update={"metadata": {**(event.metadata or {}), META: {"position": position}}})
            out.append(stamped.model_dump(mode="json", by_alias=True))
        state = after
    return out


def runs_started_at(store: EventStore, session_id: str, seq: int) -> list[str]:
    """The ids of the runs record ``seq`` starts (folding the records up to it; nothing after it is read)."""
    projection, state = AgUiProjection(), initial_state()
    started: list[str] = []
    for record in store.read(session_id, 1, seq):
        inp = record.decode()
        after = transition(state, inp)
        events = projection.step(record.seq, inp, state, after)
        if record.seq == seq:
            started = [event.run_id for event in events if isinstance(event, RunStartedEvent)]
        state = after
    return started
