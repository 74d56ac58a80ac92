"""Text from outside that no codec can write (lone surrogates) is repaired where it enters, and a durable
session carries on: a tool's result, its error, a model's text and tool calls, a person's message. An input
holding one that is built by hand and given to the reducer is refused, saying where."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core import (
    AgentConfig,
    InvalidInput,
    SessionStarted,
    ToolFailure,
    ToolSuccess,
    UserMessageReceived,
    decode_log,
    replay,
    state_hash,
)
from effects import SqliteStore, export_session, open_session, tool
from effects.testing import ScriptedModel, call_tools, say

pytestmark = pytest.mark.anyio

NOT_UTF8 = os.fsdecode(b"report-\xff.txt")  # "report-\udcff.txt": what listing a directory gives for such a name


@tool
def newest_file() -> str:
    """The newest file's name."""
    return NOT_UTF8


@tool
def open_file(name: str) -> str:
    """Open a file."""
    raise FileNotFoundError(f"no such file: {NOT_UTF8}")


async def test_tool_results_errors_and_model_text_with_lone_surrogates_are_stored_repaired(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    script = ScriptedModel(
        [
            call_tools(("newest_file", {}), ("open_file", {"name": "report"})),
            say("I found report-\udcff.txt but could not open it."),
        ]
    )
    config = AgentConfig(max_turn_ms=None)
    async with open_session(store, "s", script, tools=[newest_file, open_file], config=config) as session:
        session.send("what is the newest file?")
        state = await session.turn_done()
    listed, opened = (state.tool_calls[i] for i in state.tool_call_log)
    assert listed.result == ToolSuccess(content="report-\ufffd.txt")
    assert isinstance(opened.result, ToolFailure)
    assert "no such file: report-\ufffd.txt" in opened.result.error
    assert state.messages[-1].content == "I found report-\ufffd.txt but could not open it."
    assert state_hash(replay(decode_log(export_session(store, "s")))) == state_hash(state)


async def test_a_person_s_message_and_reasons_are_repaired_too(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "log.db")
    async with open_session(store, "s", ScriptedModel([say("hello")]), config=AgentConfig()) as session:
        session.send(f"open {NOT_UTF8}")
        state = await session.turn_done()
    assert [m.content for m in state.messages] == ["open report-\ufffd.txt", "hello"]
    assert state_hash(replay(decode_log(export_session(store, "s")))) == state_hash(state)


def test_an_input_holding_one_built_by_hand_is_refused() -> None:
    start = SessionStarted(timestamp=1, session_id="s")
    with pytest.raises(InvalidInput, match=r"a lone surrogate U\+DCFF at \$\.content\[7\]"):
        replay([start, UserMessageReceived(timestamp=2, message_id="m", content=NOT_UTF8)])
