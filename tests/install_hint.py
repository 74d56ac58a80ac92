"""What a missing extra's message must tell a user of this clone to run (the tests run in its editable install)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

CLONE = Path(__file__).resolve().parent.parent


def editable_install(extra: str) -> str:
    """``python -m pip install -e 'CLONE[extra]'`` with this interpreter: the command that works from here."""
    return f"{shlex.quote(sys.executable)} -m pip install -e {shlex.quote(f'{CLONE}[{extra}]')}"
