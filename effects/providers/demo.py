"""The interactive demo model behind ``agent-core chat --demo``: try the chat with no provider configured.

A :class:`~effects.ScriptedModel` driven by a function of the context, using
the tools of :mod:`effects.demo` (``calculate``, ``current_time``,
``search_notes``) plus ``save_note``, which needs the user's approval. It
calculates (``what is 17 * 23?``), tells the time, looks up notes
(``how does resume work?``), saves notes (``remember: buy milk``) and
otherwise says what it can do. Deterministic and offline.
"""

from __future__ import annotations

import re
from typing import Any

from agent_core import ContextMessage, ContextToolResult, LlmContext

from .._clock import Clock
from .._model import ModelReply
from .._scripted import ScriptedModel, call_tools, say
from .._tools import Tool, tool
from ..demo import NOTES, demo_tools

HELP = (
    "I am the scripted demo model. I can calculate ('what is 17 * 23 + 4?'), tell the time, look up how "
    "agent-core works ('how does resume work?') and remember things ('remember: buy milk', which asks for "
    "your approval). For a real model, pass --provider, --model and --base-url."
)
"""What the demo model says to anything it does not understand."""

_EXPRESSION = re.compile(r"[\d(][\d\s+\-*/%().]*[\d)]")
_NOTE = re.compile(r"\s*(?:remember|note)\b[\s:,-]*(.+)", re.IGNORECASE | re.DOTALL)
_saved: list[str] = []


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for later (the user approves each note).

    Args:
        text: what to remember
    """
    _saved.append(text)
    return f"saved note {len(_saved)}: {text}"


def chat_demo_tools(clock: Clock) -> list[Tool[..., Any]]:
    """The demo's tools (``current_time`` reads ``clock``) and ``save_note``."""
    return [*demo_tools(clock), save_note]


def chat_demo_model() -> ScriptedModel:
    """The interactive demo model (see the module docstring); give it :func:`chat_demo_tools`."""
    return ScriptedModel(_answer)


def _answer(context: LlmContext) -> ModelReply:
    last = context.entries[-1] if context.entries else None
    if isinstance(last, ContextToolResult):
        results = [e for e in context.entries if isinstance(e, ContextToolResult)]
        said = "; ".join(f"{r.name} {'failed' if r.is_error else 'says'}: {r.content}" for r in results)
        return say(f"Here is what I found. {said}")
    question = last.content if isinstance(last, ContextMessage) else ""
    note = _NOTE.match(question)
    if note:
        return call_tools(("save_note", {"text": note.group(1).strip()}), text="I'll save that note. ")
    calls: list[tuple[str, dict[str, Any]]] = []
    expression = _EXPRESSION.search(question)
    if expression and any(op in expression.group() for op in "+-*/%"):
        calls.append(("calculate", {"expression": expression.group().strip()}))
    if "time" in question.lower():
        calls.append(("current_time", {}))
    topic = next((t for t in NOTES if t in question.lower()), None)
    if topic:
        calls.append(("search_notes", {"query": topic, "limit": 1}))
    return call_tools(*calls, text="Let me check. ") if calls else say(HELP)
