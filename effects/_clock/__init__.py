"""Clocks: where the runner reads the time it stamps on inputs, and how effects wait for a time.

The runner never calls ``time`` directly: it asks the session's :class:`Clock`,
so tests inject a :class:`ManualClock` and nothing ever sleeps for real.
"""

from ._clocks import Clock, ManualClock, SystemClock
from ._final import final_wait, take_final
from ._until import TIMED_OUT, TimedOut, run_until

__all__ = ["TIMED_OUT", "Clock", "ManualClock", "SystemClock", "TimedOut", "final_wait", "run_until", "take_final"]
