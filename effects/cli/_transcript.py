"""Print a session as it happens: user messages, streamed answers, tool calls and results, turn ends."""

from __future__ import annotations

import json
from collections.abc import Callable

from agent_core import (
    AgentState,
    ContinueReAct,
    LlmCallFailed,
    LlmMessageCompleted,
    ReActCancelled,
    ReActObserved,
    TimerFired,
    ToolCallCompleted,
    ToolSuccess,
    UserMessageReceived,
)

from .._agent import TextDelta
from .._machine import InputReceived, InputRejected, MachineEvent, StateUpdated
from .._text import clip

RESULT_WIDTH = 100


def shorten(text: str, width: int = RESULT_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    return clip(text, width, marker="...")


def call_text(name: str, parameters: str) -> str:
    """``name(a=1, b="x")`` from JSON-encoded arguments (as sent when they are not a JSON object)."""
    try:
        arguments = json.loads(parameters)
    except ValueError:
        return f"{name}({parameters})"
    if not isinstance(arguments, dict):
        return f"{name}({parameters})"
    return f"{name}({', '.join(f'{k}={json.dumps(v)}' for k, v in arguments.items())})"


class Transcript:
    """A subscriber that writes a readable transcript with ``write`` (e.g. ``sys.stdout.write``)."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self.write = write
        self.streaming = ""
        self.turns_ended = 0

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, TextDelta):
            if event.message_id != self.streaming:
                self.streaming = event.message_id
                self.write("assistant > ")
            self.write(event.text)
        elif isinstance(event, InputReceived):
            self._input(event.input)
        elif isinstance(event, StateUpdated):
            self._turn_end(event.state)
        elif isinstance(event, InputRejected):
            self.write(f"  ! refused {type(event.input).__name__}: {event.rejection}\n")

    def _input(self, inp: object) -> None:
        if isinstance(inp, UserMessageReceived):
            self.write(f"\nuser > {inp.content}\n")
        elif isinstance(inp, LlmMessageCompleted):
            self.streaming = ""
            self.write("\n")
        elif isinstance(inp, ReActObserved) and isinstance(inp.observation, ContinueReAct):
            for call_id, request in inp.observation.tool_calls.items():
                self.write(f"  -> {call_text(request.name, request.parameters)}  [{call_id}]\n")
        elif isinstance(inp, ToolCallCompleted):
            result = inp.result
            if isinstance(result, ToolSuccess):
                self.write(f"  <- [{inp.tool_call_id}] {shorten(result.content)}\n")
            else:
                self.write(f"  <- [{inp.tool_call_id}] FAILED: {shorten(result.error)}\n")
        elif isinstance(inp, LlmCallFailed):
            again = "will retry" if inp.retryable else "not retryable"
            self.write(f"  ! model call failed ({again}): {shorten(inp.error)}\n")
        elif isinstance(inp, TimerFired):
            self.write("  . timer fired\n")
        elif isinstance(inp, ReActCancelled):
            self.write(f"  x turn cancelled: {inp.reason}\n")

    def _turn_end(self, state: AgentState) -> None:
        outcome = state.last_outcome
        if outcome is None or outcome.turn <= self.turns_ended:
            return
        self.turns_ended = outcome.turn
        why = f" ({outcome.reason})" if outcome.reason else ""
        self.write(f"  = turn {outcome.turn} {outcome.kind}{why}\n")
