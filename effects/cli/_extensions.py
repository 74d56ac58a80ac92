"""Loading a user's rules and guards into the command line: ``--import MODULE`` and the entry-point group.

A session that names rules or guards (``config.rules``, a workflow's guards)
replays only in a process that registered them (``register_rule``,
``register_guard``), because the reducer calls them again. A Python program
imports its own modules; the command line and the viewer load them from

* ``--import MODULE`` (repeatable, before or after the command's name): the
  module is imported by name, with the current directory on the import path,
  as ``python -m`` would find it;
* the entry-point group :data:`ENTRY_POINT_GROUP` of every installed
  distribution: each entry point names a module imported for what it
  registers, e.g. in the ``pyproject.toml`` of a package of rules::

      [project.entry-points."agent_core.extensions"]
      my-rules = "my_package.rules"
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from ._logs import CommandError

ENTRY_POINT_GROUP = "agent_core.extensions"
"""The entry-point group whose modules every command imports first (for the rules and guards they register)."""

IMPORT_HELP = (
    "import MODULE first (repeatable), for the rules and guards it registers: a session that names them "
    "replays only where they are registered (the current directory is on the import path)"
)


def load_extensions(modules: Sequence[str]) -> None:
    """Import the installed extensions' modules, then ``modules``; a failure names the module and what to do."""
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {entry.name!r} ({entry.value}) of group {ENTRY_POINT_GROUP}"
        _import(entry.value.split(":", 1)[0], where)
    if modules and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        _import(module, f"--import {module}")


def _import(module: str, where: str) -> None:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and module.startswith(error.name):
            raise CommandError(
                f"{where}: no module named {module!r}; expected a module on the import path (run the command "
                "where the module's file is, or install its package)"
            ) from None
        raise CommandError(f"{where}: importing it failed: {type(error).__name__}: {error}") from error
    except Exception as error:
        raise CommandError(f"{where}: importing it failed: {type(error).__name__}: {error}") from error
