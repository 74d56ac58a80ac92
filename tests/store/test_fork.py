"""fork_session: a new log starting with a prefix of another, which records where it came from."""

from __future__ import annotations

import pytest

from agent_core import UserMessageReceived, replay
from effects import EventStore, Origin, SessionExists, SessionJournal, fork_session, load_state

from .conftest import session


def test_a_fork_copies_the_prefix_with_its_chain_and_records_its_parent(store: EventStore) -> None:
    inputs = session(2)
    SessionJournal(store, "s1").append(inputs)
    journal = fork_session(store, "s1", 20)
    assert journal.session_id == "s1@20"
    fork = store.session("s1@20")
    assert (fork.length, fork.parent) == (20, Origin(session_id="s1", seq=20))
    assert list(store.read("s1@20")) == list(store.read("s1", 1, 20))
    assert load_state(store, "s1@20") == replay(inputs[:20])


def test_continuing_a_fork_leaves_the_parent_alone(store: EventStore) -> None:
    """Rollback: fork before the second turn and send another message there."""
    inputs = session(2)
    SessionJournal(store, "s1").append(inputs)
    first_turn = len(session(1))
    journal = fork_session(store, "s1", first_turn, new_id="retry")
    other = UserMessageReceived(timestamp=journal.state.timestamp, message_id="u-other", content="another question")
    journal.append([other])
    assert load_state(store, "retry") == replay([*inputs[:first_turn], other])
    assert load_state(store, "s1") == replay(inputs)


def test_fork_ids_do_not_collide(store: EventStore) -> None:
    SessionJournal(store, "s1").append(session(1))
    assert [fork_session(store, "s1", 5).session_id for _ in range(3)] == ["s1@5", "s1@5.2", "s1@5.3"]
    with pytest.raises(SessionExists, match=r"session 's1@5' already exists \(5 inputs\); choose another id"):
        fork_session(store, "s1", 5, new_id="s1@5")


def test_a_fork_point_outside_the_log_is_refused(store: EventStore) -> None:
    SessionJournal(store, "s1").append(session(0))
    with pytest.raises(ValueError, match=r"session 's1' has records 1 to 1; cannot fork at 2"):
        fork_session(store, "s1", 2)
