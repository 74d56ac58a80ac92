"""``agent-core run``: the demo prints its conversation and a state hash that the log replays to."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from agent_core import decode_log, replay, state_hash
from effects import SqliteStore, open_session
from effects.cli import main
from effects.testing import ScriptedModel


def test_run_prints_the_conversation_and_a_hash_the_log_replays_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "demo.jsonl"
    assert main(["run", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "user > What is 17 * 23 + 4, and what time is it?" in lines
    assert '  -> calculate(expression="17 * 23 + 4")  [call-1]' in lines
    assert "  <- [call-1] 395" in lines
    assert "assistant > 17 * 23 + 4 = 395, and it is 2026-01-01T00:00:00+00:00 (UTC)." in lines
    assert any(line.startswith("  <- [call-3] FAILED: invalid arguments for tool 'search_notes'") for line in lines)
    assert "  = turn 3 completed" in lines
    assert "phase: idle" in lines
    printed = lines[-1].removeprefix("state hash: ")
    assert printed == state_hash(replay(decode_log(log.read_bytes())))

    assert main(["run", "--chunk-size", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"state hash: {printed}"


def test_run_refuses_a_negative_chunk_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--chunk-size", "-1"]) == 2
    assert capsys.readouterr().err == "agent-core run: --chunk-size must be 0 or more, got -1\n"


def test_run_help_explains_the_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "--help"])
    assert exited.value.code == 0
    assert "a tool call the model asked for; calls asked together run in parallel" in capsys.readouterr().out


@pytest.mark.anyio
async def test_run_on_a_session_another_writer_runs_is_one_line_naming_the_holder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "agent.db"
    store = SqliteStore(db)
    async with open_session(store, "s1", ScriptedModel([])):
        code = await anyio.to_thread.run_sync(main, ["run", "--db", str(db), "--session", "s1"])
    store.close()
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"agent-core run: session 's1' is being run by another writer, pid {os.getpid()} on ")
