"""The terminal side of ``agent-core chat``: the prompt loop, approvals, and a printer that shows
what the session does as it happens."""

from __future__ import annotations

import functools
import json
from typing import Any, TextIO

from agent_core import (
    AgentState,
    ContinueReAct,
    InvalidInput,
    LlmCallFailed,
    LlmMessageCompleted,
    ReActCancelled,
    ReActObserved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolFailure,
)
from effects import Backpressure, MachineEvent, Session, StateUpdated, TextDelta

from ._chat_loop import BackgroundSession
from ._transcript import shorten as transcript_shorten

_SHOWN = 300


def shorten(text: str, limit: int = _SHOWN) -> str:
    """``text`` on one line, cut to ``limit`` characters (longer than the demo transcript's)."""
    return transcript_shorten(text, limit)


class Printer:
    """A session subscriber that writes the conversation to ``out`` as it happens (runs on the loop)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._open_message = False

    def write(self, text: str) -> None:
        """Write and flush at once: the text is streaming."""
        self.out.write(text)
        self.out.flush()

    def __call__(self, event: MachineEvent) -> None:
        if isinstance(event, TextDelta):
            if not self._open_message:
                self.write("agent> ")
                self._open_message = True
            self.write(event.text)
        elif isinstance(event, StateUpdated):
            self._show(event.input, event.state)

    def _end_message(self) -> None:
        if self._open_message:
            self.write("\n")
            self._open_message = False

    def _show(self, inp: object, state: AgentState) -> None:
        if isinstance(inp, LlmMessageCompleted):
            self._end_message()
        elif isinstance(inp, ReActObserved) and isinstance(inp.observation, ContinueReAct):
            for request in inp.observation.tool_calls.values():
                self.write(f"  -> {request.name}({shorten(request.parameters)})\n")
        elif isinstance(inp, (ToolCallCompleted, ToolCallDenied)):
            record = state.tool_calls[inp.tool_call_id]
            result = record.result
            if isinstance(result, ToolFailure):
                self.write(f"  <- {record.name} failed: {shorten(result.error)}\n")
            elif result is not None:
                self.write(f"  <- {record.name}: {shorten(result.content)}\n")
        elif isinstance(inp, LlmCallFailed):
            self._end_message()
            then = "will retry" if inp.retryable else "not retryable"
            self.write(f"  ! model call failed ({then}): {shorten(inp.error)}\n")
        elif isinstance(inp, ReActCancelled):
            self._end_message()
            self.write("[turn cancelled]\n")


def show_history(state: AgentState, last: int = 10) -> None:
    messages = list(state.messages[-last:])
    if messages:
        print("Earlier in this session:")
    for message in messages:
        print(f"  {'you' if message.role == 'user' else 'agent'}: {shorten(message.content, 500)}")


def converse(background: BackgroundSession, session: Session) -> None:
    """Prompt, run the turn, repeat; Ctrl-C or Ctrl-D at the prompt ends it."""
    while True:
        try:
            text = input("you> ")  # a byte that is not UTF-8 arrives as a lone surrogate: Session.send repairs it
        except (EOFError, KeyboardInterrupt):
            return
        if text.strip():
            _turn(background, session, text)


def _turn(background: BackgroundSession, session: Session, text: str) -> None:
    """Send ``text`` and wait for the turn to end, asking about approvals; Ctrl-C cancels the turn."""
    sent = False
    while True:
        try:
            if not sent:
                try:
                    background.call(lambda: session.send(text))
                except (ValueError, InvalidInput, Backpressure) as refused:  # the message, not the chat, is wrong
                    print(f"[message not sent: {refused}]")
                    return
                sent = True
            state = background.run(session.turn_done).result()
            if state.turn is None or not state.turn.awaiting_ids:
                break
            _decide(background, session, state)
        except KeyboardInterrupt:
            background.call(lambda: session.cancel("the user pressed Ctrl-C"))
    outcome = state.last_outcome
    if outcome is not None and outcome.kind == "failed":
        print(f"[turn failed: {outcome.reason}{': ' + outcome.detail if outcome.detail else ''}]")


def _decide(background: BackgroundSession, session: Session, state: AgentState) -> None:
    """Ask the user about each call awaiting approval, or the questions a tool asked (Ctrl-C cancels the turn)."""
    assert state.turn is not None
    for call_id in state.turn.awaiting_ids:
        record = state.tool_calls[call_id]
        if record.status == "awaiting-input":
            answers = _answers(record.name, record.input_requests)
            background.call(functools.partial(session.answer, call_id, answers))
        elif ask(f"Allow {record.name}({shorten(record.parameters)})? [y/N] "):
            background.call(functools.partial(session.approve, call_id))
        else:
            background.call(functools.partial(session.deny, call_id, "declined at the prompt"))


def _answers(tool: str, requests: str) -> dict[str, Any]:
    """A tool's questions (MCP's shape) asked at the prompt: a JSON answer per question, empty to decline."""
    answers: dict[str, Any] = {}
    for key, request in json.loads(requests).items():
        params = request.get("params", {}) if isinstance(request, dict) else {}
        question = params.get("message") if isinstance(params, dict) else None
        print(f"{tool} asks: {question or json.dumps(request)}")
        while True:
            try:
                text = input('answer (JSON, such as {"field": "value"}; empty declines): ').strip()
            except EOFError:
                text = ""
            if not text:
                answers[key] = {"action": "decline"}
                break
            try:
                answers[key] = {"action": "accept", "content": json.loads(text)}
                break
            except ValueError as error:
                print(f"[not JSON: {error}]")
    return answers


def ask(question: str) -> bool:
    """Ask a yes/no question at the prompt; anything but y/yes (or end of input) is no."""
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False
