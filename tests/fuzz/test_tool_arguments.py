"""Fuzzing tool-argument validation: whatever text a model sends as a call's arguments, the call ends in a
result (a success, or a failure the model can read), never an exception."""

from __future__ import annotations

import json
from typing import Any, Literal

import pydantic
from hypothesis import given
from hypothesis import strategies as st

from agent_core import ToolFailure, ToolSuccess
from effects import Toolbox, tool

from ._bytes import fuzz, json_values, mutated, run_now


class Address(pydantic.BaseModel):
    street: str
    number: int = pydantic.Field(ge=1)


@tool
async def book(
    name: str, seats: int, when: Literal["today", "tomorrow"], tags: list[str], address: Address | None = None
) -> str:
    """Book a table."""
    return f"{name}: {seats} {when} {tags} {address}"


@tool
async def note(text: str = "") -> dict[str, Any]:
    """Keep a note."""
    return {"text": text}


TOOLBOX = Toolbox([book, note])
VALID = [
    json.dumps({"name": "Ada", "seats": 2, "when": "today", "tags": ["window"]}).encode(),
    json.dumps(
        {"name": "Bo", "seats": 4, "when": "tomorrow", "tags": [], "address": {"street": "Main", "number": 3}}
    ).encode(),
    b"{}",
]


arguments = st.one_of(
    mutated(VALID).map(lambda b: b.decode("utf-8", "replace")),
    json_values.map(json.dumps),
    st.text(max_size=50),
)


@fuzz
@given(st.sampled_from(["book", "note"]), arguments)
def test_any_arguments_end_in_a_result(name: str, text: str) -> None:
    result = run_now(TOOLBOX[name].invoke(text, "call-1"))
    assert isinstance(result, ToolSuccess | ToolFailure)
    if isinstance(result, ToolFailure):
        assert "call-1" in result.error
