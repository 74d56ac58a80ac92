"""The floor under agent-core's round, measured in the same run as the peers.

A ratio target in memory (">= 50x below the fastest peer") asks agent-core for
a round under the fastest peer's time divided by the ratio. ``benchmarks/runner.py``
measures two parts every runner that starts a task per effect pays (the event
loop alone running a round's four tasks, the pure core alone folding a round's
inputs and building its context); their sum is a floor under a round. Measured
here, in a child process under asyncio, so the tables can say whether a target
is below it on the machine as it is during this run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[1] / "runner.py"


def round_floor(rounds: int = 1000) -> dict[str, float]:
    """CPU microseconds per round: ``event_loop_us``, ``pure_core_us`` and their sum, ``floor_us``."""
    command = [sys.executable, str(RUNNER), "--phase", "floor", "--backend", "asyncio", "--rounds", str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"measuring the floor under a round failed (exit {done.returncode}):\n{done.stderr}")
    parts = json.loads(done.stdout)
    loop, core = parts["loop"]["cpu_us_per_round"], parts["core"]["cpu_us_per_round"]
    return {"event_loop_us": round(loop, 1), "pure_core_us": round(core, 1), "floor_us": round(loop + core, 1)}


def asks(fastest_peer_us: float, beats_by: float, floor: dict[str, float]) -> str:
    """One line: what a ratio target asks of agent-core's round, beside the floor measured in this run."""
    needed = fastest_peer_us / beats_by
    below = needed < floor["floor_us"]
    return (
        f"{beats_by:g}x below the fastest peer asks agent-core for <= {needed:,.1f} µs a round; the floor under "
        f"a round in this run: {floor['floor_us']:,.1f} µs (event loop alone {floor['event_loop_us']:,.1f} + pure "
        f"core alone {floor['pure_core_us']:,.1f}, CPU): " + ("below the floor" if below else "above the floor")
    )
