"""A turn in phase ``acting`` shared by the tool-call examples."""

from __future__ import annotations

from typing import Any

import agent_core as ac

from ._build import T0, ask, fold, in_turn

ACTING_INPUTS = (
    "child-spent",
    "re-act-cancelled",
    "timer-fired",
    "tool-call-approved",
    "tool-call-completed",
    "tool-call-denied",
    "tool-call-input-provided",
    "tool-call-input-required",
    "tool-call-started",
    "tool-call-task-created",
    "user-message-received",
)


def acting(**config: Any) -> ac.AgentState:
    """One batch at ``T0 + 2``: ``t1`` search and ``t2`` fetch pending, ``t3`` refund awaiting
    approval, ``t4`` to the unknown tool ``serch`` (failed at once)."""
    return fold(in_turn(**config), ask(at=T0 + 2, t1='search:{"q":"late"}', t2="fetch", t3="refund", t4="serch"))
