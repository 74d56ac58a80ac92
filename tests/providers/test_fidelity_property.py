"""Replay equals live, byte for byte, for what goes to the provider: a property over random sessions.

Random sessions (thinking or reasoning before text and parallel tool calls, interleaved thinking, calls that
wait for a person who approves or denies, provider failures that are retried, cancellations, new messages
joining a turn, and restarts that resume the session from its SQLite store) run against the strict fakes
through the real SDKs. Then:

* the strict fake refused no request: every thinking block, reasoning item and compaction item came back
  unmodified, in its place, with its turn (a dropped, altered or moved item is refused);
* every request body sent live is, byte for byte, one that a fresh adapter (which never saw a stream) builds
  from a state folded from the stored log: nothing the provider needs back lives outside the log.
"""

from __future__ import annotations

import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agent_core as ac
from effects import Model, Session, SqliteStore, open_session, tool
from effects.providers import AnthropicModel, OpenAIResponsesModel
from effects.testing import (
    FakeProviderServer,
    FakeToolCall,
    ManualClock,
    Reply,
    SequentialIds,
    StrictAnthropicServer,
    StrictResponsesServer,
    Thought,
    anthropic_reply,
    error_reply,
    responses_reply,
)

from ._providers import KEY

START = 1_700_000_000_000
SESSION = "fidelity"


@tool
def calc(n: int) -> int:
    """Doubles a number."""
    return 2 * n


@tool(requires_approval=True)
def gated(n: int) -> int:
    """Needs a person's approval."""
    return n


@st.composite
def replies(draw: st.DrawFn, position: int) -> list[Any] | str:
    """One scripted reply: thinking, maybe text, one to three calls with thinking between some; an answer; or a
    provider failure (``"fail"``). Call ids are unique in the script (``position`` is the reply's place)."""
    kind = draw(st.sampled_from(["calls", "calls", "answer", "fail"]))
    if kind == "fail":
        return "fail"
    parts: list[Any] = []
    if draw(st.booleans()) or kind == "calls":
        parts.append(Thought(draw(st.sampled_from(["Let me think.", "Hmm, two steps.", "Numbers!"]))))
    if kind == "answer" or draw(st.booleans()):
        parts.append(draw(st.sampled_from(["Working on it.", "Here goes.", "Done, I think."])))
    if kind == "calls":
        for n in range(draw(st.integers(1, 3))):
            if n and draw(st.booleans()):
                parts.append(Thought("And the next one.", redacted=draw(st.booleans())))
            name = draw(st.sampled_from(["calc", "calc", "gated"]))
            parts.append(FakeToolCall(f"toolu_{position}_{n}", name, [f'{{"n": {draw(st.integers(0, 9))}}}']))
    return parts


scripts = st.integers(2, 8).flatmap(lambda n: st.tuples(*[replies(i) for i in range(n)]))
actions = st.lists(
    st.sampled_from(["send", "send", "approve", "deny", "cancel", "advance", "restart", "settle"]),
    min_size=1,
    max_size=10,
)


class Provider:
    """One provider's strict fake and adapter, and a plain recording server to rebuild requests against."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fake(self, script: list[Any]) -> StrictAnthropicServer | StrictResponsesServer:
        entries = [self._failure() if entry == "fail" else entry for entry in script]
        queue = list(entries)

        def answer(_body: Any) -> Any:
            return queue.pop(0) if queue else ["All done."]

        if self.name == "anthropic":
            return StrictAnthropicServer(answer)
        return StrictResponsesServer(answer)

    def _failure(self) -> Reply:
        if self.name == "anthropic":
            return error_reply(529, "Overloaded", kind="overloaded_error")
        return error_reply(500, "The server had an error.", kind="server_error")

    def model(self, url: str) -> Model:
        if self.name == "anthropic":
            return AnthropicModel("claude-test", base_url=url, api_key=KEY, thinking={"type": "adaptive"})
        return OpenAIResponsesModel("gpt-test", base_url=url + "/v1", api_key=KEY)

    def answer(self) -> Reply:
        return anthropic_reply(["ok"]) if self.name == "anthropic" else responses_reply(["ok"])


class Run:
    """A session on a SQLite store, reopened from the store on ``restart`` with a fresh adapter."""

    def __init__(self, provider: Provider, url: str, path: Path) -> None:
        self.provider, self.url = provider, url
        self.store = SqliteStore(path / "log.db")
        self.clock = ManualClock(START)
        self.stack = AsyncExitStack()
        self.session: Session | None = None

    async def open(self) -> Session:
        model = self.provider.model(self.url)
        await self.stack.enter_async_context(model)  # type: ignore[arg-type]
        config = ac.AgentConfig(llm_max_attempts=3, max_model_calls=12)
        opened = open_session(
            self.store, SESSION, model, tools=[calc, gated], config=config, clock=self.clock, ids=SequentialIds()
        )
        self.session = await self.stack.enter_async_context(opened)
        return self.session

    async def act(self, action: str) -> None:
        session = self.session
        assert session is not None
        turn = session.state.turn
        if action == "send":
            session.send("What is the next number?")
        elif action in ("approve", "deny") and turn is not None:
            for call_id in turn.awaiting_ids:
                session.approve(call_id) if action == "approve" else session.deny(call_id, "not now")
        elif action == "cancel" and turn is not None:
            session.cancel("stop")
        elif action == "advance":
            self.clock.advance(40_000)
        elif action == "restart":
            await self.stack.aclose()
            self.stack = AsyncExitStack()
            session = await self.open()
        await session.settled()

    async def finish(self) -> None:
        for _ in range(40):
            session = self.session
            assert session is not None
            await session.settled()
            turn = session.state.turn
            if turn is None:
                return
            for call_id in turn.awaiting_ids:
                session.approve(call_id)
            self.clock.advance(40_000)
        raise AssertionError("the session never ended its turn")


async def rebuilt(provider: Provider, store: SqliteStore) -> set[bytes]:
    """The body of every model call the log's states derive, built by a fresh adapter from the folded states."""
    bodies: set[bytes] = set()
    seen: set[str] = set()
    with FakeProviderServer(default=lambda _: provider.answer()) as recorder:
        model = provider.model(recorder.url)
        async with model:  # type: ignore[attr-defined]
            state = ac.initial_state()
            for record in store.read(SESSION):
                state = ac.transition(state, ac.decode_input(record.data, format="msgpack"))
                for key, effect in ac.effects_at(state).items():
                    if isinstance(effect, ac.CallLlm) and key not in seen:
                        seen.add(key)
                        await model.complete(ac.llm_context(state), lambda _: None)
        bodies.update(request.raw for request in recorder.requests)
    return bodies


async def play(provider: Provider, script: list[Any], plan: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder, provider.fake(script) as fake:
        run = Run(provider, fake.url, Path(folder))
        session = await run.open()
        session.send("Let's count.")
        await session.settled()
        for action in plan:
            await run.act(action)
        await run.finish()
        await run.stack.aclose()
        assert fake.refusals == [], fake.refusals
        live = {request.raw for request in fake.requests}
        replayed = await rebuilt(provider, run.store)
        run.store.close()
    assert live, "no model call was made"
    assert live <= replayed, "a request sent live is not one the log rebuilds"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["anthropic", "responses"])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scripts, plan=actions)
def test_every_request_is_rebuilt_byte_for_byte_from_the_log_and_the_strict_fake_accepts_it(
    name: str, script: tuple[list[Any] | str, ...], plan: list[str]
) -> None:
    anyio.run(play, Provider(name), list(script), plan)
