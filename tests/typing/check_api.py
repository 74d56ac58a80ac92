"""Static types of the public API, checked by ``mypy --strict`` (see test_typing_api.py).

Each ``assert_type`` states the type a user's code sees. A ``# type: ignore``
marks a misuse the types must refuse: under ``--strict`` (which warns about
unused ignores) mypy fails if such a line ever type-checks. The file also runs
as plain Python, so every call here is a real, valid use of the API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_type

from immutables import Map

import agent_core as ac

# --- building a session ----------------------------------------------------------------

tools = (ac.ToolDefinition(name="search", description="Search the docs.", idempotent=True),)
config = ac.AgentConfig(system_prompt="Be brief.", max_tool_calls=4, on_budget_exhausted="final-answer")
start = ac.SessionStarted(timestamp=1, session_id="s1", config=config, tools=tools)
hello = ac.UserMessageReceived(timestamp=2, message_id="m1", content="hi")
asked = ac.ReActObserved(
    timestamp=3,
    called_llm_at=2,
    observation=ac.ContinueReAct(tool_calls={"t1": ac.ToolCallRequest(name="search", parameters="{}")}),
    usage=ac.Usage(input_tokens=10, output_tokens=2),
)
inputs: list[ac.AgentInput] = [start, hello, asked]

state = ac.initial_state()
assert_type(state, ac.AgentState)
state = ac.transition(state, start)
assert_type(ac.check(state, hello), ac.Rejection | None)
state = ac.replay(inputs[1:], state)
assert_type(state, ac.AgentState)
assert_type(ac.replay(inputs), ac.AgentState)

# --- reading the state ---------------------------------------------------------------------

assert_type(ac.phase(state), ac.Phase)
assert_type(ac.valid_inputs(state), tuple[str, ...])
assert_type(ac.VALID_INPUTS[ac.Phase.IDLE], frozenset[str])
assert_type(state.messages[0], ac.Message)
assert_type(state.messages[-2:], ac.Vector[ac.Message])
assert_type(list(state.messages), list[ac.Message])
as_sequence: Sequence[ac.Message] = state.messages
assert_type(state.tool_call_log[-1], str)
assert_type(state.tool_calls["t1"], ac.ToolCallRecord)
assert_type(state.tool_calls.get("t1"), ac.ToolCallRecord | None)
assert_type(
    state.tool_calls.set("t1", state.tool_calls["t1"]), Map[str, ac.ToolCallRecord] | ac.Table[str, ac.ToolCallRecord]
)
as_mapping: Mapping[str, ac.ToolCallRecord] = state.tool_calls
assert_type(state.message_index["m1"], int)
assert_type(state.tool_calls["t1"].result, ac.ToolResult | None)
assert_type(state.turn, ac.Turn | None)
assert_type(state.last_outcome, ac.TurnOutcome | None)
assert_type(ac.check_invariants(state), None)
assert_type(ac.tag_of(hello), str)
assert_type(ac.INPUT_TAGS, tuple[str, ...])

# --- effects and the model's request ------------------------------------------------------------

effects = ac.effects_at(state)
assert_type(effects, dict[str, ac.Effect])
for effect in effects.values():
    if isinstance(effect, ac.CallTool):
        assert_type(effect.tool_call_id, str)
    elif isinstance(effect, ac.CallLlm):
        assert_type(effect.tools_enabled, bool)
    else:
        assert_type(effect, ac.WaitUntil)
context = ac.llm_context(state)
assert_type(context, ac.LlmContext)
assert_type(context.entries, tuple[ac.ContextEntry, ...])
assert_type(context.past_tool_calls, tuple[ac.PastToolCall, ...])

# --- codecs -------------------------------------------------------------------------------------

assert_type(ac.encode_input(hello), bytes)
assert_type(ac.encode_input(hello, format="msgpack"), bytes)
assert_type(ac.decode_input(ac.encode_input(hello)), ac.AgentInput)
assert_type(ac.encode_log(inputs), bytes)
assert_type(ac.decode_log(ac.encode_log(inputs), source="s1.jsonl"), list[ac.AgentInput])
assert_type(ac.encode_state(state, format="json"), bytes)
assert_type(ac.decode_state(ac.encode_state(state)), ac.AgentState)
assert_type(ac.state_hash(state), str)
assert_type(ac.input_json_schema(), dict[str, Any])

# --- errors -------------------------------------------------------------------------------------

try:
    ac.transition(state, start)
except ac.InvalidInput as error:
    assert_type(error.rejection, ac.Rejection)
    assert_type(error.rejection.valid_now, tuple[str, ...])
    assert_type(error.index, int | None)
try:
    ac.decode_log(b"")
except ac.DecodeError as decode_error:
    assert_type(decode_error.record, int | None)
    assert_type(decode_error.path, str)

# --- misuse the types refuse ---------------------------------------------------------------------


def misuse() -> None:
    """Never called: each line is a mistake mypy must report."""
    ac.transition(state, "user-message-received")  # type: ignore[arg-type]
    ac.encode_input(hello, format="xml")  # type: ignore[arg-type]
    state.step = 3  # type: ignore[misc]
    ac.AgentConfig(on_budget_exhausted="retry")  # type: ignore[arg-type]
    ac.AgentConfig(user_message_policy="drop")  # type: ignore[arg-type]
    ac.UserMessageReceived(message_id="m", content="x")  # type: ignore[call-arg]
    ac.ToolCallCompleted(timestamp=1, tool_call_id="t", result="ok")  # type: ignore[arg-type]

# --- tools (effects) -------------------------------------------------------------------------

import effects as fx  # noqa: E402
from effects.testing import ScriptedModel  # noqa: E402


@fx.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@fx.tool(idempotent=True)
async def fetch(url: str) -> str:
    """Fetch a page."""
    return url


assert_type(add(1, 2), int)  # still the function
assert_type(fetch.definition, ac.ToolDefinition)
# A tool is covariant in its result: tools of any results fit a list of tools returning objects.
mixed: list[fx.Tool[..., object]] = [add, fetch]
agent = fx.Agent(ScriptedModel([]), tools=mixed)
assert_type(agent.toolbox["add"], fx.Tool[..., Any])

# --- structured output (effects) ------------------------------------------------------------------

from pydantic import BaseModel  # noqa: E402


class City(BaseModel):
    name: str


typed = fx.Agent(ScriptedModel([]), output_type=City)


async def outputs(session: fx.Session) -> None:
    assert_type(session.output(City), City)
    assert_type(await session.turn_output(City), City)
