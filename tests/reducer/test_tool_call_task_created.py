"""``tool-call-task-created``: a running call hands its work to a remote task, whose id is logged."""

from __future__ import annotations

import agent_core as ac

from ._build import T0, ask, fold, in_turn, ok, rejected
from .test_tool_call_input_required import asks, one_call_running


def created(call_id: str = "t1", at: int = T0 + 4, task_id: str = "task-7") -> ac.ToolCallTaskCreated:
    return ac.ToolCallTaskCreated(timestamp=at, tool_call_id=call_id, task_id=task_id)


def test_the_call_keeps_running_and_remembers_its_task() -> None:
    state = fold(one_call_running(), created())
    assert (state.tool_calls["t1"].status, state.tool_calls["t1"].task_id) == ("running", "task-7")
    assert list(ac.effects_at(state)) == ["call-tool:t1"]  # the same effect goes on: no restart
    state = fold(state, ok("t1", at=T0 + 5))
    assert state.tool_calls["t1"].task_id == "task-7"  # kept with the result, for the record


def test_the_task_survives_a_question_and_its_answer() -> None:
    state = fold(one_call_running(), created(), asks(at=T0 + 5))
    state = fold(state, ac.ToolCallInputProvided(timestamp=T0 + 6, tool_call_id="t1", responses='{"a":{}}'))
    assert (state.tool_calls["t1"].status, state.tool_calls["t1"].task_id) == ("pending", "task-7")


def test_a_second_task_is_rejected() -> None:
    rejection = rejected(fold(one_call_running(), created()), created(task_id="task-8", at=T0 + 5))
    assert (rejection.code, rejection.guard) == ("task-already-created", "one-task-per-call")
    assert rejection.message == (
        "tool call 't1' (fetch) already follows task 'task-7'; expected no second task, got 'task-8'"
    )


def test_only_a_running_call_creates_a_task() -> None:
    rejection = rejected(fold(in_turn(), ask(at=T0 + 2, t1="fetch")), created(at=T0 + 3))
    assert (rejection.code, rejection.guard) == ("call-pending", "call-is-running")


def test_an_empty_task_id_is_rejected() -> None:
    rejection = rejected(one_call_running(), created(task_id=""))
    assert (rejection.code, rejection.guard) == ("empty-task-id", "task_id-present")
    assert rejection.message == "expected the remote task's id in task_id, got an empty string"
