"""A host without asyncio drives the machine's synchronous core in a plain loop.

A countdown derives a ``tick`` effect (keyed by the count) while ``left > 0``; the host runs each effect itself,
feeds its input back and reports its end. An outside ``Stop`` cancels the pending tick; a stray ``Tick`` is refused.
"""

from dataclasses import dataclass

from effects import InputRejected, MachineCore, MachineEvent, StateUpdated


@dataclass(frozen=True)
class Tick: ...  # what the tick effect produces


@dataclass(frozen=True)
class Stop: ...  # someone outside stopped the countdown


def transition(left: int, inp: Tick | Stop) -> int:
    return 0 if isinstance(inp, Stop) else left - 1


def effects_at(left: int) -> dict[str, str]:
    return {f"tick:{left}": "tick"} if left > 0 else {}


def check(left: int, inp: Tick | Stop) -> str | None:
    return "the countdown is over; nothing to tick" if left == 0 else None


def show(event: MachineEvent | None) -> None:
    if isinstance(event, StateUpdated):
        print(f"  applied {event.input} -> state {event.state}")
    elif isinstance(event, InputRejected):
        print(f"  rejected {event.input}: {event.rejection}")
    elif event is not None and event.type != "input-received":  # effect events carry a key
        print(f"  {event.type} {getattr(event, 'key', '')} {getattr(event, 'reason', '')}")


def main() -> None:
    core: MachineCore[int, Tick | Stop, str] = MachineCore(3, transition, effects_at, check)
    outside: dict[int, Tick | Stop] = {2: Stop(), 3: Tick()}  # what the world sends, by turn
    for event in core.apply([]).events:  # reconcile the initial state: starts tick:3
        show(event)
    for turn in range(4):
        print(f"turn {turn}: state {core.current()}, running {list(core.running_keys())}")
        if turn in outside:
            inputs = [outside[turn]]
        else:  # run the oldest effect: it produces its input, then ends
            inputs = [Tick()]
            show(core.effect_ended(core.running_keys()[0]))
        for event in core.apply(inputs).events:
            show(event)
    print(f"final: state {core.current()}, running {list(core.running_keys())}")


if __name__ == "__main__":
    main()
