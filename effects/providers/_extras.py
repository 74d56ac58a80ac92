"""Optional dependencies: import them when an adapter is built, and name the extra when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency of agent-core is not installed; the message names the extra that installs it."""


def require(module: str, *, extra: str, user: str) -> ModuleType:
    """Import ``module`` for ``user`` (a class name) or raise :class:`MissingExtra` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtra(
            f"{user} needs the '{module}' package, which is not installed "
            f"(import failed: {error}). Install the extra: pip install 'agent-core[{extra}]'"
        ) from None
