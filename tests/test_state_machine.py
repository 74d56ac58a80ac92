"""A rule-based state machine over random valid sessions.

Every input kind is a rule, enabled when the state has something for it to act
on (``agent_core.testing.next_input_kinds``); one more rule throws inputs the
state must refuse. After every step the invariants, the effects the phase
implies and a few independently counted totals are checked; at the end the
log replays to the same state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import agent_core as ac
from agent_core.testing import agent_configs, invalid_input, next_input, next_input_kinds, session_started, tool_lists

EXAMPLES = settings().max_examples

pytestmark = pytest.mark.slow  # a few seconds: dozens of sessions of up to 60 steps


def kind_rule(tag: str) -> Callable[..., None]:
    """A rule applying a drawn ``tag`` input, enabled while the state offers one."""

    @precondition(lambda self: tag in next_input_kinds(self.state))
    @rule(data=st.data())
    def apply_kind(self: AgentMachine, data: st.DataObject) -> None:
        self.apply(data.draw(next_input(self.state, kind=tag), label=tag))

    apply_kind.__name__ = tag.replace("-", "_")
    return apply_kind


class AgentMachine(RuleBasedStateMachine):
    """One session, driven input by input through the public API."""

    def __init__(self) -> None:
        super().__init__()
        self.state = ac.initial_state()
        self.log: list[ac.AgentInput] = []
        self.messages_sent = 0  # user messages and model messages accepted
        self.calls_requested = 0  # tool calls in accepted continue-re-act observations

    def apply(self, inp: ac.AgentInput) -> None:
        """Apply an input the state must accept, checking the step's promises."""
        before = self.state
        assert ac.check(before, inp) is None
        after = ac.transition(before, inp)
        ac.check_invariants(after, before)
        assert after.timestamp == inp.timestamp >= before.timestamp
        self.state = after
        self.log.append(inp)
        if isinstance(inp, ac.UserMessageReceived | ac.LlmMessageStarted):
            self.messages_sent += 1
        if isinstance(inp, ac.ReActObserved) and isinstance(inp.observation, ac.ContinueReAct):
            self.calls_requested += len(inp.observation.tool_calls)

    @initialize(first=session_started(timestamp=st.integers(0, 2**40), config=agent_configs(), tools=tool_lists()))
    def session_started(self, first: ac.SessionStarted) -> None:
        self.apply(first)

    user_message_received = kind_rule("user-message-received")
    llm_message_started = kind_rule("llm-message-started")
    llm_message_completed = kind_rule("llm-message-completed")
    re_act_observed = kind_rule("re-act-observed")
    llm_call_failed = kind_rule("llm-call-failed")
    tool_call_started = kind_rule("tool-call-started")
    tool_call_completed = kind_rule("tool-call-completed")
    tool_call_approved = kind_rule("tool-call-approved")
    tool_call_denied = kind_rule("tool-call-denied")
    context_window_expanded = kind_rule("context-window-expanded")
    history_tool_calls_added = kind_rule("history-tool-calls-added")
    timer_fired = kind_rule("timer-fired")
    re_act_cancelled = kind_rule("re-act-cancelled")

    @rule(data=st.data())
    def invalid_input_is_refused(self, data: st.DataObject) -> None:
        inp = data.draw(invalid_input(self.state), label="invalid")
        encoded = ac.encode_state(self.state, format="msgpack")
        rejection = ac.check(self.state, inp)
        assert rejection is not None, f"{ac.tag_of(inp)} was accepted"
        with pytest.raises(ac.InvalidInput) as info:
            ac.transition(self.state, inp)
        assert info.value.rejection == rejection
        assert rejection.valid_now == ac.valid_inputs(self.state)
        assert ac.encode_state(self.state, format="msgpack") == encoded

    @invariant()
    def effects_follow_the_phase(self) -> None:
        state = self.state
        effects = ac.effects_at(state)
        current = ac.phase(state)
        turn = state.turn
        if turn is None:
            assert effects == {}
            return
        kinds = by_kind(effects)
        waits = {effect.reason for effect in kinds["wait-until"]}
        # The deadline runs except while the turn only waits for a person's approval; a deadline that had
        # already passed when that wait began is not paused (it is due: the turn times out).
        if current is ac.Phase.AWAITING_APPROVAL and turn.deadline is not None and turn.paused_at is None:
            assert "deadline" in waits and turn.deadline <= state.timestamp
        else:
            assert ("deadline" in waits) == (turn.deadline is not None and current is not ac.Phase.AWAITING_APPROVAL)
        tool_keys = {key for key in effects if key.startswith("call-tool:")}
        if current is ac.Phase.THINKING:
            assert len(kinds["call-llm"]) == 1 and not tool_keys and waits <= {"deadline"}
        elif current is ac.Phase.ACTING:
            # Every open call runs, but one backing off before another attempt (its retry timer runs instead);
            # a call attempted again with the answers to its questions runs under a key of its own.
            calls = state.tool_calls
            running = {
                ac.call_tool_key(i, calls[i].input_rounds) for i in turn.open_call_ids if calls[i].retry_at is None
            }
            backing_off = {calls[i].retry_at for i in turn.open_call_ids if calls[i].retry_at is not None}
            assert tool_keys == running and not kinds["call-llm"]
            assert {effect.at for effect in kinds["wait-until"] if effect.reason == "retry"} == backing_off
        elif current is ac.Phase.AWAITING_APPROVAL:
            assert not kinds["call-llm"] and not tool_keys and waits <= {"deadline"}
        else:
            assert current is ac.Phase.RETRYING
            assert not kinds["call-llm"] and not tool_keys and "retry" in waits
        for key, effect in effects.items():
            assert key.startswith(f"{effect.__struct_config__.tag}:")

    @invariant()
    def totals_match_the_inputs(self) -> None:
        state = self.state
        if not self.log:
            return
        assert state.step == len(self.log)
        assert state.timestamp == self.log[-1].timestamp
        assert len(state.messages) + len(state.queued) == self.messages_sent
        assert len(state.tool_calls) == self.calls_requested

    def teardown(self) -> None:
        if self.log:
            assert ac.replay(self.log) == self.state
            assert ac.replay(ac.decode_log(ac.encode_log(self.log))) == self.state


def by_kind(effects: dict[str, ac.Effect]) -> dict[str, list[Any]]:
    """The effects grouped by tag."""
    groups: dict[str, list[Any]] = {"call-llm": [], "call-tool": [], "wait-until": []}
    for effect in effects.values():
        groups[effect.__struct_config__.tag].append(effect)  # type: ignore[index]
    return groups


AgentMachine.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=60, deadline=None)
TestAgentMachine = AgentMachine.TestCase
