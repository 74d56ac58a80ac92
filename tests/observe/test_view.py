"""What the viewer shows, without a browser: the view of a session, one record, and the ``ui`` command's checks."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_core import AgentConfig
from effects import MemoryStore, SqliteStore, open_session, record_view, session_view, verify_view
from effects.cli import main
from effects.testing import ManualClock, ScriptedModel, call_tools

from ._session import CLOCKS, SESSION, START, lookup, recorded


def test_the_view_of_a_session_has_lanes_records_conversation_and_stats() -> None:
    store = MemoryStore()
    recorded(store)
    view = session_view(store, SESSION)
    assert view["phase"] == "idle" and len(view["records"]) == 16
    outcomes = {lane["key"]: lane["outcome"] for lane in view["lanes"]}
    assert outcomes["call-tool:c2"] == "failed" and outcomes["turn:1"] == "completed"
    assert view["approvals"] == [] and (view["from"], view["to"]) == (1, 16)
    assert view["conversation"][-1]["title"] == "turn 1 completed"
    assert verify_view(store, SESSION)["ok"] is True


def test_a_turn_that_ran_out_of_budget_is_marked_where_it_did() -> None:
    async def run(store: MemoryStore) -> None:
        model = ScriptedModel([call_tools(("lookup", {"q": "a"}))] * 3)
        config = AgentConfig(max_model_calls=1)
        async with open_session(store, "budget", model, tools=[lookup], config=config, clock=ManualClock(START)) as s:
            s.send("go")
            await s.settled()

    CLOCKS.append(ManualClock(START))
    store = MemoryStore()
    anyio.run(run, store)
    view = session_view(store, "budget")
    assert view["budgets"]["limits"]["model_calls"] == 1
    [turn] = [lane for lane in view["lanes"] if lane["kind"] == "turn"]
    assert (turn["key"], turn["outcome"], turn["reason"]) == ("turn:1", "failed", "max-model-calls")


def test_a_record_shows_its_state_diff_and_the_context_of_the_call_it_starts() -> None:
    store = MemoryStore()
    recorded(store)
    detail = record_view(store, SESSION, 2)
    assert detail["input"]["type"] == "user-message-received"
    assert {"path": "phase", "before": "idle", "after": "thinking"} in detail["diff"]
    assert detail["context"]["messages"] == [
        {"role": "user", "parts": [{"type": "text", "content": "Look up otel and mail ops."}]}
    ]
    assert record_view(store, SESSION, 6)["context"] is None
    with pytest.raises(ValueError, match="has records 1 to 16; there is no record 17"):
        record_view(store, SESSION, 17)


def test_ui_serves_loopback_only_and_an_existing_store_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", str(tmp_path / "none.db")]) == 2
    assert "none.db: no such file" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()
    SqliteStore(tmp_path / "log.db").close()
    assert main(["ui", str(tmp_path / "log.db"), "--host", "0.0.0.0"]) == 2
    assert "--host must be a loopback address" in capsys.readouterr().err
