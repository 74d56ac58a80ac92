"""The peer comparison's workloads still do the same work in every framework.

``benchmarks/peers`` runs one scripted ReAct workload through agent-core,
LangGraph and pydantic-ai. Its numbers mean something only while every
framework makes the same model calls and tool calls and gives the same
answers; these tests run each contender for two turns and check that.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

for module in ("langgraph", "langgraph.checkpoint.sqlite", "aiosqlite", "pydantic_ai"):
    pytest.importorskip(module, reason="the peer comparison needs the bench extra: pip install -e '.[bench]'")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.peers import agent_core_side, catalogue  # noqa: E402
from benchmarks.peers.workload import (  # noqa: E402
    MODEL_CALLS_PER_TURN,
    TOOL_CALLS_PER_TURN,
    Contender,
    Tally,
    expected_answer,
    question,
)

TURNS = 2
CONTENDERS = catalogue.every(("async", "sync"), ("async", "sync", "exit"))


async def converse(contender: Contender, directory: Path) -> tuple[Tally, int | None]:
    """Two turns of a new conversation, then (when it has a store) a resume of it; the tally and resumed count."""
    async with contender.open(directory) as conversation:
        for number in range(TURNS):
            conversation.tally.answers.append(await conversation.turn(question(number)))
    resumed = await contender.resume(directory) if contender.resume is not None else None
    return conversation.tally, resumed


@pytest.fixture(scope="module")
def agent_core_answers(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """agent-core's answers to the two turns, without persistence: what every peer must answer."""
    tally, _ = asyncio.run(converse(agent_core_side.contenders()[0], tmp_path_factory.mktemp("agent-core")))
    return tally.answers


def test_agent_core_answers_quote_every_tool_result(agent_core_answers: list[str]) -> None:
    assert agent_core_answers == [expected_answer(n) for n in range(TURNS)]
    assert agent_core_answers[1] == (
        "question 1: fetch(1.0.1) ok; fetch(1.1.1) ok; fetch(1.2.1) ok; fetch(1.3.1) ok; "
        "lookup(1.0.2) ok; lookup(1.1.2) ok; lookup(1.2.2) ok; lookup(1.3.2) ok; "
        "search(1.0.0) ok; search(1.1.0) ok; search(1.2.0) ok; search(1.3.0) ok"
    )


def test_every_framework_and_configuration_is_compared() -> None:
    frameworks = {(c.framework, c.persistence) for c in CONTENDERS}
    assert frameworks >= {
        ("agent-core", "none"),
        ("agent-core", "memory"),
        ("agent-core", "sqlite"),
        ("langgraph", "none"),
        ("langgraph", "memory"),
        ("langgraph", "sqlite"),
        ("pydantic-ai", "none"),
        ("pydantic-ai", "sqlite"),
    }
    forms = {c.form for c in CONTENDERS if c.framework == "langgraph"}
    assert {"create_react_agent (async)", "StateGraph (sync)", "StateGraph+delta (async)"} <= forms
    assert len({c.key for c in CONTENDERS}) == len(CONTENDERS)


@pytest.mark.parametrize("contender", CONTENDERS, ids=lambda c: c.key)
def test_same_work_as_agent_core(contender: Contender, tmp_path: Path, agent_core_answers: list[str]) -> None:
    tally, resumed = asyncio.run(converse(contender, tmp_path))

    assert tally.model_calls == TURNS * MODEL_CALLS_PER_TURN
    assert tally.tool_calls == TURNS * TOOL_CALLS_PER_TURN
    assert tally.answers == agent_core_answers
    if contender.persistence == "sqlite":
        # The stored conversation comes back whole: at least a question and an answer per turn.
        assert resumed is not None and resumed >= 2 * TURNS
