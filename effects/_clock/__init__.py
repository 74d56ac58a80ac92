"""Clocks and deadlines: where the runner reads the time it stamps on inputs, how effects wait for a time, and
every bound on time a call runs under (``_deadlines``).

The runner never calls ``time`` directly: it asks the session's :class:`Clock`,
so tests inject a :class:`ManualClock` and nothing ever sleeps for real.
"""

from ._clocks import Clock, ManualClock, SystemClock
from ._deadlines import TIMED_OUT, TimedOut, run_until

__all__ = ["TIMED_OUT", "Clock", "ManualClock", "SystemClock", "TimedOut", "run_until"]
