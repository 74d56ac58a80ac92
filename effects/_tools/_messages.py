"""Failure texts the model reads: what was wrong with its call, and how to call again.

These are not exceptions: they become ``ToolFailure`` results in
``tool-call-completed``, so the model can correct itself on its next step.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

_MAX_SHOWN = 80


def shown(value: Any) -> str:
    """A short ``repr`` of a value the model sent, cut to keep error texts small."""
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _location(loc: Iterable[int | str]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _one_error(tool: str, error: ErrorDetails) -> str:
    where = _location(error["loc"])
    kind = error["type"]
    if kind == "missing":
        return f"argument {where!r} is required but missing"
    if kind == "extra_forbidden":
        return f"argument {where!r} is not a parameter of {tool}"
    if kind == "json_invalid":
        return f"the arguments are not valid JSON ({error['msg']})"
    if not where:
        return f"{error['msg']}, got {shown(error['input'])} (expected a JSON object of named arguments)"
    return f"argument {where!r}: {error['msg']}, got {shown(error['input'])}"


def invalid_arguments(tool: str, call_id: str, error: ValidationError, parameters: str) -> str:
    """The model's arguments did not validate: each problem, then how to call again."""
    problems = "; ".join(_one_error(tool, e) for e in error.errors(include_url=False))
    return (
        f"invalid arguments for tool {tool!r} (tool call {call_id!r}): {problems}. "
        f"Call {tool} again with a JSON object of arguments: {parameters}"
    )


def raised(tool: str, call_id: str, error: BaseException) -> str:
    """The tool raised: the exception's type and text, so the model can change its request."""
    text = str(error) or "(no message)"
    return (
        f"tool {tool!r} failed (tool call {call_id!r}): {type(error).__name__}: {text}. "
        "Check the arguments and try again, or answer without this tool"
    )


def timed_out(tool: str, call_id: str, timeout_ms: int, idempotent: bool) -> str:
    """The tool did not finish in time; whether calling again is safe depends on idempotency."""
    again = (
        "It is safe to call again"
        if idempotent
        else "It may have had effects before it was stopped; check before calling it again"
    )
    return (
        f"tool {tool!r} did not finish within its timeout of {timeout_ms} ms (tool call {call_id!r}) "
        f"and was stopped. {again}, perhaps with a smaller request"
    )


def cancelled_inside(tool: str, call_id: str) -> str:
    """Something inside the tool was cancelled (not the call itself): the call ends, as a failure."""
    return (
        f"tool {tool!r} failed (tool call {call_id!r}): an operation it awaited was cancelled by something "
        "other than this session. Try again, or answer without this tool"
    )


def unencodable(tool: str, call_id: str, value: Any, error: Exception) -> str:
    """The tool returned something that is neither a string nor JSON-encodable: a bug in the tool."""
    return (
        f"tool {tool!r} returned a value of type {type(value).__name__} that cannot be encoded as JSON (tool call {call_id!r}): "
        f"{error}. This is a bug in the tool, not in the call"
    )


def cannot_resume(tool: str, tool_call_id: str) -> str:
    """A call to resume that its tool cannot resume (it neither asks questions nor follows tasks)."""
    return (
        f"tool {tool!r} cannot resume a call (tool call {tool_call_id!r}): it asks no questions and follows no "
        "remote task; call it again"
    )
