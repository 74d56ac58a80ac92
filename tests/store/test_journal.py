"""SessionJournal and load_state: what gets recorded, and loading = newest valid snapshot + fold of the tail."""

from __future__ import annotations

import zlib

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_core import (
    STATE_FORMAT,
    AgentConfig,
    AgentInput,
    AgentState,
    CompleteReAct,
    ContinueReAct,
    ReActObserved,
    SessionStarted,
    StateEncoder,
    ToolCallCompleted,
    ToolCallRequest,
    ToolDefinition,
    ToolSuccess,
    UserMessageReceived,
    Workflow,
    WorkflowActionTaken,
    WorkflowState,
    WorkflowTransition,
    encode_state,
    initial_state,
    replay,
    state_digest,
    state_hash,
    transition,
)
from agent_core.testing import sessions
from effects import (
    EventStore,
    MemoryStore,
    SessionJournal,
    Snapshot,
    load_state,
    turn_digest,
)

from .conftest import INPUTS_PER_TURN, Tamper, session


def test_a_turn_end_records_its_digest_and_nothing_else_does(store: EventStore) -> None:
    inputs = session(2)
    SessionJournal(store, "s1").append(inputs)
    recorded = list(store.read("s1"))
    ends = [r.seq for r in recorded if r.turn_digest is not None]
    assert ends == [1 + INPUTS_PER_TURN, 1 + 2 * INPUTS_PER_TURN]
    assert recorded[ends[0] - 1].turn_digest == turn_digest(replay(inputs[: ends[0]]))


@given(sessions(max_steps=40))
def test_a_turn_digest_is_the_same_bytes_with_an_encoder_kept_across_states(inputs: list[AgentInput]) -> None:
    encoder, bounded = StateEncoder(), StateEncoder(keep=4)
    state = initial_state()
    for inp in inputs:
        state = transition(state, inp)
        expected = turn_digest(state)
        assert turn_digest(state, encoder) == expected
        assert turn_digest(state, bounded) == expected
        assert encoder.encode(state) == encode_state(state, format="msgpack")  # the same encoder, for snapshots


def test_a_turn_digest_past_its_window_of_records_keeps_the_bytes_stores_hold() -> None:
    # 192 tool calls, three times the 64 newest a digest covers. The digest stores already hold for this state
    # (written by the code of 2026-11-28): a digest that read another window of records, or in another order,
    # would make every stored log look written by another reducer.
    state = replay(session(16))
    expected = "ca31af91b92b02a564e18d4ccf93450781c4ecf51b10ec376d6ceae82920794c"
    assert len(state.tool_call_log) == 192
    assert turn_digest(state).hex() == expected
    assert turn_digest(state, StateEncoder(keep=64)).hex() == expected


def test_an_encoder_with_keep_holds_only_the_newest_records_and_stays_exact() -> None:
    encoder = StateEncoder(keep=64)
    state = initial_state()
    for inp in session(16):  # 192 tool calls: more than a digest covers, so the encoder lets the oldest go
        state = transition(state, inp)
        assert turn_digest(state, encoder) == turn_digest(state)
        assert len(encoder) <= 2 * 64
    assert len(state.tool_call_log) > 2 * 64 > len(encoder)


def test_snapshots_every_n_inputs_carry_the_state_hash_also_recorded_in_the_log(store: EventStore) -> None:
    inputs = session(3)
    journal = SessionJournal(store, "s1", snapshot_every=40)
    for start in range(0, len(inputs), 7):
        journal.append(inputs[start : start + 7])
    snapshot = store.load_snapshot("s1")
    assert snapshot is not None and snapshot.seq == 84  # the batch that crossed 80 ended at 84
    assert snapshot.state_hash.hex() == state_hash(replay(inputs[:84]))
    marked = [r.seq for r in store.read("s1") if r.state_hash is not None]
    assert marked == [42, 84]


def test_load_state_equals_folding_the_inputs_at_every_point(store: EventStore) -> None:
    inputs = session(2)
    journal = SessionJournal(store, "s1", snapshot_every=10)
    for inp in inputs:
        journal.append([inp])
    for at in range(len(inputs) + 1):
        assert load_state(store, "s1", at) == replay(inputs[:at])
    assert load_state(store, "s1") == journal.state == replay(inputs)


def test_a_reopened_journal_continues_the_chain(store: EventStore) -> None:
    inputs = session(2)
    SessionJournal(store, "s1").append(inputs[:20])
    journal = SessionJournal.open(store, "s1")
    assert journal.seq == 20
    journal.append(inputs[20:])
    assert load_state(store, "s1") == replay(inputs)


def test_close_saves_a_snapshot_at_the_end(store: EventStore) -> None:
    journal = SessionJournal(store, "s1")
    journal.append(session(1))
    assert store.load_snapshot("s1") is None
    journal.close()
    snapshot = store.load_snapshot("s1")
    assert snapshot is not None and snapshot.seq == journal.seq


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(
            lambda s: Snapshot(seq=s.seq, schema_version=1, state_hash=s.state_hash, data=s.data), id="old-format"
        ),
        pytest.param(
            lambda s: Snapshot(seq=s.seq, schema_version=STATE_FORMAT, state_hash=bytes(32), data=s.data),
            id="wrong-hash",
        ),
        pytest.param(
            lambda s: Snapshot(seq=s.seq, schema_version=STATE_FORMAT, state_hash=s.state_hash, data=s.data[:-9]),
            id="cut",
        ),
    ],
)
def test_an_unusable_snapshot_is_ignored_and_the_log_folded(spoil, store: EventStore) -> None:  # type: ignore[no-untyped-def]
    inputs = session(2)
    journal = SessionJournal(store, "s1")
    journal.append(inputs)
    journal.close()
    good = store.load_snapshot("s1")
    assert good is not None
    store.save_snapshot("s1", spoil(good))
    assert load_state(store, "s1") == replay(inputs)


def format_1(state: AgentState) -> bytes:
    """The state as the release before numbered state formats wrote its snapshots: every field, no format."""
    doc = {name: getattr(state, name) for name in AgentState.__struct_fields__}
    del doc["message_index"], doc["tool_call_log"]
    doc |= {
        "schema_version": 1,
        "tools": state.tools.definitions,
        "messages": [msgspec.structs.asdict(m) for m in state.messages],
        "tool_calls": [msgspec.structs.asdict(state.tool_calls[i]) for i in state.tool_call_log],
        "audit": list(state.audit),
    }
    return msgspec.msgpack.encode(doc)


@pytest.mark.parametrize("version", [1, STATE_FORMAT], ids=["as-written", "mislabelled"])
def test_a_snapshot_written_before_state_formats_is_ignored_and_the_log_folded(version: int, store: EventStore) -> None:
    inputs = session(2)
    SessionJournal(store, "s1").append(inputs)
    old = format_1(replay(inputs[:-1]))  # one input short: read as if current, it would be a wrong state
    store.save_snapshot("s1", Snapshot(seq=len(inputs), schema_version=version, state_hash=state_digest(old), data=old))
    assert load_state(store, "s1") == replay(inputs)


def test_a_snapshot_that_disagrees_with_the_log_is_ignored(store: EventStore) -> None:
    """Its bytes hash correctly, but the log recorded another state hash at that record."""
    inputs = session(2)
    journal = SessionJournal(store, "s1", snapshot_every=30)
    journal.append(inputs[:30])
    journal.append(inputs[30:])
    other = SessionJournal(MemoryStore(), "x")
    other.append(inputs[:29])
    other.snapshot()
    foreign = other.store.load_snapshot("x")
    assert foreign is not None
    store.save_snapshot(
        "s1", Snapshot(seq=30, schema_version=STATE_FORMAT, state_hash=foreign.state_hash, data=foreign.data)
    )
    assert load_state(store, "s1", 40) == replay(inputs[:40])


def test_a_damaged_snapshot_blob_is_ignored(sql_store: tuple[EventStore, Tamper]) -> None:
    store, tamper = sql_store
    journal = SessionJournal(store, "s1")
    journal.append(session(1))
    journal.close()
    snapshot = store.load_snapshot("s1")
    assert snapshot is not None
    tamper("UPDATE {snapshots} SET data = ?", zlib.compress(snapshot.data)[:20])
    assert store.load_snapshot("s1") is None
    assert load_state(store, "s1") == replay(session(1))


def test_state_at_a_point_outside_the_log_is_refused(store: EventStore) -> None:
    SessionJournal(store, "s1").append(session(1))
    with pytest.raises(ValueError, match=r"session 's1' has records 1 to 33; got 34"):
        load_state(store, "s1", 34)


@given(sessions(max_steps=40), st.lists(st.integers(1, 6), min_size=1), st.integers(1, 12))
def test_any_session_in_any_batches_loads_back(inputs, batch_sizes, every) -> None:  # type: ignore[no-untyped-def]
    store = MemoryStore()
    journal = SessionJournal(store, "s", snapshot_every=every)
    position, sizes = 0, iter(batch_sizes * len(inputs))
    while position < len(inputs):
        size = next(sizes)
        journal.append(inputs[position : position + size])
        position += size
    expected = replay(inputs)
    assert load_state(store, "s") == expected
    middle = len(inputs) // 2
    assert load_state(store, "s", middle) == replay(inputs[:middle])


def states_after(inputs: list[AgentInput], state: AgentState | None = None) -> list[AgentState]:
    """The state after each input, as a machine passes them to its journal."""
    out = []
    state = state or initial_state()
    for inp in inputs:
        state = transition(state, inp)
        out.append(state)
    return out


def test_appending_with_the_states_records_what_folding_the_inputs_records() -> None:
    inputs = session(3)
    folded, given = MemoryStore(), MemoryStore()
    folding, trusting = SessionJournal(folded, "s", snapshot_every=20), SessionJournal(given, "s", snapshot_every=20)
    states = states_after(inputs)
    for start in range(0, len(inputs), 7):
        folding.append(inputs[start : start + 7])
        trusting.append(inputs[start : start + 7], states[start : start + 7])
    assert list(given.read("s")) == list(folded.read("s"))
    assert given.load_snapshot("s") == folded.load_snapshot("s")
    assert trusting.state == folding.state == replay(inputs)


def test_the_states_given_are_recorded_not_folded_again() -> None:
    """The journal takes the machine's states as they are: a state it was handed is what it snapshots."""
    inputs = session(1)
    states = states_after(inputs)
    handed = msgspec.structs.replace(states[-1], session_id="as handed")
    journal = SessionJournal(MemoryStore(), "s")
    journal.append(inputs, [*states[:-1], handed])
    assert journal.state is handed


def test_states_that_do_not_continue_the_journal_are_refused() -> None:
    inputs = session(2)
    journal = SessionJournal(MemoryStore(), "s")
    journal.append(inputs[:10])
    with pytest.raises(ValueError) as raised:
        journal.append(inputs[10:12], states_after(inputs[:2]))  # folded from the start, not from step 10
    assert str(raised.value) == (
        "SessionJournal.append expected 2 states ending at step 12 (session 's' is at step 10), got 2 ending "
        "at step 2; start the machine from the journal's state (journal.state), or append the inputs alone"
    )
    with pytest.raises(ValueError, match=r"expected 2 states ending at step 12 .*, got none;"):
        journal.append(inputs[10:12], [])
    assert journal.seq == 10


def test_a_workflow_audit_hashes_and_digests_as_it_did_when_it_was_a_tuple(store: EventStore) -> None:
    """The audit is a persistent vector; the state hash and the turn digest of a session with two moves
    are those recorded when it was a tuple (stores written then still verify)."""
    tools = (ToolDefinition(name="read"), ToolDefinition(name="write"))
    workflow = Workflow(
        states=(WorkflowState(name="a", tools=("read",)), WorkflowState(name="b", tools=("read", "write"))),
        initial="a",
        transitions=(
            WorkflowTransition(source="a", target="b", tool="read"),
            WorkflowTransition(source="b", target="a", action="back"),
        ),
    )
    inputs: list[AgentInput] = [
        SessionStarted(timestamp=1, session_id="s1", tools=tools, config=AgentConfig(workflow=workflow)),
        UserMessageReceived(timestamp=2, message_id="m", content="go"),
        ReActObserved(
            timestamp=3, called_llm_at=3, observation=ContinueReAct(tool_calls={"t1": ToolCallRequest(name="read")})
        ),
        ToolCallCompleted(timestamp=4, tool_call_id="t1", result=ToolSuccess(content="x")),
        WorkflowActionTaken(timestamp=5, action="back"),
        ReActObserved(timestamp=6, called_llm_at=6, observation=CompleteReAct()),
    ]
    SessionJournal(store, "s1").append(inputs)
    state = load_state(store, "s1")
    assert len(state.audit) == 2
    assert state_hash(state) == "4f0d99ff611b49e2c9bd09c05402e12bcbbe2b14038c7f4ae590242dd98c2a6b"
    digest = list(store.read("s1"))[-1].turn_digest
    assert digest is not None
    assert digest.hex() == "1ee6bca401b6b1b037bd3f2189ffbe3e9d0eb77f276712964945f6b5e2e45643"
