"""Optional dependencies: the error raised when one is missing, naming the extra that installs it."""

from __future__ import annotations


class MissingExtra(ImportError):
    """An optional dependency of agent-core is not installed; the message names the extra that installs it."""
