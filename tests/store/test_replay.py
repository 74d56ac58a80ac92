"""replay_session: the hash chain catches damage, the recorded hashes catch a reducer that changed."""

from __future__ import annotations

import pytest

from agent_core import ToolCallStarted, encode_input, replay, state_hash
from effects import (
    EventStore,
    LogDamaged,
    MemoryStore,
    ReplayDiverged,
    SessionJournal,
    StoredInput,
    chain_hash,
    replay_session,
    turn_digest,
)

from .conftest import INPUTS_PER_TURN, Tamper, session

Logged = tuple[EventStore, Tamper]


@pytest.fixture
def logged(sql_store: Logged) -> Logged:
    """A SQL store with one three-turn session, snapshots every 40 inputs, and a way to damage it."""
    store, _ = sql_store
    journal = SessionJournal(store, "s1", snapshot_every=40)
    for inp in session(3):
        journal.append([inp])
    return sql_store


def test_a_clean_log_replays_and_reports_what_it_checked(logged: Logged) -> None:
    store, _ = logged
    report = replay_session(store, "s1")
    assert (report.records, report.turns_checked, report.states_checked) == (len(session(3)), 3, 2)
    assert report.state == replay(session(3))
    assert report.state_hash == state_hash(report.state)


def test_progress_reaches_the_end(logged: Logged) -> None:
    store, _ = logged
    seen: list[tuple[int, int]] = []
    replay_session(store, "s1", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(session(3)), len(session(3)))


def test_until_stops_early(logged: Logged) -> None:
    store, _ = logged
    report = replay_session(store, "s1", until=10)
    assert report.records == 10 and report.state == replay(session(3)[:10])


@pytest.mark.parametrize(
    ("damage", "record", "problem"),
    [
        (
            "UPDATE {inputs} SET codec = 0, data = ? WHERE seq = 5",
            5,
            "its bytes do not match its hash (changed, or copied from elsewhere)",
        ),
        (
            "UPDATE {inputs} SET seq = -seq WHERE seq IN (7, 8); UPDATE {inputs} SET seq = 8 WHERE seq = -7; "
            "UPDATE {inputs} SET seq = 7 WHERE seq = -8",
            7,
            "its bytes do not match its hash (changed, or copied from elsewhere)",
        ),
        ("DELETE FROM {inputs} WHERE seq = 9", 9, "found record 10 where record 9 belongs (missing or moved)"),
        ("DELETE FROM {inputs} WHERE seq > 90", 91, "record is missing: the log ends at record 90, expected 97"),
    ],
    ids=["changed-byte", "swapped", "missing", "truncated"],
)
def test_damage_is_reported_with_its_record_number(logged: Logged, damage: str, record: int, problem: str) -> None:
    store, tamper = logged
    fifth = next(iter(store.read("s1", 5, 5))).data
    flipped = fifth[:9] + bytes([fifth[9] ^ 1]) + fifth[10:]
    for statement in damage.split("; "):
        tamper(statement, *([flipped] if "?" in statement else []))
    with pytest.raises(LogDamaged) as raised:
        replay_session(store, "s1")
    assert (raised.value.record, raised.value.problem) == (record, problem)
    assert str(raised.value) == (
        f"session 's1', record {record}: {problem}; the log is damaged from here on "
        "(restore it from a backup or an export, or fork the session before this record)"
    )


def test_a_changed_turn_outcome_is_a_divergence_at_that_turn_end(logged: Logged) -> None:
    store, tamper = logged
    end = 1 + 2 * INPUTS_PER_TURN
    tamper("UPDATE {inputs} SET turn_digest = ? WHERE seq = ?", bytes(32), end)
    with pytest.raises(ReplayDiverged) as raised:
        replay_session(store, "s1")
    error = raised.value
    assert (error.record, error.input_type, error.kind, error.expected) == (
        end,
        "re-act-observed",
        "turn digest",
        "00" * 32,
    )
    assert error.actual == turn_digest(replay(session(3)[:end])).hex()
    assert str(error).startswith(
        f"session 's1' diverges at record {end} (re-act-observed): the log recorded turn digest 0000"
    )
    assert str(error).endswith(
        "the reducer's behaviour changed: keep the old release for this log, or fork it before this record; "
        "if an older release wrote this store, export the session (agent-core export) and import it into a new "
        "store (agent-core import) to record this release's hashes"
    )
    assert error.written_by is None  # its snapshots are of this release's state format


def test_a_changed_state_is_a_divergence_at_the_snapshot_point(logged: Logged) -> None:
    store, tamper = logged
    tamper("UPDATE {inputs} SET state_hash = ? WHERE seq = 40", bytes(32))
    with pytest.raises(ReplayDiverged) as raised:
        replay_session(store, "s1")
    assert (raised.value.record, raised.value.kind) == (40, "state hash")
    assert raised.value.actual == state_hash(replay(session(3)[:40]))
    assert replay_session(store, "s1", verify=False).records == len(session(3))


def test_a_turn_that_no_longer_ends_where_the_log_says_is_a_divergence(logged: Logged) -> None:
    store, tamper = logged
    tamper("UPDATE {inputs} SET turn_digest = NULL WHERE seq = ?", 1 + INPUTS_PER_TURN)
    with pytest.raises(ReplayDiverged) as raised:
        replay_session(store, "s1")
    assert (raised.value.kind, raised.value.expected, raised.value.actual) == (
        "turn state",
        "an open turn",
        "a turn end",
    )


def test_an_input_the_reducer_now_refuses_is_a_divergence() -> None:
    store = MemoryStore()
    journal = SessionJournal(store, "s1")
    journal.append(session(0))
    refused = encode_input(ToolCallStarted(timestamp=1, tool_call_id="ghost"), format="msgpack")
    head = store.session("s1").head
    store.append("s1", [StoredInput(seq=2, schema_version=1, data=refused, hash=chain_hash(head, refused))], expected=1)
    with pytest.raises(ReplayDiverged) as raised:
        replay_session(store, "s1")
    assert (raised.value.record, raised.value.kind, raised.value.expected) == (2, "acceptance", "accepted")
    assert raised.value.actual.startswith("rejected (timestamp 1 is earlier than the state's")
