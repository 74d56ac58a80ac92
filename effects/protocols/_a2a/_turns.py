"""A session's turns as A2A tasks, read from its log: one fold gives every turn's messages and how it ended.

A2A's ``contextId`` is the session, and each turn is a task, ``<session>:<turn>``:
its history is the turn's messages (the user's, the agent's), its state is the
turn's (working; input-required while it waits for a person; completed,
canceled, or failed with the reason), and a completed turn's answer is its
artifact. Everything comes from the log, so a task read after a restart is
the task a client saw live.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core import AgentState, ToolCallRecord, TurnOutcome, initial_state, transition
from effects import EventStore

SEPARATOR = ":"
"""Between a task id's session and turn number."""


@dataclass
class TurnView:
    """One turn of a session: its messages (ids, in order), how it ended (``None`` while open), its times."""

    number: int
    message_ids: list[str] = field(default_factory=list)
    outcome: TurnOutcome | None = None
    started_at: int = 0
    updated_at: int = 0


@dataclass
class SessionView:
    """A session folded: its final state and every turn."""

    state: AgentState
    turns: dict[int, TurnView]

    def pending(self, number: int) -> list[ToolCallRecord]:
        """The tool calls turn ``number`` waits on a person for (none unless it is open and paused)."""
        turn = self.state.turn
        if turn is None or turn.number != number or turn.open_call_ids:
            return []
        return [self.state.tool_calls[i] for i in turn.awaiting_ids]

    def answer(self, number: int) -> str:
        """The turn's last message from the agent (its answer), or ``""``."""
        messages, index = self.state.messages, self.state.message_index
        for message_id in reversed(self.turns[number].message_ids):
            message = messages[index[message_id]]
            if message.role == "assistant" and message.content:
                return message.content
        return ""


def task_id(session_id: str, number: int) -> str:
    """The A2A task id of turn ``number`` of ``session_id``."""
    return f"{session_id}{SEPARATOR}{number}"


def parse_task_id(text: str) -> tuple[str, int] | None:
    """``(session, turn)`` of a task id this server gave, or ``None``."""
    session_id, separator, number = text.rpartition(SEPARATOR)
    if not separator or not session_id or not number.isdigit() or len(number) > 9:
        return None
    return session_id, int(number)


def fold_session(store: EventStore, session_id: str) -> SessionView:
    """Fold the session's log into its turns (reads every record; raises ``SessionNotFound``)."""
    state = initial_state()
    turns: dict[int, TurnView] = {}
    for record in store.read(session_id):
        inp = record.decode()
        after = transition(state, inp)
        old, new = state.turn, after.turn
        if old is not None and (new is None or new.number != old.number):
            ended = turns[old.number]
            ended.outcome, ended.updated_at = after.last_outcome, inp.timestamp
        if new is not None:
            current = turns.setdefault(new.number, TurnView(new.number, started_at=inp.timestamp))
            current.updated_at = inp.timestamp
            current.message_ids.extend(m.id for m in after.messages[len(state.messages) :])
        state = after
    return SessionView(state, turns)
