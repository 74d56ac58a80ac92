"""The demo behind ``agent-core run``: three small tools and a scripted conversation.

Everything here is offline and deterministic, so tests, examples and the
command line reuse it: a calculator, a clock reading the session's clock, and
an in-memory knowledge base; a script of three turns with parallel calls, a
tool failure the model recovers from, and streamed answers.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from agent_core import AgentConfig, ContextToolResult, LlmContext

from ._clock import Clock
from ._model import ModelReply
from ._scripted import ScriptedModel, Step, call_tools, say
from ._tools import Tool, tool

NOTES = {
    "resume": "After a crash, agent-core folds the session's log into its state; effects_at(state) says which "
    "model calls, tool calls and timers must run, and the runner starts them.",
    "replay": "Every input is logged with its timestamp, so replaying a log rebuilds the same state, bit for bit, "
    "without calling the model or any tool.",
    "tools": "Tools are plain Python functions; their type annotations give the JSON schema the model sees, "
    "and bad arguments come back to the model as errors it can fix.",
    "budgets": "Each turn has budgets (model calls, tool calls, tokens, time); stuck detection stops a model that "
    "repeats the same call.",
}

_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        if isinstance(node.op, ast.Pow) and abs(_evaluate(node.right)) > 100:
            raise ValueError("exponents above 100 are refused; use a smaller exponent")
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError(f"unsupported expression {ast.unparse(node)!r}; expected numbers, + - * / // % ** and parentheses")


@tool(idempotent=True)
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression exactly as written.

    Args:
        expression: numbers with + - * / // % ** and parentheses, e.g. "17 * 23 + 4"
    """
    return str(_evaluate(ast.parse(expression, mode="eval")))


@tool(idempotent=True)
async def search_notes(query: str, limit: int = 2) -> list[str]:
    """Search the agent-core notes for a topic.

    Args:
        query: a word to look for, e.g. "resume" or "tools"
        limit: how many notes to return at most
    """
    words = query.lower().split()
    hits = [text for topic, text in NOTES.items() if any(w in topic or w in text.lower() for w in words)]
    return hits[:limit]


def clock_tool(clock: Clock) -> Tool[[], Any]:
    """A ``current_time`` tool that reads ``clock`` (the session's), so tests and demos stay deterministic."""

    @tool(idempotent=True)
    async def current_time() -> str:
        """The current date and time, in UTC (ISO 8601)."""
        return datetime.fromtimestamp(clock.now_ms() / 1000, tz=UTC).isoformat(timespec="seconds")

    return current_time


def demo_tools(clock: Clock) -> list[Tool[..., Any]]:
    """The demo's tools: ``calculate``, ``current_time`` (on ``clock``) and ``search_notes``."""
    return [calculate, clock_tool(clock), search_notes]


QUESTIONS: tuple[str, ...] = (
    "What is 17 * 23 + 4, and what time is it?",
    "How does agent-core resume after a crash?",
    "Now divide 395 by zero, just to see.",
)
"""The user's side of the demo conversation, one message per turn."""

CONFIG = AgentConfig(
    system_prompt="You are a concise assistant. Use the tools for arithmetic, the time and agent-core facts.",
    max_tool_calls=8,
)
"""The demo session's configuration."""


def results(context: LlmContext) -> dict[str, str]:
    """Tool name -> the latest result text in ``context`` (a helper for scripts that read results)."""
    return {entry.name: entry.content for entry in context.entries if isinstance(entry, ContextToolResult)}


def _first_note(context: LlmContext) -> ModelReply:
    notes = json.loads(results(context)["search_notes"])
    return say(f"In short: {notes[0]}" if notes else "I found no note about that.")


def demo_script() -> Sequence[Step]:
    """The model's side: parallel calls, a call with a bad argument fixed on the next step, streamed answers."""
    return [
        call_tools(("calculate", {"expression": "17 * 23 + 4"}), ("current_time", {})),
        lambda c: say(f"17 * 23 + 4 = {results(c)['calculate']}, and it is {results(c)['current_time']} (UTC)."),
        call_tools(("search_notes", {"query": "resume", "limit": "two"})),
        call_tools(("search_notes", {"query": "resume", "limit": 1})),
        _first_note,
        call_tools(("calculate", {"expression": "395 / 0"})),
        say("Dividing by zero is undefined: the calculator refused it, so there is no number to give."),
    ]


def demo_model() -> ScriptedModel:
    """A fresh scripted model playing :func:`demo_script`."""
    return ScriptedModel(demo_script())
