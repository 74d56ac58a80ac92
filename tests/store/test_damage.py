"""Damage is named and contained: a damaged log is never appended to, and replay does not blame the reducer."""

from __future__ import annotations

import pytest

from agent_core import Usage, encode_input, replay
from effects import (
    EventStore,
    LogDamaged,
    SessionJournal,
    chain_hash,
    open_session,
    replay_session,
)
from effects.testing import ManualClock, ScriptedModel, say

from .conftest import INPUTS_PER_TURN, START, Tamper, session


@pytest.fixture
def damaged(sql_store: tuple[EventStore, Tamper]) -> tuple[EventStore, Tamper]:
    """A SQL store holding session ``s1`` (three turns, snapshots every 40 inputs and at the end)."""
    store, tamper = sql_store
    journal = SessionJournal(store, "s1", snapshot_every=40)
    for inp in session(3):
        journal.append([inp])
    journal.close()
    return store, tamper


@pytest.mark.anyio
async def test_a_damaged_record_before_the_snapshot_refuses_to_resume_and_names_it(
    damaged: tuple[EventStore, Tamper],
) -> None:
    store, tamper = damaged
    tamper("UPDATE {inputs} SET hash = ? WHERE seq = 5", bytes(16))
    length = store.session("s1").length
    with pytest.raises(LogDamaged) as raised:
        async with open_session(store, "s1", ScriptedModel([say("hi")]), clock=ManualClock(START + 10)):
            pass
    assert raised.value.record == 5
    assert str(raised.value) == (
        "session 's1', record 5: its bytes do not match its hash (changed, or copied from elsewhere); the log is "
        "damaged from here on (restore it from a backup or an export, or fork the session before this record)"
    )
    assert store.session("s1").length == length


def test_a_record_changed_with_its_own_hash_is_damage_not_a_changed_reducer(
    damaged: tuple[EventStore, Tamper],
) -> None:
    store, tamper = damaged
    end = 1 + INPUTS_PER_TURN  # the first turn's last record: its turn digest no longer matches
    inputs = session(3)
    changed = encode_input(
        inputs[end - 1].__class__(**{**_fields(inputs[end - 1]), "usage": Usage(input_tokens=7, output_tokens=7)}),
        format="msgpack",
    )
    previous = next(iter(store.read("s1", end - 1, end - 1))).hash
    tamper(
        "UPDATE {inputs} SET codec = 0, data = ?, hash = ? WHERE seq = ?", changed, chain_hash(previous, changed), end
    )
    with pytest.raises(LogDamaged) as raised:
        replay_session(store, "s1")
    assert raised.value.record == end
    assert raised.value.problem == (
        f"replay diverges here (turn digest) and the hash chain fails at record {end + 1} (its bytes do not match "
        "its hash (changed, or copied from elsewhere)): this may be storage damage rather than a changed reducer"
    )
    assert replay(inputs[: end - 1]) == replay_session(store, "s1", until=end - 1).state


def _fields(inp: object) -> dict[str, object]:
    return {name: getattr(inp, name) for name in inp.__struct_fields__}  # type: ignore[attr-defined]
