"""Metrics from the log (``session_stats``, ``agent-core stats``) and the whole conversation (``agent-core show``)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agent_core import (
    AgentConfig,
    ContinueReAct,
    ReActObserved,
    SessionStarted,
    ToolCallRequest,
    ToolDefinition,
    Usage,
    UserMessageReceived,
)
from effects import MemoryStore, SessionJournal, SqliteStore, open_session, session_stats
from effects.cli import main
from effects.testing import ManualClock, ScriptedModel, call_tools

from ._session import CLOCKS, SESSION, START, lookup, recorded


def test_stats_of_a_known_session() -> None:
    store = MemoryStore()
    recorded(store)
    stats = session_stats(store, SESSION)
    assert (stats.records, stats.model_calls, stats.failed_model_calls, stats.retries) == (16, 4, 1, 1)
    assert stats.backoff_ms == 1000
    assert stats.phase_ms == {"idle": 0, "thinking": 0, "retrying": 1000, "acting": 1300, "awaiting-approval": 250}
    [turn] = stats.turns
    assert (turn.outcome, turn.model_calls, turn.tool_calls, turn.retries) == ("completed", 4, 3, 1)
    assert turn.context_entries == (1, 1, 4, 6)  # the context grows with each round of tool calls
    tools = {t.name: t for t in stats.tools}
    assert (tools["lookup"].succeeded, tools["lookup"].latency.max_ms) == (1, 400)
    assert (tools["flaky"].failed, tools["flaky"].succeeded) == (1, 0)
    assert stats.outcomes == {"completed": 1} and stats.budget_exhaustions == {} and stats.stuck == 0


def test_budget_exhaustions_are_counted() -> None:
    async def run(store: MemoryStore) -> None:
        model = ScriptedModel([call_tools(("lookup", {"q": "a"}))] * 3)
        config = AgentConfig(max_model_calls=1)
        clock = ManualClock(START)
        async with open_session(store, "budget", model, tools=[lookup], config=config, clock=clock) as session:
            session.send("go")
            await session.settled()

    CLOCKS.append(ManualClock(START))
    store = MemoryStore()
    anyio.run(run, store)
    stats = session_stats(store, "budget")
    assert stats.budget_exhaustions == {"max-model-calls": 1}
    assert stats.outcomes == {"failed": 1}
    assert stats.turns[0].reason == "max-model-calls"


def test_stats_command_prints_a_line_per_session_and_json(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["SESSION", "TURNS", "OUTCOMES"]
    assert lines[1].split() == [SESSION, "1", "1", "completed", "4", "866/20", "3", "1", "1", "0.00"]
    assert main(["stats", db, SESSION, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["retries"] == 1 and data["tools"][0]["name"] == "flaky"
    assert main(["stats", db, SESSION]) == 0
    out = capsys.readouterr().out
    assert "time by phase: retrying 1.0 s (39%), acting 1.3 s (50%), awaiting-approval 250 ms (9%)" in out
    assert "1 -> 1 -> 4 -> 6" in out


def test_stats_of_an_unknown_session_is_one_line(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", db, "nope"]) == 2
    assert capsys.readouterr().err.startswith("agent-core stats: ")


def test_show_prints_the_whole_conversation(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", db, SESSION]) == 0
    out = capsys.readouterr().out
    assert "        Look up otel and mail ops." in out
    assert '#5        +1.000s  → lookup (c1)\n        {\n          "q": "otel"\n        }' in out
    assert "#8        +1.400s  ← lookup (c1)\n        otel: a small example" in out
    assert "✗ flaky (c2)\n        tool 'flaky' failed (tool call 'c2'): RuntimeError: the backend is down. Check" in out
    assert "#11       +2.550s  ! approved c3" in out
    assert out.rstrip().endswith("#16       +2.550s  = turn 1 completed")
    assert main(["show", db, SESSION, "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["kind"] for e in entries][:3] == ["session", "user", "error"]


def test_show_prints_arguments_nested_100000_deep_as_they_came(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Arguments a model sent nested deeper than arguments may be are printed as text, never parsed into a
    ``RecursionError``; arguments within the bound are indented."""
    deep = "[" * 100_000 + "]" * 100_000
    calls = {
        "c1": ToolCallRequest(name="lookup", parameters=deep),
        "c2": ToolCallRequest(name="lookup", parameters='{"q": [1]}'),
    }
    store = SqliteStore(tmp_path / "log.db")
    SessionJournal(store, "deep").append(
        [
            SessionStarted(
                timestamp=START, session_id="deep", config=AgentConfig(), tools=(ToolDefinition(name="lookup"),)
            ),
            UserMessageReceived(timestamp=START + 1, message_id="u1", content="go"),
            ReActObserved(
                timestamp=START + 2,
                called_llm_at=START + 1,
                observation=ContinueReAct(tool_calls=calls),
                usage=Usage(input_tokens=1, output_tokens=1),
            ),
        ]
    )
    store.close()
    assert main(["show", str(tmp_path / "log.db"), "deep"]) == 0
    out = capsys.readouterr().out
    assert f"→ lookup (c1)\n        {deep}\n" in out
    assert '→ lookup (c2)\n        {\n          "q": [\n            1\n          ]\n        }' in out
