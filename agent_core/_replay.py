"""``replay``: fold a sequence of inputs into a state."""

from __future__ import annotations

from collections.abc import Iterable

from ._errors import InvalidInput
from ._inputs import AgentInput
from ._reducer import transition
from ._state import AgentState, initial_state


def replay(inputs: Iterable[AgentInput], state: AgentState | None = None) -> AgentState:
    """Fold ``inputs`` from ``state`` (default: the initial state) with :func:`transition`.

    Raises :class:`InvalidInput` at the first refused input, with ``index``
    set to its position in ``inputs``.
    """
    current = initial_state() if state is None else state
    index = 0
    try:
        for index, inp in enumerate(inputs):  # noqa: B007 - index names the failing input
            current = transition(current, inp)
    except InvalidInput as error:
        raise InvalidInput(error.rejection, index) from None
    return current
