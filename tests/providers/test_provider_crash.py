"""A tool loop with thinking or reasoning survives what a process and a log go through: killed with SIGKILL between
its rounds and resumed from SQLite by another process, it continues against the strict fake without a refusal;
a compaction item survives a fork, and the forked session goes on with it in place."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from effects import SqliteStore, fork_session, load_state, open_session
from effects.providers import OpenAIResponsesModel
from effects.testing import (
    Compacted,
    FakeToolCall,
    ManualClock,
    SequentialIds,
    StrictAnthropicServer,
    StrictResponsesServer,
    Thought,
)

from ._providers import KEY

CHILD = Path(__file__).with_name("_provider_child.py")
ROOT = Path(__file__).resolve().parents[2]

ROUNDS: dict[int, list[Any]] = {
    0: [Thought("Add 2 and 3 first."), "Let me add.", FakeToolCall("toolu_1", "add", ['{"a": 2, "b": 3}'])],
    1: [
        Thought("Then one, twice."),
        FakeToolCall("toolu_2", "add", ['{"a": 5, "b": 1}']),
        Thought("and again", redacted=True),
        FakeToolCall("toolu_3", "add", ['{"a": 6, "b": 1}']),
    ],
    3: [Thought("That is all."), "2 + 3 + 1 + 1 = 7."],
}


def by_round(body: Any) -> list[Any]:
    """The reply for the round the request is in (by the tool results it carries), whoever asks, however often."""
    if "messages" in body:
        results = sum(
            1 for m in body["messages"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
        )
    else:
        results = sum(1 for item in body["input"] if item.get("type") == "function_call_output")
    return ROUNDS[results]


def run_child(provider: str, url: str, db: Path, *plan: str) -> int:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), provider, url, str(db), *plan], cwd=ROOT, stderr=subprocess.PIPE
    )
    _, errors = child.communicate(timeout=60)
    if child.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"child {plan} failed ({child.returncode}):\n{errors.decode()}")
    return child.returncode


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["anthropic", "responses"])
def test_a_tool_loop_killed_between_its_rounds_resumes_from_sqlite_without_a_refusal(
    provider: str, tmp_path: Path
) -> None:
    db = tmp_path / "crash.db"
    server = StrictAnthropicServer(by_round) if provider == "anthropic" else StrictResponsesServer(by_round)
    with server as fake:
        assert run_child(provider, fake.url, db, "kill") == -signal.SIGKILL
        store = SqliteStore(db)
        before = load_state(store, "crash")
        assert [r.status for r in before.tool_calls.values()] == ["completed"]  # killed between the rounds
        store.close()
        assert run_child(provider, fake.url, db) == 0
    assert fake.refusals == []
    store = SqliteStore(db)
    state = load_state(store, "crash")
    store.close()
    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    assert state.messages[-1].content == "2 + 3 + 1 + 1 = 7."
    # The resumed process sent the first round's thinking back, from the log.
    resumed = fake.requests[-2].raw.decode()
    assert ("Add 2 and 3 first." in resumed) if provider == "anthropic" else ("rs_1_0" in resumed)


def test_a_compaction_item_survives_a_fork_and_the_forked_session_sends_it_back(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "fork.db")
    script: list[Any] = [
        [Compacted(), Thought("Short."), "Hello."],
        ["Fine, thanks."],
        ["Forked answer."],
    ]

    async def main() -> None:
        with StrictResponsesServer(script) as fake:
            model = OpenAIResponsesModel("gpt-test", base_url=fake.url + "/v1", api_key=KEY)
            clock = ManualClock(1_700_000_000_000)
            async with model:
                async with open_session(store, "s", model, clock=clock, ids=SequentialIds()) as session:
                    session.send("Hi")
                    await session.turn_done()
                    session.send("How are you?")
                    await session.turn_done()
                # The first turn's observation holds the compaction item: fork right after it.
                at = next(n for n, record in enumerate(store.read("s"), 1) if b"compaction" in record.data)
                fork_session(store, "s", at, new_id="s-fork").close()
                forked = load_state(store, "s-fork")
                assert [i.kind for i in forked.messages[-1].items] == ["compaction", "reasoning", "text"]
                async with open_session(store, "s-fork", model, clock=clock, ids=SequentialIds()) as session:
                    session.send("And now?")
                    state = await session.turn_done()
            assert state.messages[-1].content == "Forked answer."
            assert fake.refusals == []
            kinds = [item.get("type") for item in fake.requests[-1].body["input"]]
            assert kinds == ["message", "compaction", "reasoning", "message", "message"]

    anyio.run(main)
    store.close()
