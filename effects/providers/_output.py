"""How the adapters ask a provider for a structured answer (``LlmContext.output_schema``), natively.

OpenAI's chat completions take a ``response_format`` and the Responses API a
``text.format`` of type ``json_schema``; the answer is then the reply's text.
Anthropic has no such format here: the schema becomes a tool the model is made
to call (:data:`OUTPUT_TOOL`), and its arguments become the reply's text. In
every case the runner validates the text where it enters, so a provider that
ignores the request is caught the same way.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .._model import ModelReply

OUTPUT_NAME = "final_answer"
"""The name of the schema in a JSON-schema format, and of Anthropic's output tool."""

OUTPUT_TOOL_DESCRIPTION = (
    "Give your final answer by calling this tool, with the answer as its arguments. "
    "Call it only when you have everything the answer needs."
)


def output_schema(context_schema: str) -> dict[str, Any]:
    """The context's output schema as a JSON object."""
    schema: dict[str, Any] = json.loads(context_schema)
    return schema


def json_schema_format(context_schema: str) -> dict[str, Any]:
    """The ``json_schema`` format both OpenAI APIs take (``strict`` off: it needs every property required
    and no additional properties, which a pydantic schema does not promise; the runner validates anyway)."""
    return {"name": OUTPUT_NAME, "schema": output_schema(context_schema), "strict": False}


def output_tool(context_schema: str) -> dict[str, Any]:
    """Anthropic's output tool for the schema."""
    return {"name": OUTPUT_NAME, "description": OUTPUT_TOOL_DESCRIPTION, "input_schema": output_schema(context_schema)}


def answer_from_output_tool(reply: ModelReply) -> ModelReply:
    """``reply`` with a call of the output tool turned into the answer's text (its arguments).

    The answer ends the turn: other calls of the same reply are not run, and the
    reply's provider items go with them (a text answer needs none sent back).
    """
    calls = [call for call in reply.tool_calls if call.name == OUTPUT_NAME]
    if not calls:
        return reply
    text = calls[0].arguments or "{}"
    return msgspec.structs.replace(reply, text=text, tool_calls=(), items=())
