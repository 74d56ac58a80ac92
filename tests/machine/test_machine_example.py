"""examples/host_driven.py: a host without asyncio drives MachineCore and prints what happens."""

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "host_driven.py"


def test_the_host_driven_example_counts_down_cancels_and_rejects(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        "effect-started tick:3",
        "turn 0: state 3, running ['tick:3']",
        "effect-completed tick:3",
        "applied Tick() -> state 2",
        "effect-started tick:2",
        "turn 1: state 2, running ['tick:2']",
        "effect-completed tick:2",
        "applied Tick() -> state 1",
        "effect-started tick:1",
        "turn 2: state 1, running ['tick:1']",
        "applied Stop() -> state 0",
        "effect-canceled tick:1 key no longer derived",
        "turn 3: state 0, running []",
        "rejected Tick(): the countdown is over; nothing to tick",
        "final: state 0, running []",
    ]
