"""A worker whose append was committed but answered with an error: the retry finds the batch there, and the session
goes on (the journal that saw the error is not used again; it would refuse every later batch)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from temporalio.client import Client

from agent_core import UserMessageReceived
from effects import Origin, PostgresStore, StoredInput, StoreUnavailable
from effects.temporal import session_worker, start_session, submit, turn_done
from effects.testing import ScriptedModel, say

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class LosesAnAnswer:
    """A store of one's own around PostgreSQL that commits each batch alone and, when told, reports the next one
    failed after writing it: what a connection lost before a commit's answer looks like."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.lose_next = False

    def append(
        self, session_id: str, records: Sequence[StoredInput], *, expected: int, parent: Origin | None = None
    ) -> None:
        self.store.append(session_id, records, expected=expected, parent=parent)
        if self.lose_next:
            self.lose_next = False
            raise StoreUnavailable("the connection dropped before the commit's answer came back")

    def __getattr__(self, name: str) -> Any:
        if name == "submit":  # no writer of its own: every batch goes through append above
            raise AttributeError(name)
        return getattr(self.store, name)


async def test_a_session_goes_on_after_a_committed_append_was_answered_with_an_error(
    temporal_server, postgres_dsn: str
) -> None:
    client = await Client.connect(temporal_server.address)
    store = PostgresStore(postgres_dsn)
    flaky = LosesAnAnswer(store)
    queue = f"q-{uuid.uuid4().hex}"
    async with session_worker(client, flaky, ScriptedModel([say("one"), say("two")]), task_queue=queue):  # type: ignore[arg-type]
        await start_session(client, "l-1", task_queue=queue)
        flaky.lose_next = True  # the user's message is committed, its answer lost: the activity is retried
        seq = await submit(client, "l-1", UserMessageReceived(timestamp=0, message_id="u-1", content="first"))
        with anyio.fail_after(30):  # the turn's own appends come after the lost answer
            first = await turn_done(store, "l-1", seq)
            seq = await submit(client, "l-1", UserMessageReceived(timestamp=0, message_id="u-2", content="second"))
            second = await turn_done(store, "l-1", seq)
    assert [m.content for m in first.messages] == ["first", "one"]
    assert [m.content for m in second.messages] == ["first", "one", "second", "two"]
    store.close()
