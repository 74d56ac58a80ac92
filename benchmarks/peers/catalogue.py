"""Every contender, and one contender found again by its key (in a child process, which cannot be sent closures).

A child of a long pair imports only its own framework's module: agent-core's
child never loads LangGraph, so its heap holds nothing of the peer's.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from .workload import Contender

SIDES = {"agent-core": "agent_core_side", "langgraph": "langgraph_side", "pydantic-ai": "pydantic_ai_side"}
"""The module implementing the workload for each framework."""


def side(framework: str, *arguments: Sequence[str]) -> list[Contender]:
    """The contenders of ``framework`` (``arguments`` go to its module's ``contenders``)."""
    if framework not in SIDES:
        raise ValueError(f"unknown framework {framework!r}; expected one of {', '.join(SIDES)}")
    module = importlib.import_module(f"{__package__}.{SIDES[framework]}")
    found: list[Contender] = module.contenders(*arguments)
    return found


def every(modes: Sequence[str], durabilities: Sequence[str]) -> list[Contender]:
    """agent-core in every configuration, LangGraph in ``modes`` with ``durabilities``, and pydantic-ai."""
    return side("agent-core") + side("langgraph", tuple(modes), tuple(durabilities)) + side("pydantic-ai")


def named(key: str) -> Contender:
    """The contender whose key is ``key``, among every configuration of its framework."""
    framework = next((f for f in SIDES if key.startswith(f + " ")), key.split(" ", 1)[0])
    found = side(framework)
    chosen = next((c for c in found if c.key == key), None)
    if chosen is None:
        raise ValueError(f"no contender is named {key!r}; {framework} has: {', '.join(c.key for c in found)}")
    return chosen
