"""The testing kit's tables are keyed by input class and checked against the reducer's table of kinds."""

from __future__ import annotations

from typing import TypeVar

from .._inputs import AgentInput, tag_of
from .._reducer import INPUT_KINDS

V = TypeVar("V")


def per_kind(table: dict[type[AgentInput], V], what: str) -> dict[str, V]:
    """``table`` (input class -> value, in the given order) keyed by tag, after checking it covers every kind.

    A kind added to the reducer's table without its entry here fails at import,
    naming what is missing, instead of never being drawn.
    """
    expected = {kind.type for kind in INPUT_KINDS}
    missing = sorted(t.__name__ for t in expected - table.keys())
    extra = sorted(t.__name__ for t in table.keys() - expected)
    if missing or extra:
        raise TypeError(
            f"the testing kit's {what} must have one entry per input kind; "
            f"missing: {', '.join(missing) or 'none'}; not input kinds: {', '.join(extra) or 'none'}"
        )
    return {tag_of(t): value for t, value in table.items()}
