"""What one attempt at a tool call may end in besides a result: a question for a person, or a remote task.

A tool that can suspend a call (an MCP server asking for input, a server or a
remote agent handing the work to a task) returns :class:`InputRequired` or
:class:`TaskCreated` from :meth:`~effects.Tool.attempt`. The call-tool effect
logs them (``tool-call-input-required``, ``tool-call-task-created``) and later
attempts the call again with a :class:`Resumption`: the task to follow, and a
person's answers. Plain ``@tool`` functions never suspend.
"""

from __future__ import annotations

from typing import Union

import msgspec

from agent_core import ToolFailure, ToolSuccess

from .._arguments import arguments_object


class InputRequired(msgspec.Struct, frozen=True, kw_only=True):
    """The call needs answers from a person: ``requests`` is a JSON object (key -> request, MCP's shape).

    ``request_state`` is opaque text handed back with the answers (:attr:`Resumption.request_state`).
    """

    requests: str
    request_state: str = ""


class TaskCreated(msgspec.Struct, frozen=True, kw_only=True):
    """The call's work runs as a remote task ``task_id``: the call is attempted again to follow it."""

    task_id: str


class Resumption(msgspec.Struct, frozen=True, kw_only=True):
    """How a call is attempted again: the remote task it follows (``task_id``), and a person's answers
    (``input_responses``, a JSON object) to the questions it asked, with the tool's ``request_state``."""

    task_id: str = ""
    input_responses: str = ""
    request_state: str = ""


ToolOutcome = Union[ToolSuccess, ToolFailure, InputRequired, TaskCreated]
"""What one attempt at a tool call ends in: a result the model reads, a question, or a remote task."""

MAX_REQUEST_CHARS = 100_000
"""The longest text of questions (:attr:`InputRequired.requests`) a tool may ask; longer is a failure."""


def checked(outcome: ToolOutcome, tool: str, tool_call_id: str) -> ToolOutcome:
    """``outcome``, or a failure the model reads when a tool suspends the call with something the log cannot hold."""
    if isinstance(outcome, InputRequired):
        if len(outcome.requests) + len(outcome.request_state) > MAX_REQUEST_CHARS:
            return ToolFailure(
                error=f"tool {tool!r} asked for input with more than {MAX_REQUEST_CHARS:,} characters of questions "
                f"(tool call {tool_call_id!r}); expected shorter questions"
            )
        parsed = arguments_object(outcome.requests)
        if isinstance(parsed, str) or not parsed:
            return ToolFailure(
                error=f"tool {tool!r} asked for input without a question (tool call {tool_call_id!r}); expected "
                f"a non-empty JSON object of questions (key -> request), got {outcome.requests[:80]!r}"
            )
    if isinstance(outcome, TaskCreated) and not outcome.task_id:
        return ToolFailure(error=f"tool {tool!r} created a task without an id (tool call {tool_call_id!r})")
    return outcome
