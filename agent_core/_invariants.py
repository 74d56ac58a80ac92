"""``check_invariants``: what must hold in every state the reducer produces."""

from __future__ import annotations

from ._effects import effects_at
from ._errors import InvariantViolation
from ._phase import Phase, phase
from ._state import AgentState

_COUNTERS = ("step", "timestamp", "turns", "input_tokens", "output_tokens", "cost")


def check_invariants(state: AgentState, previous: AgentState | None = None) -> None:
    """Raise :class:`InvariantViolation` listing every broken invariant of ``state``.

    With ``previous`` (the state before a transition) it also checks that
    counters never decrease and that completed tool calls stay completed.
    Cost: O(size of the state); meant for tests, not for hot paths.
    """
    problems = _messages(state) + _tool_calls(state) + _turn(state) + _workflow(state) + _agent(state)
    if previous is not None:
        problems += _monotonic(previous, state)
    if problems:
        raise InvariantViolation(problems)


def _workflow(state: AgentState) -> list[str]:
    """The session is in a declared workflow state, reached by the moves its audit records in order."""
    workflow = state.config.workflow
    if workflow is None:
        return [] if not state.workflow_state and not state.audit else ["a session without a workflow has moved"]
    if not state.started:
        return []
    problems = []
    if state.workflow_state not in workflow.names:
        problems.append(f"workflow state {state.workflow_state!r} is not declared ({', '.join(workflow.names)})")
    here = workflow.initial
    for move in state.audit:
        if move.source != here:
            problems.append(f"the audit moves from {move.source!r} at record {move.step}, but the session was in {here!r}")
        here = move.target
    if here != state.workflow_state:
        problems.append(f"the audit ends in {here!r}, but the session is in {state.workflow_state!r}")
    return problems


def _agent(state: AgentState) -> list[str]:
    """The active agent is the one the session started with (empty) or another agent its config declares."""
    declared = [profile.name for profile in state.config.agents]
    if state.agent and (state.agent not in declared or state.agent == state.config.agent_name):
        return [f"the active agent {state.agent!r} is not one of the other declared agents {declared}"]
    return []


def _messages(state: AgentState) -> list[str]:
    problems = []
    if len(state.message_index) != len(state.messages):
        problems.append(f"message_index has {len(state.message_index)} ids for {len(state.messages)} messages")
    streaming = []
    for position, message in enumerate(state.messages):
        if state.message_index.get(message.id) != position:
            problems.append(f"message {message.id!r} at {position} is indexed at {state.message_index.get(message.id)}")
        if message.streaming:
            streaming.append(message.id)
    expected = [state.turn.streaming_message_id] if state.turn and state.turn.streaming_message_id else []
    if streaming != expected:
        problems.append(f"streaming messages {streaming} differ from the turn's streaming message {expected}")
    return problems


def _tool_calls(state: AgentState) -> list[str]:
    problems = []
    if len(state.tool_call_log) != len(state.tool_calls):
        problems.append(f"tool_call_log has {len(state.tool_call_log)} entries for {len(state.tool_calls)} calls")
    open_ids = set(state.turn.open_call_ids) if state.turn else set()
    awaiting = set(state.turn.awaiting_ids) if state.turn else set()
    for call_id, record in state.tool_calls.items():
        if record.id != call_id:
            problems.append(f"tool call {call_id!r} holds a record with id {record.id!r}")
        if (record.status == "completed") != (record.result is not None):
            problems.append(f"tool call {call_id!r} is {record.status} with result {record.result!r}")
        if record.status in ("pending", "running") and call_id not in open_ids:
            problems.append(f"tool call {call_id!r} is {record.status} but not open in the turn")
        if record.retry_at is not None and record.status != "pending":
            problems.append(f"tool call {call_id!r} backs off until {record.retry_at} but is {record.status}")
        if record.status in ("awaiting-approval", "awaiting-input") and call_id not in awaiting:
            problems.append(f"tool call {call_id!r} is {record.status} but the turn does not list it")
        if call_id in awaiting and record.status not in ("awaiting-approval", "awaiting-input"):
            problems.append(f"tool call {call_id!r} is {record.status} but the turn lists it as awaiting a person")
        if (record.status == "awaiting-input") != bool(record.input_requests):
            problems.append(f"tool call {call_id!r} is {record.status} with input requests {record.input_requests!r}")
    return problems


def _turn(state: AgentState) -> list[str]:
    turn = state.turn
    if turn is None:
        effects = effects_at(state)
        return [f"no turn is open but effects {sorted(effects)} would run"] if effects else []
    problems = []
    for call_id in turn.tool_call_ids:
        if call_id not in state.tool_calls:
            problems.append(f"turn lists tool call {call_id!r} that has no record")
    if len(set(turn.tool_call_ids)) != len(turn.tool_call_ids):
        problems.append("turn lists a tool call twice")
    listed = set(turn.tool_call_ids)
    for call_id in turn.open_call_ids + turn.awaiting_ids:
        if call_id not in listed:
            problems.append(f"open or awaiting call {call_id!r} is not among the turn's calls")
    if turn.context_window_size > len(state.messages):
        problems.append(f"window {turn.context_window_size} exceeds the {len(state.messages)} messages")
    if phase(state) is Phase.THINKING:
        calls = [k for k in effects_at(state) if k.startswith("call-llm:")]
        if len(calls) != 1:
            problems.append(f"thinking derives {len(calls)} model calls, expected exactly 1")
        for call_id in turn.tool_call_ids:
            if state.tool_calls[call_id].result is None:
                problems.append(f"a model call would run before tool call {call_id!r} has a result")
    waiting = turn.deadline is not None and phase(state) is Phase.AWAITING_APPROVAL
    if waiting != (turn.paused_at is not None) and not (waiting and state.timestamp >= (turn.deadline or 0)):
        problems.append(f"turn.paused_at is {turn.paused_at} in phase {phase(state)} with deadline {turn.deadline}")
    if not state.started:
        problems.append("a turn is open before session-started")
    return problems


def _monotonic(previous: AgentState, state: AgentState) -> list[str]:
    problems = [
        f"{name} decreased from {getattr(previous, name)} to {getattr(state, name)}"
        for name in _COUNTERS
        if getattr(state, name) < getattr(previous, name)
    ]
    if len(state.messages) < len(previous.messages) or len(state.tool_calls) < len(previous.tool_calls):
        problems.append("messages or tool calls were removed")
    if previous.turn is not None and state.turn is not None and previous.turn.number == state.turn.number:
        before, after = previous.turn, state.turn
        for name in ("model_calls", "tool_call_count", "tokens", "cost", "context_window_size", "context_rev"):
            if getattr(after, name) < getattr(before, name):
                problems.append(f"turn.{name} decreased from {getattr(before, name)} to {getattr(after, name)}")
    for call_id, record in previous.tool_calls.items():
        if record.status == "completed" and state.tool_calls[call_id] != record:
            problems.append(f"completed tool call {call_id!r} changed")
    return problems
