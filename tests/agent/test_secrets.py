"""``secrets=[...]``: configured values are redacted from every input and from streamed text, however the
model splits them, and a value too short to be a secret is refused."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core import AgentConfig, ToolFailure
from effects import MIN_SECRET_CHARS, REDACTED, Agent, MemoryStore, TextDelta, open_session, tool
from effects.testing import ManualClock, ScriptedModel, SequentialIds, call_tools, say

from ._helpers import START

SECRET = "hunter2-hunter2"
OTHER = "hunter2-and-more-of-it"  # overlaps the first: the longer one is redacted whole


def test_a_value_too_short_to_be_a_secret_is_refused() -> None:
    with pytest.raises(ValueError) as caught:
        Agent(ScriptedModel([]), secrets=[SECRET, "abc"])
    assert str(caught.value) == (
        f"a secret must be a string of at least {MIN_SECRET_CHARS} characters, got a string of 3 characters; "
        "pass the secret values themselves (e.g. os.environ['DB_PASSWORD']), not their names"
    )


async def _streamed(text: str, chunk_size: int) -> tuple[str, str]:
    """What subscribers were streamed, and the message the log kept, when the model says ``text``."""
    deltas: list[str] = []
    model = ScriptedModel([say(text)], chunk_size=chunk_size)
    agent = Agent(model, clock=ManualClock(START), ids=SequentialIds(), secrets=[SECRET, OTHER])
    async with agent.running() as session:
        session.subscribe(lambda e: deltas.append(e.text) if isinstance(e, TextDelta) else None)
        session.send("hi")
        state = await session.turn_done()
    return "".join(deltas), state.messages[-1].content


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from(["a", " ", "hunter", "2-", SECRET, OTHER, "hunter2-and", SECRET[:-1]]), max_size=8),
    st.integers(1, 12),
)
def test_streamed_text_shows_the_same_redacted_text_the_log_keeps(parts: list[str], chunk_size: int) -> None:
    text = "".join(parts)
    text = text if text.strip() else text + "-"  # a blank reply is an empty answer, asked again
    streamed, kept = anyio.run(_streamed, text, chunk_size)
    assert streamed == kept == _redacted(text)
    assert SECRET not in kept and OTHER not in kept


def _redacted(text: str) -> str:
    """The specification: every occurrence is covered; occurrences that overlap share one marker."""
    covered = [False] * len(text)
    starts = set()
    for secret in (SECRET, OTHER):
        for at in range(len(text)):
            if text.startswith(secret, at):
                starts.add(at)
                covered[at : at + len(secret)] = [True] * len(secret)
    out, at = [], 0
    while at < len(text):
        if not covered[at]:
            out.append(text[at])
            at += 1
            continue
        out.append(REDACTED)
        end = at + 1
        while end < len(text) and covered[end] and not _starts_fresh(text, end, starts):
            end += 1
        at = end
    return "".join(out)


def _starts_fresh(text: str, at: int, starts: set[int]) -> bool:
    """An occurrence starts at ``at`` and no earlier occurrence reaches past ``at`` (touching, not overlapping)."""
    if at not in starts:
        return False
    return not any(text.startswith(s, b) and b < at < b + len(s) for s in (SECRET, OTHER) for b in starts if b < at)


def test_overlapping_secrets_leave_no_part_of_either_beside_the_marker() -> None:
    text = f"x {SECRET[:8]}{OTHER} y {SECRET}{SECRET}"
    streamed, kept = anyio.run(_streamed, text, 3)
    assert streamed == kept == f"x {REDACTED} y {REDACTED}{REDACTED}"


@pytest.mark.anyio
async def test_a_resumed_session_redacts_with_the_secrets_passed_again() -> None:
    @tool
    def vault() -> str:
        """Read the vault."""
        raise PermissionError(f"vault sealed; token {SECRET} expired")

    store, config = MemoryStore(), AgentConfig(max_turn_ms=None)
    script = ScriptedModel([say("Noted."), call_tools(("vault", {})), say("Sealed.")])
    async with open_session(store, "s", script, tools=[vault], config=config, secrets=[SECRET]) as session:
        session.send(f"token: {SECRET}")
        await session.turn_done()
    async with open_session(store, "s", script, tools=[vault], secrets=[SECRET]) as session:
        session.send("open the vault")
        state = await session.turn_done()
    assert [m.content for m in state.messages if m.role == "user"] == [f"token: {REDACTED}", "open the vault"]
    [record] = state.tool_calls.values()
    assert isinstance(record.result, ToolFailure)
    assert f"PermissionError: vault sealed; token {REDACTED} expired." in record.result.error
