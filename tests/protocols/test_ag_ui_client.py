"""Conformance with the official AG-UI TypeScript client (``@ag-ui/client``'s ``HttpAgent``, run by Node).

Against a live session: the client streams a run, drops the connection mid-answer (at the first streamed
text), reconnects from the last position it saw, approves the interrupt the run ends in, and finishes. Every
event of the stored log reaches it exactly once, in order; the message's text arrives whole; and the events
it got are those a replay of the stored log gives; the model's thinking reaches it as a reasoning message.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from effects import SqliteStore
from effects.protocols import SessionHost, ag_ui_app, ag_ui_events

from ._models import HeldModel, refund
from ._serving import node_script, serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves on asyncio


def holds(got: Any, ours: Any) -> bool:
    """Whether ``got`` (an event as the client parsed it) holds every value of ``ours``."""
    if isinstance(ours, dict):
        return isinstance(got, dict) and all(key in got and holds(got[key], value) for key, value in ours.items())
    if isinstance(ours, list):
        return isinstance(got, list) and len(got) == len(ours) and all(map(holds, got, ours))
    return bool(got == ours)


def position(event: dict[str, Any]) -> str:
    return str(event["metadata"]["agent-core"]["position"])


async def test_stream_disconnect_resume_approve_finish_and_the_replay_agrees(tmp_path: Any) -> None:
    store = SqliteStore(tmp_path / "agent.db")
    model = HeldModel()
    async with SessionHost(store, model, tools=[refund]) as host, serving(ag_ui_app(host)) as url:
        async with node_script("agui_client.mjs", url + "/", "thread-1") as client:
            dropped = await client.line()
            assert dropped["step"] == "disconnected"
            assert dropped["position"].startswith("3.0+7@")  # after record 3's event, 7 streamed characters
            model.release.set()
            session = host.running("thread-1")
            assert session is not None
            await session.turn_done()  # the model finished while nobody listened: the run waits for approval
            await client.send("go")
            interrupted = await client.line()
            [interrupt] = interrupted["interrupts"]
            assert (interrupt["id"], interrupt["reason"], interrupt["toolCallId"]) == (
                "call-1",
                "tool_approval",
                "call-1",
            )
            done = await client.line()
        state = await host.state("thread-1")

    assert state.last_outcome is not None and state.last_outcome.kind == "completed"
    received = [item["event"] for item in done["received"] if "metadata" in item["event"]]
    own = [item["event"] for item in done["received"] if "metadata" not in item["event"]]
    assert [(e["type"], e.get("code")) for e in own] == [("RUN_ERROR", "abort")]  # the client's, on dropping
    restated = [e for e in received if e["metadata"]["agent-core"].get("restated")]
    live = [e for e in received if "+" in position(e)]
    logged = [e for e in received if e not in restated and e not in live]

    replay = ag_ui_events(store, "thread-1")
    # Exactly the logged events, once each, in order: no gap, no duplicate.
    assert [position(e) for e in logged] == [position(e) for e in replay]
    assert Counter(position(e) for e in logged).most_common(1)[0][1] == 1
    # The same events (the client fills in defaults, such as an input's empty tools), apart from the one text
    # event whose beginning the live stream had sent already.
    partial = [(got, ours) for got, ours in zip(logged, replay, strict=True) if not holds(got, ours)]
    assert [(got["type"], got["delta"], ours["delta"]) for got, ours in partial] == [
        ("TEXT_MESSAGE_CONTENT", "check that order.", "Let me check that order.")
    ]
    # The reconnection restated the open run, its state and the open message, at the client's own position.
    assert [e["type"] for e in restated] == ["RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED", "TEXT_MESSAGE_START"]
    assert {position(e) for e in restated} == {dropped["position"]}
    # The client's conversation: the answer's text whole, the refund's result, the final answer.
    messages = {m["id"]: m for m in done["messages"]}
    first_answer = next(m for m in done["messages"] if m["role"] == "assistant")
    assert first_answer["content"] == "Let me check that order."
    assert [c["function"]["name"] for c in first_answer["toolCalls"]] == ["refund"]
    assert messages["result-call-1"]["content"] == "refunded order 42"
    answers = [m for m in done["messages"] if m["role"] == "assistant"]
    assert answers[-1]["content"] == "Order 42 is refunded."
    # The model's thinking, as a reasoning message the client built from the REASONING_* events.
    assert [m["content"] for m in done["messages"] if m["role"] == "reasoning"] == ["The refund went through."]
    store.close()
