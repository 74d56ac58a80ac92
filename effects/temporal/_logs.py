"""The worker's side of the log: open a session, append the workflow's batches, load the state at a record.

One :class:`SessionJournal` per session is kept between calls, so appending
and loading the state the workflow just committed cost no fold. A journal that
is behind (the workflow moved to this worker from another) is opened again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from msgspec import json as msgjson
from msgspec.structs import replace

from agent_core import (
    AgentConfig,
    AgentInput,
    AgentState,
    SessionStarted,
    ToolDefinition,
    decode_input,
    encode_input,
)

from .._agent import complete_interrupted
from .._store import EventStore, SessionJournal, load_state, session_exists
from ._wire import Appended

_CONFIG = msgjson.Decoder(AgentConfig)


def _timeless(inp: AgentInput) -> bytes:
    """``inp`` as bytes without its timestamp: how a retried workflow task's input is matched with the logged one."""
    return encode_input(replace(inp, timestamp=0), format="msgpack")


class SessionLogs:
    """Thread-safe access to the sessions' logs in ``store`` (calls run in worker threads)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._journals: dict[str, SessionJournal] = {}
        self._lock = threading.Lock()

    def open(
        self, session_id: str, seq: int, config: str, default: AgentConfig, tools: Sequence[ToolDefinition], now_ms: int
    ) -> tuple[int, AgentState]:
        """The log's length and state after record ``seq``; a new session is started first, an adopted one (``seq`` 0) resumed.

        A new session gets ``config`` (JSON; ``""``: ``default``, the worker's) and the worker's ``tools``.

        Adopting a log written elsewhere completes its interrupted
        non-idempotent tool calls with a failure, as a single process resuming does.
        """
        with self._lock:
            if seq == 0 and not session_exists(self.store, session_id):
                journal = SessionJournal(self.store, session_id)
                journal.append([self._started(session_id, config, default, tools, now_ms)])
            else:
                journal = SessionJournal.open(self.store, session_id)
                if seq == 0:
                    complete_interrupted(journal, now_ms)
                elif journal.seq != seq:
                    raise ValueError(
                        f"session {session_id!r}: the workflow resumes after record {seq}, the log has "
                        f"{journal.seq}; another writer appended to it (run each session in one place only)"
                    )
            self._journals[session_id] = journal
            return journal.seq, journal.state

    @staticmethod
    def _started(
        session_id: str, config: str, default: AgentConfig, tools: Sequence[ToolDefinition], now_ms: int
    ) -> SessionStarted:
        parsed = _CONFIG.decode(config) if config else default
        return SessionStarted(timestamp=now_ms, session_id=session_id, config=parsed, tools=tuple(tools))

    def append(self, session_id: str, expected: int, inputs: Sequence[str]) -> Appended:
        """Append the batch after record ``expected``; returns the length after it.

        A retry of a batch that was committed (its answer lost) finds the log
        holding the batch's inputs, or their first ones (the rest are
        appended), and succeeds without writing them twice. A log holding the
        batch's inputs with other timestamps (an earlier attempt of the
        workflow task wrote them, and maybe the batches after) is answered
        with those records, to adopt (see :class:`Appended`). Records of
        another writer raise ``ValueError``.
        """
        decoded: list[AgentInput] = [decode_input(i.encode(), format="json") for i in inputs]
        with self._lock:
            journal = self._journal(session_id)
            written = self._written(session_id, expected, min(journal.seq, expected + len(decoded)))
            shared = min(len(written), len(decoded))
            if written[:shared] != [encode_input(inp, format="msgpack") for inp in decoded[:shared]]:
                logged = [decode_input(data, format="msgpack") for data in written[:shared]]
                if list(map(_timeless, logged)) != list(map(_timeless, decoded[:shared])):
                    raise ValueError(
                        f"session {session_id!r}: expected the log to have {expected} records before this batch, "
                        f"it has {journal.seq} and record {expected + 1} on are not this batch; another writer "
                        "appended to it (run each session in one place only)"
                    )
                return Appended(expected, [encode_input(inp, format="json").decode() for inp in logged])
            if shared < len(decoded):
                try:
                    journal.append(decoded[shared:])
                except Exception:
                    # A journal whose commit failed refuses every later batch, even once its batch proves committed
                    # (the answer lost, not the commit): the retry opens the log again and looks.
                    del self._journals[session_id]
                    raise
            return Appended(expected + len(decoded))

    def _written(self, session_id: str, expected: int, length: int) -> list[bytes]:
        """The records after ``expected`` up to ``length`` (as a journal encodes them): none when ``length`` is
        ``expected``. The batch is compared with at most as many records as it has."""
        if length < expected:
            raise ValueError(
                f"session {session_id!r}: expected the log to have {expected} records before this batch, it has "
                f"{length}: the log lost records or is another session's (restore it or name the right store)"
            )
        return (
            [record.data for record in self.store.read(session_id, expected + 1, length)] if length > expected else []
        )

    def state_at(self, session_id: str, seq: int) -> AgentState:
        """The state after record ``seq``: the journal's own when it is there, else loaded from the store."""
        with self._lock:
            journal = self._journals.get(session_id)
            if journal is not None and journal.seq == seq:
                return journal.state
        return load_state(self.store, session_id, seq)

    def _journal(self, session_id: str) -> SessionJournal:
        journal = self._journals.get(session_id)
        if journal is None or journal.seq != self.store.session(session_id).length:
            journal = SessionJournal.open(self.store, session_id)
            self._journals[session_id] = journal
        return journal
