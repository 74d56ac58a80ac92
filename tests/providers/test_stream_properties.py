"""Properties of the stream folds, over chunks the SDKs' own types parse: whatever the split, the reply
is the joined text and the joined arguments of each call, in order."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import pydantic
from anthropic.types import RawMessageStreamEvent
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionChunk

from effects.providers._anthropic_stream import read_events
from effects.providers._openai_stream import read_stream
from effects.testing import FakeToolCall, anthropic_stream, openai_stream

_events = pydantic.TypeAdapter(RawMessageStreamEvent)


@st.composite
def split(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random places (pieces may be empty, as real streams sometimes send)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def replies(draw: st.DrawFn) -> tuple[list[str], list[FakeToolCall]]:
    """Text pieces and tool calls whose JSON arguments are split into pieces."""
    text = draw(st.lists(st.text(min_size=1, max_size=6), max_size=5))
    calls = []
    for n in range(draw(st.integers(0, 3))):
        arguments = json.dumps(
            draw(st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=6), max_size=3))
        )
        name = draw(st.sampled_from(["get_time", "search", "add"]))
        calls.append(FakeToolCall(f"call_{n}", name, draw(split(arguments))))
    return text, calls


async def _listed(items: Iterable[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


def _data(event: str) -> str:
    return next(line[6:] for line in event.splitlines() if line.startswith("data: "))


@given(replies())
def test_openai_fold_joins_text_and_arguments(reply: tuple[list[str], list[FakeToolCall]]) -> None:
    text, calls = reply
    chunks = [ChatCompletionChunk.model_validate_json(_data(e)) for e in openai_stream(text, calls)[:-1]]
    deltas: list[str] = []
    folded = anyio.run(read_stream, _listed(chunks), deltas.append)
    assert "".join(deltas) == folded.text == "".join(text)
    expected = [(c.id, c.name, "".join(c.argument_pieces) or "{}") for c in calls]
    assert [(c.id, c.name, c.arguments) for c in folded.tool_calls] == expected


@given(replies())
def test_anthropic_fold_joins_text_and_arguments(reply: tuple[list[str], list[FakeToolCall]]) -> None:
    text, calls = reply
    events = [_events.validate_json(_data(e)) for e in anthropic_stream(text, calls) if "event: ping" not in e]
    deltas: list[str] = []
    folded = anyio.run(read_events, _listed(events), deltas.append)
    assert "".join(deltas) == folded.text == "".join(text)
    expected = [(c.id, c.name, "".join(c.argument_pieces) or "{}") for c in calls]
    assert [(c.id, c.name, c.arguments) for c in folded.tool_calls] == expected
