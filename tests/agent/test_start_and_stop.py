"""A session that cannot start says so at once; a session that stopped refuses every input, loudly.

``Agent.running()`` and ``open_session`` raise the reducer's ``InvalidInput`` before the block runs when
``session-started`` is refused (an unregistered rule or guard, a workflow naming an unknown tool, nonsense
limits), instead of entering a session stuck in ``not-started``. After the block (or after an error stopped
the session) ``send``, ``approve``, ``deny``, ``cancel`` and ``dispatch`` raise ``SessionStopped`` and change
nothing: no message id for a message nobody will read, no ``None`` for a decision never applied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_core import (
    AgentConfig,
    InvalidInput,
    Phase,
    ReActCancelled,
    SessionStarted,
    UserMessageReceived,
    Workflow,
    WorkflowState,
    WorkflowTransition,
    check,
    initial_state,
    known_guards,
    known_rules,
)
from agent_core.testing import GUARDS, VERDICT_RULE, agent_configs
from effects import Agent, MemoryStore, Session, SessionStopped, StateUpdated, open_session, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, say

from ._helpers import START


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return q


@tool
def refund(cents: int) -> str:
    """Refund an order."""
    return f"refunded {cents}"


TOOLS = [lookup, refund]
NAMES = ("lookup", "refund", "lookpu", "")
"""Tool names a workflow may name: the agent's two, a misspelling, and none."""


def agent(config: AgentConfig) -> Agent:
    model = ScriptedModel(lambda _context: say("ok"))
    return Agent(model, tools=TOOLS, config=config, clock=ManualClock(START), ids=SequentialIds(), session_id="s1")


def started(config: AgentConfig) -> SessionStarted:
    """The ``session-started`` the agent above dispatches."""
    return SessionStarted(timestamp=START, session_id="s1", config=config, tools=tuple(t.definition for t in TOOLS))


@st.composite
def configs(draw: st.DrawFn) -> AgentConfig:
    """Any config: valid ones, and ones with unregistered rules, unknown guards, workflows naming unknown tools or
    states, and limits out of range."""
    limits = {
        name: draw(st.sampled_from((None, -1, 0, 1, 5)) if name.startswith("max_") and name != "max_identical_tool_calls"
                   else st.sampled_from((-5, 0, 1, 3)))
        for name in draw(st.sets(st.sampled_from(
            ("max_model_calls", "max_tool_calls", "max_tokens", "max_turn_ms", "llm_max_attempts",
             "retry_base_ms", "retry_max_ms", "max_identical_tool_calls"))))
    }  # fmt: skip
    rules = tuple(draw(st.lists(st.sampled_from((VERDICT_RULE, "no-such-rule", "rule:typo")), max_size=2)))
    workflow = None
    if draw(st.booleans()):
        states = tuple(
            WorkflowState(name=name, tools=tuple(draw(st.lists(st.sampled_from(NAMES[:3]), unique=True, max_size=2))))
            for name in draw(st.lists(st.sampled_from(("triage", "refunding", "done")), min_size=1, unique=True))
        )
        names = [s.name for s in states]
        transitions = tuple(
            WorkflowTransition(
                source=draw(st.sampled_from([*names, "nowhere"])),
                target=draw(st.sampled_from(names)),
                tool=draw(st.sampled_from(NAMES[:3])),
                guard=draw(st.sampled_from(("", *GUARDS, "no-such-guard"))),
            )
            for _ in range(draw(st.integers(0, 2)))
        )
        workflow = Workflow(states=states, initial=draw(st.sampled_from([*names, "nowhere"])), transitions=transitions)
    # Money settings need a pricing and pools beside the config: test_money.py starts those.
    base = draw(agent_configs(max_turn_ms=st.none(), max_cost=None, max_session_cost=None, budget_pool=""))
    return AgentConfig(
        **{**{f: getattr(base, f) for f in base.__struct_fields__}, **limits, "rules": rules, "workflow": workflow}
    )


async def start_and_ask(config: AgentConfig) -> Session:
    async with agent(config).running() as session:
        session.send("hello")
        await session.turn_done()
        return session


@given(configs())
def test_a_session_starts_exactly_when_the_reducer_accepts_its_session_started(config: AgentConfig) -> None:
    refused = check(initial_state(), started(config))
    if refused is None:
        session = anyio.run(start_and_ask, config)
        assert session.state.step >= 2 and session.phase is Phase.IDLE  # started, asked, answered or failed
        return
    with pytest.raises(InvalidInput) as raised:
        anyio.run(start_and_ask, config)
    assert raised.value.rejection == refused  # the reducer's own words: what is wrong, the names it knows


@pytest.mark.anyio
async def test_an_unregistered_rule_fails_open_session_with_the_known_names_and_stores_nothing() -> None:
    store = MemoryStore()
    model = ScriptedModel([say("never asked")])
    entered = False
    with pytest.raises(InvalidInput) as raised:
        async with open_session(store, "s1", model, config=AgentConfig(rules=("no-such-rule",))):
            entered = True
    assert not entered and model.calls == []
    assert str(raised.value) == (
        "rule(s) 'no-such-rule' named by the session's config.rules are not registered in this process; "
        f"registered rules: {', '.join(known_rules())}; register it with register_rule() before the session "
        "starts, or fix "
        "the name [unknown-rule; valid now: session-started]"
    )
    assert store.sessions() == []


@pytest.mark.anyio
async def test_a_workflow_naming_an_unknown_tool_fails_at_start() -> None:
    workflow = Workflow(states=(WorkflowState(name="triage", tools=("lookpu",)),), initial="triage")
    with pytest.raises(InvalidInput) as raised:
        async with agent(AgentConfig(workflow=workflow)).running():
            pytest.fail("the block must not run")
    assert str(raised.value) == (
        "state 'triage' names tool 'lookpu', which session-started does not declare (declared tools: lookup, "
        "refund); fix the workflow [invalid-workflow; valid now: session-started]"
    )


@pytest.mark.anyio
async def test_an_unregistered_guard_fails_open_session_with_the_known_guards_and_stores_nothing() -> None:
    store = MemoryStore()
    workflow = Workflow(
        states=(WorkflowState(name="triage", tools=("lookup",)),),
        initial="triage",
        transitions=(WorkflowTransition(source="triage", target="triage", tool="lookup", guard="no-such-guard"),),
    )
    with pytest.raises(InvalidInput) as raised:
        async with open_session(store, "s1", ScriptedModel([]), tools=TOOLS, config=AgentConfig(workflow=workflow)):
            pytest.fail("the block must not run")
    assert str(raised.value) == (
        "guard(s) 'no-such-guard' named by the session's workflow are not registered in this process; registered "
        f"guards: {', '.join(known_guards()) or 'none'}; register it with register_guard() before the session "
        "starts, or fix the name [unknown-guard; valid now: session-started]"
    )
    assert store.sessions() == [] and store.lease("s1") is None


# -- after stop ---------------------------------------------------------------------------------------------------

CALLS: dict[str, Callable[[Session], object]] = {
    "send": lambda s: s.send("late"),
    "approve": lambda s: s.approve("call-1"),
    "deny": lambda s: s.deny("call-1", "no"),
    "cancel": lambda s: s.cancel("stop"),
    "dispatch": lambda s: s.dispatch(ReActCancelled(timestamp=START, reason="stop")),
}


def refused_after_stop(session: Session, calls: list[str]) -> list[str]:
    """Call each method; return the messages of the ``SessionStopped`` each raised (a return fails the test)."""
    messages = []
    for name in calls:
        with pytest.raises(SessionStopped) as raised:
            CALLS[name](session)
        messages.append(str(raised.value))
    return messages


@given(st.lists(st.sampled_from(sorted(CALLS)), min_size=1, max_size=6), st.booleans())
def test_every_input_to_a_stopped_session_raises_and_changes_nothing(calls: list[str], durable: bool) -> None:
    store = MemoryStore()

    async def run() -> Session:
        if durable:
            model = ScriptedModel(lambda _context: say("ok"))
            async with open_session(store, "s1", model, clock=ManualClock(START), ids=SequentialIds()) as session:
                session.send("hi")
                await session.turn_done()
            return session
        return await start_and_ask(AgentConfig(max_turn_ms=None))

    session = anyio.run(run)
    before = session.state
    logged = store.session("s1").length if durable else 0
    messages = refused_after_stop(session, calls)
    assert session.state is before
    assert (store.session("s1").length if durable else 0) == logged
    assert all(m.startswith("session 's1' has stopped: the `async with agent.running()`") for m in messages)
    assert all(m.endswith("open the session again (open_session) to go on with it") for m in messages)


@pytest.mark.anyio
async def test_an_input_after_an_error_stopped_the_session_names_the_error() -> None:
    def broken(event: Any) -> None:
        if isinstance(event, StateUpdated) and isinstance(event.input, UserMessageReceived):
            raise RuntimeError("subscriber bug")

    inside: list[str] = []
    with pytest.raises(RuntimeError, match="subscriber bug"):
        async with agent(AgentConfig()).running() as session:
            session.subscribe(broken)
            try:
                session.send("hi")
                await session.turn_done()
            finally:  # the block is being cancelled by the error: the session no longer takes inputs
                inside += refused_after_stop(session, ["send", "approve"])
    assert inside[0] == (
        "session 's1' stopped because of an error (RuntimeError: subscriber bug); the message was not sent, and "
        "nothing was applied or logged: send inputs inside the block, or open the session again (open_session) "
        "to go on with it"
    )
    after = refused_after_stop(session, ["cancel"])
    assert after[0].startswith("session 's1' stopped because of an error (RuntimeError: subscriber bug)")
