"""A rule or a workflow guard that raises, through a live session: the turn fails visibly, nothing escapes."""

from __future__ import annotations

from typing import Any

import pytest

import agent_core as ac
from effects import tool
from effects.testing import ScriptedModel, call_tools, say

from ._helpers import Recorder, make_agent

RAN: list[str] = []


@tool
async def deploy(target: str) -> str:
    """Deploy to a target."""
    RAN.append(target)
    return f"deployed to {target}"


@ac.register_rule("scenario-raises-on-prod")
def _raises_on_prod(call: ac.ProposedCall, state: ac.AgentState) -> ac.Verdict:
    if isinstance(call.arguments, dict) and call.arguments.get("target") == "prod":
        raise LookupError("no change window for prod")
    return ac.ALLOW


@ac.register_guard("scenario-raising-guard")
def _raising_guard(state: ac.AgentState, trigger: ac.AgentInput) -> bool:
    raise ZeroDivisionError("division by zero")


async def run_once(script: list[Any], **config: Any) -> tuple[ac.AgentState, ScriptedModel]:
    """Run one turn of a deploying agent until it settles: the final state (checked to replay, with only
    the staging deploy run) and the model."""
    RAN.clear()
    agent, model, _ = make_agent(script, tools=[deploy], **config)
    async with agent.running() as session:
        recorder = Recorder(session)
        session.send("deploy")
        await session.settled()
        state = session.state
    assert RAN == ["staging"]
    recorder.assert_replays_to(state)
    return state, model


@pytest.mark.anyio
async def test_a_raising_rule_fails_the_turn_and_the_call_never_runs() -> None:
    script = [call_tools(("deploy", {"target": "staging"})), call_tools(("deploy", {"target": "prod"})), say("never")]
    state, model = await run_once(script, rules=("scenario-raises-on-prod",))
    assert len(model.calls) == 2
    assert ac.phase(state) == "idle"
    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "rule:scenario-raises-on-prod-raised")
    assert state.last_outcome.detail == (
        "rule 'scenario-raises-on-prod' raised LookupError: no change window for prod on tool call 'call-2' "
        "(deploy); expected a pure rule that returns; fix it (it is called again on replay)"
    )


@pytest.mark.anyio
async def test_a_raising_guard_after_a_tool_success_fails_the_turn_and_the_workflow_stays() -> None:
    workflow = ac.Workflow(
        states=(ac.WorkflowState(name="ready", tools=("deploy",)), ac.WorkflowState(name="done")),
        initial="ready",
        transitions=(
            ac.WorkflowTransition(source="ready", target="done", tool="deploy", guard="scenario-raising-guard"),
        ),
    )
    state, model = await run_once([call_tools(("deploy", {"target": "staging"})), say("never")], workflow=workflow)
    assert len(model.calls) == 1
    assert (state.workflow_state, state.audit) == ("ready", ())
    assert state.last_outcome is not None
    assert (state.last_outcome.kind, state.last_outcome.reason) == ("failed", "guard:scenario-raising-guard-raised")
