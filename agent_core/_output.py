"""Structured output, the pure part: which output schemas a session accepts, and the note a refused answer
leaves for the model.

The schema is validated where a session starts (here, by the reducer, for any
producer of logs); the model's answer is validated where it enters (by the
runner, which logs the verdict), so replaying a log needs neither the user's
types nor a validator.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ._inputs import OutputProblem, RejectionReason

MAX_OUTPUT_SCHEMA_CHARS = 1_000_000
"""The most characters an ``output_schema`` may have."""

MAX_OUTPUT_PROBLEMS = 20
"""The most problems one ``answer-rejected`` may list (a validator's first ones)."""

MAX_PROBLEM_CHARS = 2_000
"""The most characters of a problem's ``where`` or ``what``."""

_decoder = msgspec.json.Decoder()


def output_schema_problem(schema: str) -> str | None:
    """What is wrong with ``schema`` as an ``output_schema``, or ``None`` when it is usable (empty: none).

    An output schema is a JSON Schema of an object (``"type": "object"``), as JSON
    text: what every provider's structured-output mode and forced tool accept.
    """
    if not schema:
        return None
    if len(schema) > MAX_OUTPUT_SCHEMA_CHARS:
        return f"expected an output_schema of at most {MAX_OUTPUT_SCHEMA_CHARS:,} characters, got {len(schema):,}"
    try:
        decoded = _decoder.decode(schema)
    except msgspec.DecodeError as error:
        return f"expected output_schema to be a JSON Schema as JSON text, got text that is not JSON ({error})"
    if not isinstance(decoded, dict):
        return f"expected output_schema to be a JSON Schema object, got a JSON {_json_kind(decoded)}"
    kind = decoded.get("type")
    if kind != "object":
        got = "no 'type'" if kind is None else f"'type': {msgspec.json.encode(kind).decode()}"
        return (
            f"expected output_schema to describe an object ('type': 'object'), got {got}; "
            "wrap a list or a single value in a model with one field"
        )
    return None


def output_value_problem(output: str) -> str | None:
    """What is wrong with ``output`` as a validated structured answer (JSON text of an object), or ``None``."""
    try:
        decoded = _decoder.decode(output)
    except msgspec.DecodeError:
        return f"expected output to be JSON text of an object, got {output[:80]!r}"
    if not isinstance(decoded, dict):
        return f"expected output to be a JSON object, got a JSON {_json_kind(decoded)}"
    return None


def rejection_note(reason: RejectionReason, problems: Sequence[OutputProblem]) -> str:
    """The message the model reads after an answer was refused: what was wrong, where, and what to do."""
    if reason == "empty-answer":
        return "Your reply was empty: it had no text and no tool call. Answer the request, or call a tool."
    listed = "\n".join(f"- at {p.where}: {p.what}" for p in problems)
    return (
        "Your answer did not match the required output schema:\n"
        f"{listed}\n"
        "Answer again with only the JSON value that the schema describes, with these problems fixed."
    )


def problems_text(problems: Sequence[OutputProblem]) -> str:
    """``problems`` on one line, for a failed turn's detail."""
    return "; ".join(f"at {p.where}: {p.what}" for p in problems)


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
