"""Telling the caller's cancellation from one that happened inside a tool."""

from __future__ import annotations

import asyncio
import math

import anyio


def cancelled_by_caller() -> bool:
    """Whether the running task is being cancelled from outside (a cancel scope, ``Task.cancel``).

    A ``CancelledError`` that reaches an async tool from a future something else
    cancelled leaves the task itself uncancelled: that is the tool's failure, not
    the caller's cancellation. Under trio only cancel scopes cancel, so any
    ``Cancelled`` is the caller's.
    """
    if anyio.current_effective_deadline() == -math.inf:
        return True
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not on asyncio (trio)
        return True
    return task is None or task.cancelling() > 0
