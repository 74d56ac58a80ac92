"""The one place where a command's failure becomes what a person sees: one line on stderr and an exit code.

A command raises; this handler decides. Errors a user can cause (a bad file,
a store that cannot be opened or written, an unknown session, a damaged log)
are one line naming the command, what was wrong and what to do; so is a bug,
with an invitation to run again with ``--debug``, which prints the traceback
too. Output cut short by a closed pipe (``agent-core inspect ... | head``)
ends quietly, as other command-line tools do when their reader is gone.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import traceback
from collections.abc import Callable

from ._logs import USAGE_ERROR

INTERNAL_ERROR = 70
"""Exit code for a failure that is a bug in agent-core (``EX_SOFTWARE``); ``--debug`` shows its traceback."""

BROKEN_PIPE = 141
"""Exit code when the reader of the output went away (128 + SIGPIPE, as for tools the signal ends)."""

INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT)."""

_OS_ADVICE = {
    errno.EACCES: "check the file's permissions",
    errno.EPERM: "check the file's permissions",
    errno.EROFS: "the file system is read-only; copy the store somewhere writable",
    errno.ENOSPC: "the disk is full; free some space and run the command again (nothing was lost)",
    errno.EDQUOT: "the disk quota is exhausted; free some space and run the command again",
    errno.ENOENT: "check the path",
    errno.EISDIR: "expected a file, got a directory",
    errno.ENOTDIR: "a part of the path is not a directory",
}


def guarded(name: str, run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run the command ``name`` and turn whatever escapes it into one line on stderr and an exit code."""
    debug = bool(getattr(args, "debug", False))
    try:
        return run(args)
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"agent-core {name}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except OSError as error:
        _report(name, _os_message(error), debug)
        return USAGE_ERROR
    except (RecursionError, MemoryError) as error:
        _report(name, f"the input is too deeply nested or too large to read ({type(error).__name__})", debug)
        return USAGE_ERROR
    except Exception as error:
        message = (
            f"unexpected error: {type(error).__name__}: {error}. This is a bug in agent-core: "
            "run the command again with --debug for the traceback and report it"
        )
        _report(name, message, debug)
        return INTERNAL_ERROR


def _os_message(error: OSError) -> str:
    what = error.strerror or str(error)
    where = f"{error.filename}: " if error.filename else ""
    advice = _OS_ADVICE.get(error.errno or 0, "check the path and run the command again")
    return f"{where}{what}; {advice}"


def _report(name: str, message: str, debug: bool) -> None:
    if debug:
        traceback.print_exc()
    print(f"agent-core {name}: {message}", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (tests): nothing to flush into a pipe
        pass
