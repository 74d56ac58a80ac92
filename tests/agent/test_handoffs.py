"""Handoffs: a model hands the conversation to another agent of the session, whose model, instructions and tools
take over; the handoff is an input in the log, replays, resumes and is shown."""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import pytest
from hypothesis import given

import agent_core as ac
from agent_core import AgentConfig, ContextMessage, LlmContext
from agent_core.testing import handed_off
from effects import (
    Agent,
    ModelReply,
    SqliteStore,
    conversation,
    load_state,
    open_session,
    replay_session,
    timeline,
    tool,
)
from effects.cli import main
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._process import run
from ._team import question, results

pytestmark = pytest.mark.anyio


@tool
def reset_password(user: str) -> str:
    """Reset a user's password."""
    return f"password of {user} reset"


@tool(idempotent=True)
def invoice(number: str) -> str:
    """Look an invoice up."""
    return f"invoice {number}: 30 EUR, paid"


def names(context: LlmContext) -> list[str]:
    return [t.name for t in context.tools]


def triage_script(context: LlmContext) -> ModelReply:
    """Hands anything about an invoice to billing; answers the rest itself."""
    if "invoice" in question(context):
        return call_tools(("transfer_to_billing", {"reason": "an invoice question"}, "h1"))
    return say(f"triage answers: {question(context)}")


def billing_script(context: LlmContext) -> ModelReply:
    """Looks the invoice up, or hands a password question back to triage."""
    if "password" in question(context):
        return call_tools(("transfer_to_triage", {}, "h2"))
    found = results(context)
    if not found:
        return call_tools(("invoice", {"number": "42"}, "i1"))
    return say(f"billing: {found[0].content}")


def agents(billing_context: object = None) -> tuple[Agent, ScriptedModel, ScriptedModel]:
    """A triage agent that hands off to a billing agent, which hands back to triage by name."""
    triage_model, billing_model = ScriptedModel(triage_script), ScriptedModel(billing_script)
    billing = Agent(
        billing_model,
        name="billing",
        description="Questions about invoices.",
        tools=[invoice],
        config=AgentConfig(system_prompt="You handle invoices."),
        handoffs=["triage"],
        handoff_context=billing_context,  # type: ignore[arg-type]
    )
    triage = Agent(
        triage_model,
        name="triage",
        tools=[reset_password],
        config=AgentConfig(system_prompt="You sort questions."),
        handoffs=[billing],
        clock=ManualClock(),
        ids=SequentialIds(),
    )
    return triage, triage_model, billing_model


async def test_the_billing_agent_takes_over_with_its_model_instructions_and_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    triage, triage_model, billing_model = agents()
    store = SqliteStore(tmp_path / "desk.db")
    async with open_session(
        store, "desk", triage.model, tools=triage.toolbox, config=triage.config, name="triage", handoffs=triage.handoffs
    ) as session:
        session.send("my invoice 42 looks wrong")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.messages[len(state.messages) - 1].content == "billing: invoice 42: 30 EUR, paid"
    assert state.agent == "billing" and ac.active_agent(state) == "billing"
    [asked] = triage_model.calls
    assert (asked.system_prompt, names(asked)) == ("You sort questions.", ["reset_password", "transfer_to_billing"])
    first = billing_model.calls[0]
    assert (first.system_prompt, names(first)) == ("You handle invoices.", ["invoice", "transfer_to_triage"])
    assert [e.content for e in first.entries if isinstance(e, ContextMessage)] == ["my invoice 42 looks wrong"]
    assert state.turn is None and list(state.tool_calls) == ["i1"]  # the transfer call is not a tool call
    report = replay_session(store, "desk")  # the handoff replays: the same state, bit for bit
    assert ac.state_hash(report.state) == ac.state_hash(state)
    handoff = [e for e in conversation(store, "desk") if e.kind == "handoff"]
    assert [(e.title, e.text) for e in handoff] == [("handed off: triage -> billing", "an invoice question")]
    rows = [row for row in timeline(store, "desk") if row.type == "handed-off"]
    assert [row.summary for row in rows] == ["triage -> billing: an invoice question"]
    assert [(row.completed, row.cancelled) for row in rows] == [(("call-llm:1:0:0",), ())]  # triage's call answered
    code = main(["show", str(tmp_path / "desk.db"), "desk", "--no-pager"])
    shown = capsys.readouterr().out
    assert code == 0 and "⇄ handed off: triage -> billing" in shown
    assert "agent: triage (hands off to billing; agents: billing)" in shown
    assert main(["inspect", str(tmp_path / "desk.db"), "desk"]) == 0
    inspected = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["handed-off", "thinking", "triage", "->", "billing:", "an", "invoice", "question"] in [
        line[2:] for line in inspected
    ]


async def test_the_agent_handed_to_keeps_the_conversation_and_can_hand_it_back_by_name() -> None:
    triage, triage_model, _ = agents()
    async with triage.running() as session:
        session.send("invoice 42?")
        with anyio.fail_after(10):
            await session.turn_done()
        session.send("and my password?")  # billing answers the next turn, and hands it back
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.agent == "" and ac.active_agent(state) == "triage"
    assert state.messages[len(state.messages) - 1].content == "triage answers: and my password?"
    back = triage_model.calls[-1]  # triage sees the whole conversation, billing's answer included
    said = [e.content for e in back.entries if isinstance(e, ContextMessage)]
    assert said == ["invoice 42?", "billing: invoice 42: 30 EUR, paid", "and my password?"]


async def test_a_context_filter_decides_what_the_agent_handed_to_is_sent() -> None:
    def last_message_only(context: LlmContext) -> LlmContext:
        users = [e for e in context.entries if isinstance(e, ContextMessage) and e.role == "user"]
        kept = tuple(e for e in context.entries if not isinstance(e, ContextMessage) or e is users[-1])
        return ac.LlmContext(**{**{f: getattr(context, f) for f in context.__struct_fields__}, "entries": kept})

    triage, triage_model, billing_model = agents(last_message_only)
    async with triage.running() as session:
        session.send("hello")
        with anyio.fail_after(10):
            await session.turn_done()
        session.send("invoice 42?")
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.agent == "billing"
    assert len([e for e in triage_model.calls[-1].entries if isinstance(e, ContextMessage)]) == 3  # unfiltered
    sent = [e.content for e in billing_model.calls[0].entries if isinstance(e, ContextMessage)]
    assert sent == ["invoice 42?"]


async def test_a_resumed_session_goes_on_with_the_agent_it_was_handed_to(tmp_path: Path) -> None:
    arrived, release = anyio.Event(), anyio.Event()

    @tool(name="invoice", idempotent=True)
    async def slow_invoice(number: str) -> str:
        """Look an invoice up."""
        arrived.set()
        await release.wait()
        return f"invoice {number}: 30 EUR, paid"

    def make() -> tuple[Agent, ScriptedModel, ScriptedModel]:
        triage_model, billing_model = ScriptedModel(triage_script), ScriptedModel(billing_script)
        billing = Agent(billing_model, name="billing", tools=[slow_invoice], handoffs=["triage"])
        return Agent(triage_model, name="triage", handoffs=[billing]), triage_model, billing_model

    store = SqliteStore(tmp_path / "desk.db")
    first, _, _ = make()
    async with open_session(store, "desk", first.model, name="triage", handoffs=first.handoffs) as session:
        session.send("invoice 42?")
        with anyio.fail_after(10):
            await arrived.wait()  # billing's tool runs: the process stops here, mid-turn
    stopped = load_state(store, "desk")
    assert stopped.agent == "billing" and stopped.turn is not None
    release.set()
    again, triage_model, billing_model = make()
    async with open_session(store, "desk", again.model, name="triage", handoffs=again.handoffs) as session:
        with anyio.fail_after(10):
            state = await session.turn_done()
    assert state.messages[len(state.messages) - 1].content == "billing: invoice 42: 30 EUR, paid"
    assert triage_model.calls == [] and len(billing_model.calls) == 1  # billing's model answered after the resume
    with pytest.raises(ValueError) as refused:  # resumed without its agents: said, not a session that drifts
        async with open_session(store, "desk", again.model):
            pass
    assert str(refused.value) == (
        "session 'desk' hands off between agents 'triage', 'billing', which this Agent does not declare; "
        "expected the same agents (handoffs=[...]) as when the session started"
    )


async def test_a_handoff_to_an_agent_not_declared_is_refused_at_session_start_naming_the_agents() -> None:
    billing = Agent(ScriptedModel(billing_script), name="billing", handoffs=["refunds"])
    triage = Agent(ScriptedModel(triage_script), name="triage", handoffs=[billing])
    with pytest.raises(ValueError) as refused:
        async with triage.running():
            pass
    assert str(refused.value) == (
        "agent 'billing' hands off to 'refunds', which is not declared; declared agents: 'triage', 'billing' "
        "(pass the Agent itself in handoffs=[...], or the name of one of these)"
    )


async def test_agents_without_names_or_with_clashing_tools_are_refused() -> None:
    nameless = Agent(ScriptedModel(billing_script))
    with pytest.raises(ValueError, match="agents that hand off or receive handoffs need names"):
        async with Agent(ScriptedModel(triage_script), name="triage", handoffs=[nameless]).running():
            pass

    @tool(name="invoice")
    def other_invoice(number: str) -> str:
        """Another invoice tool."""
        return number

    billing = Agent(ScriptedModel(billing_script), name="billing", tools=[invoice])
    triage = Agent(ScriptedModel(triage_script), name="triage", tools=[other_invoice], handoffs=[billing])
    with pytest.raises(ValueError) as refused:
        async with triage.running():
            pass
    assert str(refused.value).startswith("agents 'triage' and 'billing' both have a tool named 'invoice'")


def test_the_reducer_refuses_a_logged_handoff_to_an_agent_the_config_does_not_declare() -> None:
    started = ac.SessionStarted(
        timestamp=1,
        session_id="s",
        config=AgentConfig(agent_name="triage", handoffs=("billing",)),
    )
    with pytest.raises(ac.InvalidInput) as refused:
        ac.transition(ac.initial_state(), started)
    assert refused.value.rejection.message == (
        "agent 'triage' hands off to 'billing', which is not declared; declared agents: 'triage'"
    )


def test_a_handoff_from_an_agent_that_is_not_active_or_to_one_not_offered_is_refused() -> None:
    profile = ac.AgentProfile(name="billing", handoffs=("triage",))
    config = AgentConfig(agent_name="triage", handoffs=("billing",), agents=(profile,))
    state = ac.replay(
        [
            ac.SessionStarted(timestamp=1, session_id="s", config=config),
            ac.UserMessageReceived(timestamp=2, message_id="u1", content="hi"),
        ]
    )
    with pytest.raises(ac.InvalidInput) as wrong:
        ac.transition(state, ac.HandedOff(timestamp=3, from_agent="billing", to_agent="triage"))
    assert wrong.value.rejection.message == "expected a handoff from the active agent 'triage', got one from 'billing'"
    with pytest.raises(ac.InvalidInput) as unknown:
        ac.transition(state, ac.HandedOff(timestamp=3, from_agent="triage", to_agent="refunds"))
    assert unknown.value.rejection.message == "agent 'triage' cannot hand off to 'refunds'; it hands off to: 'billing'"
    after = ac.transition(state, ac.HandedOff(timestamp=3, from_agent="triage", to_agent="billing"))
    assert after.agent == "billing" and [t.name for t in ac.llm_context(after).tools] == ["transfer_to_triage"]


@given(handed_off())
def test_a_handoff_round_trips_through_both_codecs(inp: ac.HandedOff) -> None:
    for fmt in ("json", "msgpack"):
        assert ac.decode_input(ac.encode_input(inp, format=fmt), format=fmt) == inp  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_process_killed_after_a_handoff_resumes_with_the_agent_handed_to(tmp_path: Path) -> None:
    target = tmp_path / "desk.db"
    assert run("_handoff_child.py", target, "reference") == 0
    assert run("_handoff_child.py", target, "crashed", "kill") == -signal.SIGKILL
    store = SqliteStore(target)
    killed = load_state(store, "crashed")
    assert killed.agent == "billing" and killed.turn is not None and len(killed.messages) == 1
    assert run("_handoff_child.py", target, "crashed") == 0
    state = replay_session(store, "crashed").state  # the resumed log replays and verifies
    reference = load_state(store, "reference")
    said = [(state.messages[i].role, state.messages[i].content) for i in range(len(state.messages))]
    assert said == [(reference.messages[i].role, reference.messages[i].content) for i in range(len(reference.messages))]
    assert said[-1] == ("assistant", "billing: invoice 42: paid") and state.agent == "billing"
    handoffs = [e.title for e in conversation(store, "crashed") if e.kind == "handoff"]
    assert handoffs == ["handed off: triage -> billing"]  # handed once: the resumed turn did not ask triage again


async def test_a_temporal_session_with_handoffs_is_refused_before_anything_starts() -> None:
    temporal = pytest.importorskip("effects.temporal")
    config = AgentConfig(agent_name="triage", handoffs=("billing",), agents=(ac.AgentProfile(name="billing"),))
    with pytest.raises(ValueError) as refused:  # said before the client is used: no server is needed to hear it
        await temporal.start_session(None, "desk", config=config)
    assert str(refused.value) == (
        "session 'desk': handoffs between agents ('triage' and 'billing') do not run under Temporal yet; expected a "
        "config without handoffs, or the session run by Agent.running() / open_session()"
    )
