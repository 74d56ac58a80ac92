"""What the PostgreSQL group writer sends comes back byte for byte: small and large records, digests set and unset, and one
``NOTIFY`` per session written, for a group of several sessions."""

from __future__ import annotations

import hashlib

from agent_core import AgentInput, UserMessageReceived, replay
from effects import PostgresStore, SessionJournal, replay_session

from .conftest import START, session
from .test_postgres_group import held, psycopg, wait_all


def noise(size: int) -> str:
    """Text that compresses poorly (hex digits of hashes)."""
    digests = b"".join(hashlib.sha256(bytes([n % 256, n // 256])).digest() for n in range(size // 32 + 1))
    return digests.hex()[:size]


def with_message(session_id: str, content: str) -> list[AgentInput]:
    """A one-turn session whose first user message is ``content``."""
    inputs = session(1, session_id=session_id)
    inputs[1] = UserMessageReceived(timestamp=START + 1, message_id="u0", content=content)
    return inputs


def test_a_group_of_sessions_reads_back_exactly_and_notifies_each_session(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    logs = {
        "noise": with_message("noise", noise(3000)),  # large and hardly compressible
        "long": with_message("long", "the same words again " * 300),  # over 1 KiB: the large window
        "plain": session(2, session_id="plain"),  # small records, turn digests at each turn's end
    }
    with psycopg().connect(postgres_dsn, autocommit=True) as listener:
        listener.execute("LISTEN agent_core_inputs")
        before = store.commits
        with held(postgres_dsn, store, "blocker"):
            pending = [SessionJournal(store, name).submit(inputs) for name, inputs in logs.items()]
        assert wait_all(pending) == [None, None, None]
        assert store.commits - before == 3  # the blocker's session, its held batch, then the three sessions at once
        notified = [n.payload for n in listener.notifies(timeout=1, stop_after=5)]
    assert sorted(notified) == ["blocker", "blocker", "long", "noise", "plain"]  # the blocker: two commits
    for name, inputs in logs.items():
        assert [r.decode() for r in store.read(name)] == inputs
        assert replay_session(store, name, verify=True).state == replay(inputs)
    with psycopg().connect(postgres_dsn) as db:
        digests = db.execute("SELECT count(*) FROM agent_core_inputs WHERE turn_digest IS NOT NULL").fetchone()
    assert digests is not None and digests[0] >= 4
    store.close()
