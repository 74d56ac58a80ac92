"""The testing kit's tables are keyed by input class or tag and checked against the reducer's table of kinds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from .._reducer import INPUT_KINDS

V = TypeVar("V")


def per_kind(table: Mapping[Any, V], what: str) -> dict[str, V]:
    """``table`` (input class or tag -> value, in the given order) keyed by tag, after checking it
    covers every kind.

    A kind added to the reducer's table without its entry here fails at import,
    naming what is missing, instead of never being drawn.
    """
    names = {kind.tag: kind.type.__name__ for kind in INPUT_KINDS}
    by_tag = {_tag(key): value for key, value in table.items()}
    missing = sorted(names[tag] for tag in names.keys() - by_tag.keys())
    extra = sorted(getattr(key, "__name__", repr(key)) for key in table if _tag(key) not in names)
    if missing or extra:
        raise TypeError(
            f"the testing kit's {what} must have one entry per input kind; "
            f"missing: {', '.join(missing) or 'none'}; not input kinds: {', '.join(extra) or 'none'}"
        )
    return by_tag


def _tag(key: object) -> str:
    if isinstance(key, str):
        return key
    tag = getattr(getattr(key, "__struct_config__", None), "tag", None)
    return tag if isinstance(tag, str) else ""
