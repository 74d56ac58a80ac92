"""``@tool``: schemas from annotations, docstrings and pydantic models; failures the model can act on."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, Field

from agent_core import ToolDefinition, ToolFailure, ToolSuccess
from effects import Toolbox, tool
from effects.testing import ManualClock


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers.

    Handy for sums.

    Args:
        a: the first addend
        b: the second addend,
            zero when left out
    Returns:
        the sum
    """
    return a + b


class Query(BaseModel):
    """Search the knowledge base."""

    text: str = Field(description="what to look for")
    limit: int = 3


@tool(idempotent=True, name="search_kb")
async def search(query: Query, tool_call_id: str) -> dict[str, Any]:
    return {"text": query.text, "limit": query.limit, "key": tool_call_id}


@tool
def divide(a: float, b: float) -> float:
    """Divide ``a`` by ``b``.

    :param a: the dividend
    :param b: the divisor
    """
    return a / b


def schema(definition: ToolDefinition) -> Any:
    return json.loads(definition.parameters)


def test_a_definition_comes_from_annotations_and_the_docstring() -> None:
    assert add.definition.name == "add"
    assert add.definition.description == "Add two integers.\n\nHandy for sums."
    assert schema(add.definition) == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "a": {"type": "integer", "description": "the first addend"},
            "b": {"type": "integer", "default": 0, "description": "the second addend, zero when left out"},
        },
        "required": ["a"],
    }
    assert (add.definition.requires_approval, add.definition.idempotent, add.definition.timeout_ms) == (
        False,
        False,
        None,
    )


def test_sphinx_style_parameter_docs_are_read() -> None:
    properties = schema(divide.definition)["properties"]
    assert properties["a"]["description"] == "the dividend"
    assert properties["b"]["description"] == "the divisor"


def test_a_single_pydantic_model_parameter_gives_the_models_schema_without_the_call_id() -> None:
    assert search.definition.name == "search_kb"
    assert search.definition.description == "Search the knowledge base."
    assert search.definition.idempotent
    assert schema(search.definition) == {
        "type": "object",
        "description": "Search the knowledge base.",
        "properties": {
            "text": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer", "default": 3},
        },
        "required": ["text"],
    }


def test_a_tool_stays_callable_as_the_function() -> None:
    assert add(2, b=3) == 5


async def run(toolbox: Toolbox, name: str, arguments: str, call_id: str = "c1") -> Any:
    return await toolbox.run(name, arguments, call_id, ManualClock())


@pytest.mark.anyio
async def test_valid_arguments_run_the_tool_and_non_strings_are_json_encoded() -> None:
    box = Toolbox([add, search])
    assert await run(box, "add", '{"a": 2, "b": 3}') == ToolSuccess(content="5")
    assert await run(box, "search_kb", '{"text": "moore"}', "call-7") == ToolSuccess(
        content='{"text":"moore","limit":3,"key":"call-7"}'
    )


@pytest.mark.anyio
async def test_a_string_result_reaches_the_model_as_is() -> None:
    @tool
    async def echo(text: str) -> str:
        return text

    assert await run(Toolbox([echo]), "echo", '{"text": "he said \\"hi\\""}') == ToolSuccess(content='he said "hi"')


@pytest.mark.anyio
async def test_a_schema_violation_says_what_was_wrong_and_how_to_call_again() -> None:
    result = await run(Toolbox([add]), "add", '{"a": 1, "b": "x", "c": 2}')
    assert result == ToolFailure(
        error="invalid arguments for tool 'add' (tool call 'c1'): "
        "argument 'b': Input should be a valid integer, unable to parse string as an integer, got 'x'; "
        "argument 'c' is not a parameter of add. "
        "Call add again with a JSON object of arguments: a: integer (required), b: integer",
        code="invalid-arguments",
    )


@pytest.mark.anyio
async def test_a_missing_argument_is_named() -> None:
    result = await run(Toolbox([search]), "search_kb", '{"limit": 2}')
    assert result == ToolFailure(
        error="invalid arguments for tool 'search_kb' (tool call 'c1'): argument 'text' is required but missing. "
        "Call search_kb again with a JSON object of arguments: text: string (required), limit: integer",
        code="invalid-arguments",
    )


@pytest.mark.anyio
async def test_invalid_json_is_a_failure_the_model_reads() -> None:
    result = await run(Toolbox([add]), "add", '{"a": 1,')
    assert isinstance(result, ToolFailure)
    assert result.error.startswith(
        "invalid arguments for tool 'add' (tool call 'c1'): the arguments are not valid JSON ("
    )
    assert result.error.endswith("Call add again with a JSON object of arguments: a: integer (required), b: integer")


@pytest.mark.anyio
async def test_arguments_that_are_not_an_object_are_refused() -> None:
    result = await run(Toolbox([add]), "add", "[1, 2]")
    assert result == ToolFailure(
        error="invalid arguments for tool 'add' (tool call 'c1'): Input should be an object, got [1, 2] "
        "(expected a JSON object of named arguments). "
        "Call add again with a JSON object of arguments: a: integer (required), b: integer",
        code="invalid-arguments",
    )


@pytest.mark.anyio
async def test_an_exception_becomes_a_failure_naming_it() -> None:
    result = await run(Toolbox([divide]), "divide", '{"a": 1, "b": 0}')
    assert result == ToolFailure(
        error="tool 'divide' failed (tool call 'c1'): ZeroDivisionError: float division by zero. "
        "Check the arguments and try again, or answer without this tool",
        code="ZeroDivisionError",
    )


@pytest.mark.anyio
async def test_an_unknown_tool_lists_the_registered_ones() -> None:
    result = await run(Toolbox([add, search]), "serch", "{}", "t1")
    assert result == ToolFailure(
        error="tool 'serch' is not registered (tool call 't1'); registered tools: add, search_kb",
        code="not-registered",
    )


@pytest.mark.anyio
async def test_a_result_that_cannot_be_encoded_is_reported_as_a_bug_in_the_tool() -> None:
    @tool
    async def odd() -> object:
        return object()

    result = await run(Toolbox([odd]), "odd", "")
    assert isinstance(result, ToolFailure)
    assert result.error.startswith(
        "tool 'odd' returned a value of type object that cannot be encoded as JSON (tool call 'c1'): "
    )
    assert result.error.endswith("This is a bug in the tool, not in the call")


@pytest.mark.anyio
async def test_sync_tools_run_off_the_event_loop_thread() -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        threads.append(threading.get_ident())
        return "ok"

    assert await run(Toolbox([where]), "where", "{}") == ToolSuccess(content="ok")
    assert threads and threads[0] != threading.get_ident()


@pytest.mark.anyio
async def test_a_timeout_on_the_clock_stops_the_tool_and_tells_the_model() -> None:
    clock = ManualClock()
    entered, stopped = anyio.Event(), anyio.Event()

    @tool(timeout_ms=5000)
    async def slow() -> str:
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()
        return "never"

    results: list[Any] = []
    async with anyio.create_task_group() as group:

        async def call() -> None:
            results.append(await Toolbox([slow]).run("slow", "{}", "c9", clock))

        group.start_soon(call)
        await entered.wait()
        clock.advance(4999)
        assert clock.sleepers() == [clock.now_ms() + 1]
        clock.advance(1)
    assert stopped.is_set()
    assert results == [
        ToolFailure(
            error="tool 'slow' did not finish within its timeout of 5000 ms (tool call 'c9') and was stopped. "
            "It may have had effects before it was stopped; check before calling it again, perhaps with a smaller request",
            code="timeout",
        )
    ]
    assert clock.sleepers() == []


@pytest.mark.anyio
async def test_a_tool_that_finishes_in_time_cancels_its_timer() -> None:
    clock = ManualClock()

    @tool(timeout_ms=10)
    async def quick() -> str:
        return "done"

    assert await Toolbox([quick]).run("quick", "{}", "c1", clock) == ToolSuccess(content="done")
    assert clock.sleepers() == []


def test_declaring_a_bad_tool_fails_with_a_clear_message() -> None:
    def variadic(*names: str) -> str:
        return ""

    with pytest.raises(TypeError, match=r"tool 'variadic': parameter 'names' is variadic; expected named parameters"):
        tool(variadic)
    with pytest.raises(ValueError, match=r"expected a positive timeout_ms or None, got 0"):
        tool(timeout_ms=0)(add.fn)


def test_a_toolbox_refuses_duplicate_and_reserved_names() -> None:
    with pytest.raises(
        ValueError, match=r"two tools are named 'add' \(<Tool 'add'> and <Tool 'add'>\); expected unique names"
    ):
        Toolbox([add, add])

    def load_older_messages() -> str:
        return ""

    with pytest.raises(ValueError, match=r"the tool name 'load_older_messages' is reserved for an internal tool"):
        Toolbox([load_older_messages])


def test_a_plain_function_in_a_toolbox_is_wrapped() -> None:
    def shout(text: str) -> str:
        """Upper-case ``text``."""
        return text.upper()

    box = Toolbox([shout])
    assert box.names() == ("shout",)
    assert box.definitions()[0].description == "Upper-case ``text``."
