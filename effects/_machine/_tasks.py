"""The machine's effect tasks: one per started key, each in the machine's task group."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

import anyio.abc

from ._core import MachineCore
from ._events import MachineEvent
from ._protocols import Controller
from ._run import EffectRun, enter_run, leave_run

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the input type
E = TypeVar("E")

logger = logging.getLogger("effects.machine")


class EffectTasks(Generic[S, I, E]):
    """Starts effects as tasks, cancels them by key, reports their ends, counts those that can progress.

    A cancelled run's later dispatches are dropped and its end is no news. An
    effect that returns or raises is reported to the core, which yields the
    ``effect-completed`` / ``effect-failed`` event for the subscribers.
    ``active`` counts tasks not yet exited (cancelled ones included) and not
    parked; ``on_quiet`` is called whenever a task exits or parks.
    """

    def __init__(
        self,
        core: MachineCore[S, I, E],
        run_effect: Callable[[E, S, str], Controller[I]],
        publish: Callable[[MachineEvent], None],
        on_quiet: Callable[[], None],
    ) -> None:
        self._core = core
        self._run_effect = run_effect
        self._publish = publish
        self._on_quiet = on_quiet
        self._runs: dict[str, EffectRun[I]] = {}  # the current run of each running key
        self.active = 0

    def launch(
        self,
        tg: anyio.abc.TaskGroup,
        dispatch: Callable[[I], None],
        schedule: Callable[..., object],
        key: str,
        eff: E,
        state: S,
    ) -> None:
        """Start ``eff`` under ``key`` in ``tg``; ``run_effect`` raising is reported as the effect failing."""
        try:
            controller = self._run_effect(eff, state, key)
        except Exception as error:
            self._report_end(key, error)
            return
        run: EffectRun[I] = EffectRun(key, eff, dispatch, schedule, self._parked)
        self._runs[key] = run
        self.active += 1
        tg.start_soon(self._run, run, controller, name=f"effect {key}")

    def cancel(self, key: str, reason: str) -> None:
        """Cancel the run under ``key`` with ``reason``."""
        self._runs.pop(key).cancel(reason)

    def cancel_all(self, reason: str) -> None:
        """Cancel every run with ``reason``."""
        for run in self._runs.values():
            run.cancel(reason)
        self._runs.clear()

    async def _run(self, run: EffectRun[I], controller: Controller[I]) -> None:
        token = enter_run(run)
        try:
            with run.scope:
                await controller.start(run.dispatch)
        except Exception as error:
            self._ended(run, error)
        else:
            self._ended(run, None)
        finally:
            leave_run(token)
            if not run.parked:
                self.active -= 1
            run.done = True
            self._on_quiet()

    def _parked(self, parked: bool) -> None:
        self.active += -1 if parked else 1
        if parked:
            self._on_quiet()

    def _ended(self, run: EffectRun[I], error: Exception | None) -> None:
        if run.cancelled or self._runs.get(run.key) is not run:
            if error is not None:
                logger.warning("effect %r raised while being cancelled", run.key, exc_info=error)
            return
        del self._runs[run.key]
        self._report_end(run.key, error)

    def _report_end(self, key: str, error: Exception | None) -> None:
        event = self._core.effect_ended(key, error)
        if event is not None:
            self._publish(event)
