"""The backoff of every retry the reducer schedules (a model call's, a tool call's): deterministic, exponential."""

from __future__ import annotations


def backoff_ms(base_ms: int, max_ms: int, failures: int) -> int:
    """``base_ms * 2**(failures-1)`` capped at ``max_ms``: the wait before the attempt after ``failures`` failures."""
    # The exponent is capped: past 2**62 every delay is capped by max_ms anyway, and a huge power is slow.
    return min(max_ms, base_ms << min(failures - 1, 62))
