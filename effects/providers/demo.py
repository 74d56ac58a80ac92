"""A scripted demo model and its tools, to try ``agent-core chat --demo`` with no provider configured.

The model is a :class:`~effects.ScriptedModel` driven by a function of the
context: it adds numbers with the ``add`` tool (``what is 2 + 3?``), saves
notes with ``save_note``, which needs the user's approval (``remember: buy
milk``), and otherwise says what it can do. Deterministic and offline.
"""

from __future__ import annotations

import re
from typing import Any

from agent_core import ContextMessage, ContextToolResult, LlmContext

from .._model import ModelReply
from .._scripted import ScriptedModel, call_tools, say
from .._tools import Tool, tool

HELP = (
    "I am the scripted demo model. Ask me to add numbers ('what is 2 + 3?') or to remember something "
    "('remember: buy milk', which asks for your approval). For a real model, pass --provider, --model and "
    "--base-url (or set AGENT_CORE_PROVIDER, AGENT_CORE_MODEL, AGENT_CORE_BASE_URL)."
)
"""What the demo model says to anything it does not understand."""

_NOTES: list[str] = []


@tool
def add(a: float, b: float) -> float | int:
    """Add two numbers.

    Args:
        a: the first number
        b: the second number
    """
    total = a + b
    return int(total) if total.is_integer() else total


@tool(requires_approval=True)
def save_note(text: str) -> str:
    """Save a note for later (asks the user first).

    Args:
        text: what to remember
    """
    _NOTES.append(text)
    return f"saved note {len(_NOTES)}: {text}"


DEMO_TOOLS: tuple[Tool[..., Any], ...] = (add, save_note)
"""The tools the demo model calls."""


def demo_model() -> ScriptedModel:
    """The demo model (see the module docstring)."""
    return ScriptedModel(_answer)


def _answer(context: LlmContext) -> ModelReply:
    last = context.entries[-1] if context.entries else None
    if isinstance(last, ContextToolResult):
        verb = "failed" if last.is_error else "answered"
        return say(f"The tool {last.name} {verb}: {last.content}")
    question = last.content if isinstance(last, ContextMessage) else ""
    numbers = re.findall(r"-?\d+(?:\.\d+)?", question)
    if "+" in question and len(numbers) >= 2:
        a, b = (float(n) if "." in n else int(n) for n in numbers[:2])
        return call_tools(("add", {"a": a, "b": b}), text="Let me add those. ")
    note = re.match(r"\s*(?:remember|note)\b[\s:,-]*(.+)", question, re.IGNORECASE | re.DOTALL)
    if note:
        return call_tools(("save_note", {"text": note.group(1).strip()}), text="I'll save that note. ")
    return say(HELP)
