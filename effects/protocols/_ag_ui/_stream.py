"""A session's AG-UI events, each with its position, from any position: replayed from the store, then live.

The events come from the log only (the projection of each record), so a
stream read live and one replayed later carry the same events at the same
positions. Two things are added around them:

* Resuming inside a run (the client saw ``RUN_STARTED`` but not its end), the
  stream first restates what is open at the client's position: the run's
  ``RUN_STARTED``, a ``STATE_SNAPSHOT`` of the shown state, and the start of
  each step, message or tool call left open. AG-UI clients check that a stream starts
  with a run and that content belongs to an open message; these events carry
  the client's own position and ``"restated": true``, and add nothing new.
* While the model streams a message (text not yet in the log), its text is
  sent as it comes, at positions ``<last>+<characters>``; when the message
  completes, its event carries only what was not sent yet, so the message's
  text is the log's, whole, exactly once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from ag_ui.core import (
    BaseEvent,
    EventType,
    RunStartedEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallStartEvent,
)
from ag_ui.core.version import PROTOCOL_VERSION

from agent_core import AgentState, initial_state, transition
from effects import EventStore, SessionNotFound

from .._sessions import Refused, Sessions
from ._positions import Position, tag_of
from ._projection import AgUiProjection

META = "agent-core"
"""The key of each event's ``metadata`` entry holding its position (``{"agent-core": {"position": ...}}``)."""

KEEP_ALIVE_SECONDS = 15.0
"""How long a stream stays silent before it sends a comment line (proxies close silent connections)."""

BATCH = 500
"""Records read from the store at once."""


@dataclass
class _Open:
    """What is open in the stream so far: a run, messages, tool calls, and the shown state."""

    run: RunStartedEvent | None = None
    steps: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)
    view: dict[str, Any] = field(default_factory=dict)

    def see(self, event: BaseEvent) -> None:
        kind = event.type
        if kind is EventType.RUN_STARTED:
            assert isinstance(event, RunStartedEvent)
            self.run, self.steps, self.messages, self.calls = event, [], [], {}
        elif kind in (EventType.RUN_FINISHED, EventType.RUN_ERROR):
            self.run, self.steps, self.messages, self.calls = None, [], [], {}
        elif kind is EventType.STEP_STARTED:
            self.steps.append(event.step_name)  # type: ignore[attr-defined]
        elif kind is EventType.STEP_FINISHED:
            self.steps.remove(event.step_name)  # type: ignore[attr-defined]
        elif kind is EventType.TEXT_MESSAGE_START:
            self.messages.append(event.message_id)  # type: ignore[attr-defined]
        elif kind is EventType.TEXT_MESSAGE_END:
            self.messages.remove(event.message_id)  # type: ignore[attr-defined]
        elif kind is EventType.TOOL_CALL_START:
            self.calls[event.tool_call_id] = event.tool_call_name  # type: ignore[attr-defined]
        elif kind is EventType.TOOL_CALL_END:
            self.calls.pop(event.tool_call_id, None)  # type: ignore[attr-defined]
        elif kind is EventType.STATE_SNAPSHOT:
            self.view = dict(event.snapshot)  # type: ignore[attr-defined]
        elif kind is EventType.STATE_DELTA:
            for op in event.delta:  # type: ignore[attr-defined]
                self.view[op.path.removeprefix("/")] = op.value

    def restated(self, at: int) -> list[BaseEvent]:
        """The events that reopen, for a client resuming here, what is open (nothing when no run is)."""
        if self.run is None:
            return []
        run = self.run
        out: list[BaseEvent] = [
            RunStartedEvent(
                thread_id=run.thread_id, run_id=run.run_id, protocol_version=PROTOCOL_VERSION, timestamp=at
            ),
            StateSnapshotEvent(snapshot=self.view, timestamp=at),
        ]
        out.extend(StepStartedEvent(step_name=step, timestamp=at) for step in self.steps)
        out.extend(TextMessageStartEvent(message_id=m, role="assistant", timestamp=at) for m in self.messages)
        out.extend(
            ToolCallStartEvent(tool_call_id=c, tool_call_name=name, timestamp=at) for c, name in self.calls.items()
        )
        return out


class AgUiStream:
    """The events of one session after a position (see the module docstring); iterate :meth:`events`.

    ``after`` is the client's last position (``None``: from the session's first
    record, or after record ``start`` when given). With ``until`` the stream
    ends once it has delivered record ``until`` and no run is open; without, it
    follows the session until the client leaves.
    """

    def __init__(
        self,
        sessions: Sessions,
        session_id: str,
        *,
        after: Position | None = None,
        start: int = 0,
        until: int | None = None,
    ) -> None:
        self.sessions = sessions
        self.session_id = session_id
        self.after = after
        self.start = start
        self.until = until
        self._state: AgentState = initial_state()
        self._projection = AgUiProjection()
        self._open = _Open()
        self._seq = 0  # the last record folded
        self._last: Position | None = None  # the last position delivered (or the client's)
        self._sent: dict[str, int] = {}  # characters of a streaming message already sent

    async def check(self) -> None:
        """Refuse (:class:`Refused`) a position past the end or from another log, before any event is sent."""
        position = self.after
        store = self.sessions.store
        length = await anyio.to_thread.run_sync(_length, store, self.session_id)
        if position is None:
            return
        if position.seq < 1 or position.seq > length:
            raise Refused(
                f"position {position} is past the end of session {self.session_id!r}, which has {length} records; "
                "expected a position this session's stream sent",
                code="bad-position",
                status=400,
            )
        [record] = await anyio.to_thread.run_sync(lambda: list(store.read(self.session_id, position.seq, position.seq)))
        if tag_of(record.hash) != position.tag:
            raise Refused(
                f"position {position} is not of session {self.session_id!r}'s log (record {position.seq} has "
                f"another hash there); expected a position this session's stream sent",
                code="bad-position",
                status=400,
            )

    async def events(self) -> AsyncIterator[tuple[str, BaseEvent | None]]:
        """``(position, event)`` pairs; ``(position, None)`` is a keep-alive while nothing happens."""
        resumed = False
        silent = 0.0
        while True:
            version = self.sessions.version(self.session_id)
            batch = await anyio.to_thread.run_sync(self._read)
            for seq, record_tag, events in batch:
                for number, event in enumerate(events):
                    here = Position(seq, number, 0, record_tag)
                    if not resumed and self._delivered(here):
                        self._open.see(event)
                        self._last = here
                        continue
                    if not resumed:
                        resumed = True
                        for restated in self._resume():
                            yield restated
                    self._open.see(event)
                    self._last = here
                    trimmed = self._trimmed(event)
                    if trimmed is not None:
                        yield self._stamped(str(here), trimmed)
                if resumed and self._ends_after(seq):
                    return
            if not resumed and self._caught_up():
                resumed = True
                for restated in self._resume():
                    yield restated
            if resumed:
                for live in self._live():
                    yield live
                if self._ends_after(self._seq):
                    return
            if batch:
                silent = 0.0
                continue
            waited = anyio.current_time()
            await self.sessions.wait(self.session_id, version)
            silent += anyio.current_time() - waited
            if silent >= KEEP_ALIVE_SECONDS:
                silent = 0.0
                yield (str(self._last) if self._last else "", None)

    def _ends_after(self, seq: int) -> bool:
        """Whether the stream ends after record ``seq``: it was asked to reach it, and no run is open."""
        return self.until is not None and seq >= self.until and self._open.run is None

    def _read(self) -> list[tuple[int, str, list[BaseEvent]]]:
        """Fold the records after the last one folded (a batch), with their events."""
        out = []
        try:
            records = list(self.sessions.store.read(self.session_id, self._seq + 1, self._seq + BATCH))
        except SessionNotFound:
            return []
        for record in records:
            inp = record.decode()
            after = transition(self._state, inp)
            out.append((record.seq, tag_of(record.hash), self._projection.step(record.seq, inp, self._state, after)))
            self._state, self._seq = after, record.seq
        return out

    def _delivered(self, here: Position) -> bool:
        """Whether the client already has the event at ``here`` (it is at or before its position)."""
        after = self.after
        if after is not None:
            return (here.seq, here.event) <= (after.seq, after.event)
        return here.seq <= self.start

    def _caught_up(self) -> bool:
        """Whether every record up to the client's position has been folded."""
        mark = self.after.seq if self.after is not None else self.start
        return self._seq >= mark

    def _resume(self) -> list[tuple[str, BaseEvent]]:
        """The restated events for where the client stands (see the module docstring), and the text it has."""
        mark = self.after or self._last
        if mark is None:
            return []
        self._last = mark
        if mark.chars and self._open.messages:
            self._sent[self._open.messages[-1]] = mark.chars
        at = self._state.timestamp
        return [self._stamped(str(mark), event, restated=True) for event in self._open.restated(at)]

    def _trimmed(self, event: BaseEvent) -> BaseEvent | None:
        """A completed message's text without what was already streamed of it (``None``: nothing left)."""
        if isinstance(event, TextMessageContentEvent):
            sent = self._sent.pop(event.message_id, 0)
            if sent:
                rest = event.delta[sent:]
                return event.model_copy(update={"delta": rest}) if rest else None
        return event

    def _live(self) -> list[tuple[str, BaseEvent]]:
        """The text streamed since the last look, for the message open in the stream."""
        message_id, text = self.sessions.live_text(self.session_id)
        if not message_id or message_id not in self._open.messages or self._last is None:
            return []
        sent = self._sent.get(message_id, 0)
        if len(text) <= sent:
            return []
        self._sent[message_id] = len(text)
        last = self._last
        here = Position(last.seq, last.event, len(text), last.tag)
        delta = TextMessageContentEvent(message_id=message_id, delta=text[sent:], timestamp=self._state.timestamp)
        return [self._stamped(str(here), delta)]

    @staticmethod
    def _stamped(position: str, event: BaseEvent, *, restated: bool = False) -> tuple[str, BaseEvent]:
        mark: dict[str, Any] = {"position": position}
        if restated:
            mark["restated"] = True
        return position, event.model_copy(update={"metadata": {**(event.metadata or {}), META: mark}})


def _length(store: EventStore, session_id: str) -> int:
    try:
        return store.session(session_id).length
    except SessionNotFound:
        raise Refused(
            f"no session {session_id!r}; expected the id of a session of this server", code="not-found", status=404
        ) from None
