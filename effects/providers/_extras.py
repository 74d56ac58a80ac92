"""Optional dependencies: import them when an adapter is built, and name the extra when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from .._extras import missing


def require(module: str, *, extra: str, user: str) -> ModuleType:
    """Import ``module`` for ``user`` (a class name) or raise :class:`MissingExtra` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise missing(user, extra, error) from None


def http_library(sdk: ModuleType) -> ModuleType:
    """The HTTP library ``sdk`` is built on (``httpx2`` for recent SDKs, ``httpx`` before), for its error classes.

    The SDKs wrap most transport errors, but some (a read that fails mid-stream)
    reach the caller as the HTTP library's own ``TransportError``.
    """
    base = importlib.import_module(f"{sdk.__name__}._base_client")
    return importlib.import_module("httpx2" if hasattr(base, "httpx2") else "httpx")
