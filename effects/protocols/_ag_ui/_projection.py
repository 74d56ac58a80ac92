"""The AG-UI events of a session's log: a pure projection of each record's (input, state before, state after).

A *run* is a stretch of a turn that needs nobody: it starts when a turn opens
(``RUN_STARTED`` with the user's message as its input), when a person answers
what a paused turn waited for (with their answers as ``resume`` entries), or
when a message joins an open turn (the run before it ends first); it ends when
the turn ends (``RUN_FINISHED``, cancelled, or ``RUN_ERROR`` with the reason) or
when it waits for a person (``RUN_FINISHED`` with an interrupt per tool call
awaiting approval or input). Run ids are ``run-<record>``, the record that
started the run. Within a run: the model's reasoning where its provider
made it readable (``REASONING_*``, one span per thinking block, reasoning
summary or reasoning content the reply's provider items hold, sent with the
observation that logged them, so after the text it streamed; encrypted and
redacted items are not shown), the model's messages (``TEXT_MESSAGE_*``, the
text from the log's completed message), its tool calls (``TOOL_CALL_*``) and
their results, one step per model call (``STEP_*``, named by the effect key),
a state snapshot at the start of each run and a JSON Patch delta when the
shown state changes, and a ``CUSTOM`` event ``agent-core/awaiting`` when a call
begins to wait for a person.

The projection keeps one small fold state (the open run and the reply being
built), so the events of record ``n`` are the same whether the log is read
live or replayed later.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UserMessage,
)
from ag_ui.core.version import PROTOCOL_VERSION

from agent_core import (
    AgentInput,
    AgentState,
    Phase,
    ProviderItem,
    ReActObserved,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallInputProvided,
    ToolCallRecord,
    ToolFailure,
    ToolSuccess,
    effects_at,
    phase,
)

AWAITING = "agent-core/awaiting"
"""The name of the ``CUSTOM`` event sent when a tool call begins to wait for a person."""

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}
"""The answer an approval interrupt expects (``ResumeEntry.payload``)."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "one answer per question key, as MCP elicitation results: "
    '{"action": "accept", "content": {...}} or {"action": "decline"} or {"action": "cancel"}',
    "additionalProperties": {"type": "object", "properties": {"action": {"enum": ["accept", "decline", "cancel"]}}},
}
"""The answer an input interrupt expects: the tool's questions answered, by key."""


def state_view(state: AgentState) -> dict[str, Any]:
    """The part of the agent's state a client is shown (``STATE_SNAPSHOT`` / ``STATE_DELTA``)."""
    turn = state.turn
    outcome = state.last_outcome
    return {
        "phase": phase(state).value,
        "turns": state.turns,
        "turn": None
        if turn is None
        else {
            "number": turn.number,
            "model_calls": turn.model_calls,
            "tool_calls": turn.tool_call_count,
            "tokens": turn.tokens,
        },
        "awaiting": list(turn.awaiting_ids) if turn is not None else [],
        "workflow_state": state.workflow_state,
        "input_tokens": state.input_tokens,
        "output_tokens": state.output_tokens,
        "last_outcome": None if outcome is None else {"kind": outcome.kind, "reason": outcome.reason},
    }


class AgUiProjection:
    """Folds records into AG-UI events: :meth:`step` per record, in order (see the module docstring)."""

    def __init__(self) -> None:
        self.run_id = ""  # the open run ("" when none)
        self.reply_id = ""  # the assistant message of the model call being answered, parent of its tool calls
        self._shown: dict[str, Any] = {}
        self._runs = 0  # runs started by the current record

    def step(self, seq: int, inp: AgentInput, before: AgentState, after: AgentState) -> list[BaseEvent]:
        """The events of record ``seq``: ``inp`` took the session from ``before`` to ``after``."""
        at, thread, self._runs = inp.timestamp, after.session_id, 0
        old, new = before.turn, after.turn
        if old is None and new is None:
            return []  # between turns (the session's start, a workflow action while idle): no run to report in
        ended = old is not None and (new is None or new.number != old.number)
        joined = [m for m in after.messages[len(before.messages) :] if m.role == "user"]
        boundary = ended or bool(joined)  # a run ends, or another begins, inside this record
        first: list[BaseEvent] = []
        second: list[BaseEvent] = []
        if isinstance(inp, ReActObserved) and inp.items:
            _reasoning(first, seq, inp.items, at)
        self._messages(first, before, after, at)
        self._calls(first, seq, inp, before, after, at)
        self._steps(first, second if boundary else first, before, after, at)
        out: list[BaseEvent] = []
        if boundary:
            if first or self.run_id:
                if not self.run_id:
                    self._start(out, seq, thread, at, inp, before, after, [])
                out.extend(first)
                if ended:
                    self._finish_turn(out, thread, after, at)
                else:
                    end = RunFinishedSuccessOutcome()
                    out.append(RunFinishedEvent(thread_id=thread, run_id=self.run_id, outcome=end, timestamp=at))
                    self.run_id = ""
            if new is not None:
                self._start(out, seq, thread, at, None, before, after, joined)
                out.extend(second)
        elif not self.run_id:
            if not first and not _decided(inp):
                return out
            self._start(out, seq, thread, at, inp, before, after, [])
            out.extend(first)
        else:
            out.extend(first)
            self._delta(out, after, at)
        if new is not None and self.run_id and phase(after) is Phase.AWAITING_APPROVAL:
            interrupts = [_interrupt(after.tool_calls[i]) for i in new.awaiting_ids]
            paused = RunFinishedInterruptOutcome(interrupts=interrupts)
            out.append(RunFinishedEvent(thread_id=thread, run_id=self.run_id, outcome=paused, timestamp=at))
            self.run_id = ""
        return out

    def _start(
        self,
        out: list[BaseEvent],
        seq: int,
        thread: str,
        at: int,
        answer: AgentInput | None,
        before: AgentState,
        after: AgentState,
        joined: list[Any],
    ) -> None:
        """Start a run (``run-<seq>``, ``run-<seq>-2`` for a second in the record): its input is the record's
        messages or a person's answer; a snapshot of the shown state follows."""
        self._runs += 1
        self.run_id = f"run-{seq}" if self._runs == 1 else f"run-{seq}-{self._runs}"
        run_input = RunAgentInput(
            thread_id=thread,
            run_id=self.run_id,
            messages=[UserMessage(id=m.id, content=m.content) for m in joined],
            resume=(_resume_entries(answer) or None) if answer is not None else None,
        )
        out.append(
            RunStartedEvent(
                thread_id=thread, run_id=self.run_id, protocol_version=PROTOCOL_VERSION, input=run_input, timestamp=at
            )
        )
        self._shown = state_view(after)
        out.append(StateSnapshotEvent(snapshot=self._shown, timestamp=at))

    def _finish_turn(self, out: list[BaseEvent], thread: str, after: AgentState, at: int) -> None:
        """The end of the run that ends its turn: completed, cancelled, or an error with the turn's reason."""
        outcome = after.last_outcome
        assert outcome is not None  # a turn that ended recorded how
        self._delta(out, after, at)
        if outcome.kind == "failed":
            out.append(RunErrorEvent(message=outcome.detail or outcome.reason, code=outcome.reason, timestamp=at))
        else:
            end = RunFinishedCancelledOutcome() if outcome.kind == "cancelled" else RunFinishedSuccessOutcome()
            out.append(RunFinishedEvent(thread_id=thread, run_id=self.run_id, outcome=end, timestamp=at))
        self.run_id = ""
        self.reply_id = ""

    def _delta(self, out: list[BaseEvent], after: AgentState, at: int) -> None:
        shown = state_view(after)
        patch = [
            {"op": "replace", "path": f"/{key}", "value": value}
            for key, value in shown.items()
            if self._shown.get(key, _MISSING) != value
        ]
        if patch:
            self._shown = shown
            out.append(StateDeltaEvent.model_validate({"type": "STATE_DELTA", "delta": patch, "timestamp": at}))

    def _messages(self, out: list[BaseEvent], before: AgentState, after: AgentState, at: int) -> None:
        """The model's message that stopped streaming (its whole text from the log), and new ones."""
        streaming = before.turn.streaming_message_id if before.turn is not None else ""
        if streaming:
            message = after.messages[after.message_index[streaming]]
            if not message.streaming:
                if message.content:
                    out.append(TextMessageContentEvent(message_id=streaming, delta=message.content, timestamp=at))
                out.append(TextMessageEndEvent(message_id=streaming, timestamp=at))
        for message in after.messages[len(before.messages) :]:
            if message.role == "assistant":
                out.append(TextMessageStartEvent(message_id=message.id, role="assistant", timestamp=at))
                self.reply_id = message.id

    def _calls(
        self, out: list[BaseEvent], seq: int, inp: AgentInput, before: AgentState, after: AgentState, at: int
    ) -> None:
        """New tool calls (under the reply that asked for them), results, and calls that began to wait."""
        calls = after.tool_calls
        new_calls = list(after.tool_call_log[len(before.tool_call_log) :])
        parent = self.reply_id or f"calls-{seq}"
        for call_id in new_calls:
            record = calls[call_id]
            out.append(
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=record.name, parent_message_id=parent, timestamp=at
                )
            )
            out.append(ToolCallArgsEvent(tool_call_id=call_id, delta=record.parameters or "{}", timestamp=at))
            out.append(ToolCallEndEvent(tool_call_id=call_id, timestamp=at))
        if isinstance(inp, ReActObserved):
            self.reply_id = ""
        old = before.turn
        watched = (*(old.open_call_ids + old.awaiting_ids if old is not None else ()), *new_calls)
        for call_id in watched:
            record = calls[call_id]
            previous = before.tool_calls.get(call_id)
            if record.status == "completed" and (previous is None or previous.status != "completed"):
                out.append(_result(record, at))
            elif record.status in ("awaiting-approval", "awaiting-input") and (
                previous is None or previous.status != record.status
            ):
                out.append(CustomEvent(name=AWAITING, value=_waiting(record), timestamp=at))

    def _steps(
        self, finished: list[BaseEvent], started: list[BaseEvent], before: AgentState, after: AgentState, at: int
    ) -> None:
        """One step per model call: it starts when its ``call-llm`` effect is derived, finishes when it is not."""
        running = [k for k in effects_at(before) if k.startswith("call-llm:")]
        derived = [k for k in effects_at(after) if k.startswith("call-llm:")]
        finished.extend(StepFinishedEvent(step_name=k, timestamp=at) for k in running if k not in derived)
        started.extend(StepStartedEvent(step_name=k, timestamp=at) for k in derived if k not in running)


_MISSING = object()


def _reasoning(out: list[BaseEvent], seq: int, items: tuple[ProviderItem, ...], at: int) -> None:
    """A reply's readable reasoning, one span and message per item that has some (``reasoning-<record>-<n>``)."""
    for index, item in enumerate(items):
        text = reasoning_text(item)
        if text:
            message_id = f"reasoning-{seq}-{index}"
            out.append(ReasoningStartEvent(message_id=message_id, timestamp=at))
            out.append(ReasoningMessageStartEvent(message_id=message_id, role="reasoning", timestamp=at))
            out.append(ReasoningMessageContentEvent(message_id=message_id, delta=text, timestamp=at))
            out.append(ReasoningMessageEndEvent(message_id=message_id, timestamp=at))
            out.append(ReasoningEndEvent(message_id=message_id, timestamp=at))


def reasoning_text(item: ProviderItem) -> str:
    """The text a person can read in a provider item: an Anthropic ``thinking`` block's thinking, the summary
    (or, failing that, the text) of a Responses ``reasoning`` item, a chat server's ``reasoning-content``;
    "" for the rest (redacted thinking, compaction, markers) and for data not shaped as expected."""
    data = _json(item.data) if item.data else None
    if not isinstance(data, dict):
        return ""
    if item.kind == "thinking":
        return _text(data.get("thinking"))
    if item.kind == "reasoning-content":
        return _text(data.get("reasoning_content")) or _text(data.get("reasoning"))
    if item.kind == "reasoning":
        return _parts(data.get("summary")) or _parts(data.get("content"))
    return ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parts(value: Any) -> str:
    """The texts of a Responses reasoning item's summary or content parts, a blank line between them."""
    if not isinstance(value, list):
        return ""
    return "\n\n".join(text for part in value if isinstance(part, dict) and (text := _text(part.get("text"))))


def _decided(inp: AgentInput) -> bool:
    return isinstance(inp, ToolCallApproved | ToolCallDenied | ToolCallInputProvided)


def _resume_entries(inp: AgentInput) -> list[ResumeEntry]:
    """A person's answer as the ``resume`` entry of the run it starts (the interrupt's id is the call's)."""
    if isinstance(inp, ToolCallApproved):
        return [ResumeEntry(interrupt_id=inp.tool_call_id, status="resolved", payload={"approved": True})]
    if isinstance(inp, ToolCallDenied):
        payload = {"approved": False, "reason": inp.reason}
        return [ResumeEntry(interrupt_id=inp.tool_call_id, status="resolved", payload=payload)]
    if isinstance(inp, ToolCallInputProvided):
        return [ResumeEntry(interrupt_id=inp.tool_call_id, status="resolved", payload=_json(inp.responses))]
    return []


def _interrupt(record: ToolCallRecord) -> Interrupt:
    """What a paused run waits for: an approval of a call, or the answers to a tool's questions."""
    if record.status == "awaiting-input":
        requests = _json(record.input_requests)
        return Interrupt(
            id=record.id,
            reason="input_required",
            message=_question(requests) or f"{record.name} asks for input",
            tool_call_id=record.id,
            response_schema=INPUT_SCHEMA,
            metadata={"requests": requests},
        )
    return Interrupt(
        id=record.id,
        reason="tool_approval",
        message=f"approve {record.name}({record.parameters})?",
        tool_call_id=record.id,
        response_schema=APPROVAL_SCHEMA,
        metadata={"name": record.name, "arguments": _json(record.parameters)},
    )


def _waiting(record: ToolCallRecord) -> dict[str, Any]:
    kind = "input" if record.status == "awaiting-input" else "approval"
    value: dict[str, Any] = {"tool_call_id": record.id, "kind": kind, "name": record.name}
    value["arguments"] = _json(record.parameters)
    if kind == "input":
        value["requests"] = _json(record.input_requests)
    return value


def _result(record: ToolCallRecord, at: int) -> ToolCallResultEvent:
    result = record.result
    text = (
        result.content if isinstance(result, ToolSuccess) else result.error if isinstance(result, ToolFailure) else ""
    )
    return ToolCallResultEvent(
        message_id=f"result-{record.id}", tool_call_id=record.id, content=text, role="tool", timestamp=at
    )


def _question(requests: Any) -> str:
    """The first question's text among MCP-shaped requests, if there is one."""
    if isinstance(requests, dict):
        for request in requests.values():
            params = request.get("params") if isinstance(request, dict) else None
            if isinstance(params, dict) and isinstance(params.get("message"), str):
                return str(params["message"])
    return ""


def _json(text: str) -> Any:
    """``text`` parsed as JSON, or the text itself when it is not JSON (arguments a model got wrong)."""
    try:
        return json.loads(text)
    except ValueError:
        return text
