"""``agent-core workflow`` (table, Mermaid, JSON) and the workflow lines of ``inspect``."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

import agent_core as ac
from effects import SessionJournal, SqliteStore
from effects.cli import main

TOOLS = (ac.ToolDefinition(name="read"), ac.ToolDefinition(name="plan"), ac.ToolDefinition(name="write"))
WORKFLOW = ac.Workflow(
    states=(
        ac.WorkflowState(name="planning", tools=("read", "plan"), approval=("plan",)),
        ac.WorkflowState(name="building", tools=("read", "write")),
    ),
    initial="planning",
    transitions=(ac.WorkflowTransition(source="planning", target="building", tool="plan"),),
)
INPUTS: list[ac.AgentInput] = [
    ac.SessionStarted(timestamp=1, session_id="s1", tools=TOOLS, config=ac.AgentConfig(workflow=WORKFLOW)),
    ac.UserMessageReceived(timestamp=2, message_id="m1", content="go"),
    ac.ReActObserved(
        timestamp=3, called_llm_at=3, observation=ac.ContinueReAct(tool_calls={"p1": ac.ToolCallRequest(name="plan")})
    ),
    ac.ToolCallApproved(timestamp=4, tool_call_id="p1"),
    ac.ToolCallCompleted(timestamp=5, tool_call_id="p1", result=ac.ToolSuccess(content="ok")),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "s1.jsonl"
    path.write_bytes(ac.encode_log(INPUTS))
    return path


def test_the_mermaid_diagram_of_a_log(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "workflow", str(log), "--mermaid")
    assert (code, out) == (0, ac.workflow_mermaid(WORKFLOW))
    assert out.startswith("stateDiagram-v2\n    [*] --> planning\n")


def test_the_table_of_a_stored_session_and_its_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "log.db"
    journal = SessionJournal(SqliteStore(db, synchronous="NORMAL"), "s1")
    journal.append(INPUTS)
    journal.close()
    code, out, _ = run(capsys, "workflow", str(db), "s1")
    assert code == 0
    assert out.splitlines() == [
        "STATE               TOOLS        NEED APPROVAL",
        "planning (initial)  read, plan   plan",
        "building            read, write  -",
        "",
        "FROM      TRIGGER    GUARD  PRIORITY  TO",
        "planning  tool:plan  -      0         building",
    ]
    code, out, _ = run(capsys, "workflow", str(db), "s1", "--json")
    assert json.loads(out)["initial"] == "planning"
    code, out, _ = run(capsys, "inspect", str(db), "s1")
    assert "  workflow state: building\n    planning -> building at record 5 (tool:plan p1)\n" in out


def test_an_action_transition_shows_its_trigger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wf.json"
    workflow = ac.Workflow(
        states=(ac.WorkflowState(name="a"), ac.WorkflowState(name="b")),
        initial="a",
        transitions=(ac.WorkflowTransition(source="a", target="b", action="approved", guard="g", priority=2),),
    )
    path.write_bytes(msgspec.json.encode(workflow))
    code, out, _ = run(capsys, "workflow", str(path))
    assert code == 0
    assert out.splitlines()[-1] == "a     action:approved  g      2         b"


def test_a_source_without_a_workflow_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_bytes(ac.encode_log([ac.SessionStarted(timestamp=1, session_id="s2")]))
    code, out, err = run(capsys, "workflow", str(path))
    assert (code, out) == (2, "")
    assert err.strip() == (
        f"agent-core workflow: {path} declares no workflow (its session-started has no config.workflow); "
        "every tool is offered in every step of such a session"
    )


def test_a_bad_workflow_file_says_what_was_expected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wf.json"
    path.write_text('{"states": []}')
    code, _, err = run(capsys, "workflow", str(path))
    assert code == 2
    assert err.strip() == (
        f"agent-core workflow: {path}: expected one workflow object (states, initial, transitions), "
        "got: Object missing required field `initial`"
    )


def test_a_workflow_a_session_would_refuse_is_not_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.json"
    path.write_text(
        '{"states": [{"name": "plan", "approval": ["write"]}], "initial": "build",'
        ' "transitions": [{"source": "plan", "target": "done", "tool": "read"}]}'
    )
    assert main(["workflow", str(path), "--mermaid"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"agent-core workflow: {path}: a session would refuse this workflow: initial state 'build' is not declared; "
        "declared: plan; state 'plan' asks approval for 'write', which it does not offer; transition 'plan' -> "
        "'done' names undeclared state 'done'; fix the workflow\n"
    )
