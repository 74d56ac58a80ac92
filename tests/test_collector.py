"""What grows with a session leaves the cycle collector nothing more to walk.

A long session (thousands of messages, tool calls and workflow moves, enough
for two levels of every vector's trie and several runs in every table) is
folded through the public API; after a collection, the objects the collector
tracks among everything its growing collections hold are counted. A vector is
its shell alone: every node of its trie untracked. A table (what a map of more than 4,096 entries
becomes) is its shell, its small map of recent writes and the tuple of its
runs, however long the session. One tracked item (a Struct declared without ``gc=False``, a list
inside a record) would keep every node above it tracked, and these counts
would grow with the session.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import agent_core as ac

FLIP = ac.ToolDefinition(name="flip")
WORKFLOW = ac.Workflow(
    states=(ac.WorkflowState(name="up", tools=("flip",)), ac.WorkflowState(name="down", tools=("flip",))),
    initial="up",
    transitions=(
        ac.WorkflowTransition(source="up", target="down", tool="flip"),
        ac.WorkflowTransition(source="down", target="up", tool="flip"),
    ),
)
TURNS = 4_500  # 9,000 messages, 4,500 tool calls and moves: past a one-level trie (1,056) and a small map (4,096)


def session(turns: int) -> Iterator[ac.AgentInput]:
    """A workflow session whose every turn is a user message, one tool call that moves it, and an answer."""
    config = ac.AgentConfig(workflow=WORKFLOW, max_turn_ms=None)
    yield ac.SessionStarted(timestamp=0, session_id="long", config=config, tools=(FLIP,))
    for n in range(turns):
        t = 1 + n * 10
        yield ac.UserMessageReceived(timestamp=t, message_id=f"u{n}", content=f"question {n}")
        request = {f"c{n}": ac.ToolCallRequest(name="flip", parameters=f'{{"n":{n}}}')}
        yield ac.ReActObserved(timestamp=t + 1, called_llm_at=t, observation=ac.ContinueReAct(tool_calls=request))
        yield ac.ToolCallStarted(timestamp=t + 2, tool_call_id=f"c{n}")
        yield ac.ToolCallCompleted(timestamp=t + 3, tool_call_id=f"c{n}", result=ac.ToolSuccess(content=f"{n}"))
        yield ac.LlmMessageStarted(timestamp=t + 4, message_id=f"a{n}")
        yield ac.LlmMessageCompleted(timestamp=t + 5, message_id=f"a{n}", content=f"answer {n}")
        yield ac.ReActObserved(timestamp=t + 6, called_llm_at=t + 4, observation=ac.CompleteReAct())


@pytest.fixture(scope="module")
def long_state() -> ac.AgentState:
    state = ac.replay(session(TURNS))
    assert (len(state.messages), len(state.tool_call_log), len(state.audit)) == (2 * TURNS, TURNS, TURNS)
    # A tuple is untracked by a collection that finds everything in it untracked; one checked before
    # its children waits for the next collection of its generation: one collection per level.
    for _ in range(3):
        gc.collect()
    return state


def held(root: object) -> tuple[list[object], int]:
    """The objects the collector tracks among ``root`` and everything it holds, and how many objects were seen.

    Classes are not followed: an instance of a class defined in Python refers to its class.
    """
    tracked, seen, todo = [], {id(root)}, [root]
    while todo:
        item = todo.pop()
        if gc.is_tracked(item):
            tracked.append(item)
        for inner in gc.get_referents(item):
            if id(inner) not in seen and not isinstance(inner, type):
                seen.add(id(inner))
                todo.append(inner)
    return tracked, len(seen)


@pytest.mark.parametrize("field", ["messages", "tool_call_log", "audit"])
def test_a_long_vector_is_tracked_as_its_shell_alone(long_state: ac.AgentState, field: str) -> None:
    vector = getattr(long_state, field)
    tracked, seen = held(vector)
    assert tracked == [vector]
    assert seen > len(vector)  # the walk reached every item: nothing was skipped


@pytest.mark.parametrize("field", ["tool_calls", "message_index"])
def test_a_long_table_is_tracked_as_a_few_objects_whatever_its_size(long_state: ac.AgentState, field: str) -> None:
    table = getattr(long_state, field)
    assert isinstance(table, ac.Table)
    tracked, seen = held(table)
    assert seen > len(table)
    # The shell, the tuple of runs, and the small map of at most 1,023 recent writes with its nodes
    # (fewer than 1,200 whatever the session's length); none of the runs, none of the entries.
    assert len(tracked) < 1_200 < len(table) / 3, [type(item).__name__ for item in tracked][:20]
    assert not any(isinstance(item, dict) for item in tracked)


def test_a_long_state_decodes_to_an_equal_state_with_the_same_hash(long_state: ac.AgentState) -> None:
    for format in ("json", "msgpack"):
        decoded = ac.decode_state(ac.encode_state(long_state, format=format), format=format)
        assert decoded == long_state
        assert ac.state_hash(decoded) == ac.state_hash(long_state)
        assert isinstance(decoded.tool_calls, ac.Table) and isinstance(decoded.message_index, ac.Table)
        assert decoded.tool_calls["c7"] == long_state.tool_calls["c7"] and decoded.message_index["a9"] == 19
