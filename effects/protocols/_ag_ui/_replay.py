"""A stored session's AG-UI events, replayed from its log without a server."""

from __future__ import annotations

from typing import Any

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
