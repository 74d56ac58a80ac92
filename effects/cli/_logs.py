"""What the log commands share: opening a store, one-line errors with advice, progress, JSON and times."""

from __future__ import annotations

import argparse
import datetime
import json
import sqlite3
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

import msgspec

from agent_core import DecodeError

from .._store import (
    SQL_INT_MAX,
    EventStore,
    LogDamaged,
    NotAStore,
    ReplayDiverged,
    SessionExists,
    SessionInfo,
    SessionNotFound,
    StoreDamaged,
    StoreError,
    open_store,
    sessions_page,
)

USAGE_ERROR = 2
"""Exit code for a bad file, an unknown session or a bad argument (nothing was changed)."""

CHECK_FAILED = 1
"""Exit code when a log is damaged or no longer replays the same."""


class CommandError(Exception):
    """Ends a command with one line on stderr and an exit code."""

    def __init__(self, message: str, code: int = USAGE_ERROR) -> None:
        super().__init__(message)
        self.code = code


STORE_HELP = "the store: a SQLite file or a postgresql:// URL (written by `agent-core run --db` or `import`)"


def add_db(parser: argparse.ArgumentParser, *, session: bool = True) -> None:
    """The ``DB`` (and ``SESSION``) positional arguments, ``--dsn`` in place of ``DB``, and ``--json``."""
    parser.add_argument("db", metavar="DB", nargs="?", help=STORE_HELP)
    if session:
        parser.add_argument(
            "session", metavar="SESSION", nargs="?", help="the session's id (see `agent-core sessions DB`)"
        )
    add_dsn(parser, after="session" if session else "")
    parser.add_argument("--json", action="store_true", help="print JSON for programs instead of text for people")


def add_dsn(parser: argparse.ArgumentParser, *, after: str) -> None:
    """``--dsn URL`` in place of the ``DB`` positional; ``after`` names the positional that follows ``DB``, if any."""
    parser.add_argument("--dsn", metavar="URL", help="a PostgreSQL store's URL, in place of DB")
    parser.set_defaults(after_db=after)


def _store_arguments(args: argparse.Namespace) -> None:
    """Put ``--dsn`` in ``args.db`` (shifting a lone positional to the next one); refuse a missing argument."""
    after = args.after_db
    if args.dsn:
        if args.db is not None and after and getattr(args, after) is None:
            setattr(args, after, args.db)
        elif args.db is not None:
            raise CommandError(f"got both DB ({args.db}) and --dsn; give one of them")
        args.db = args.dsn
    if args.db is None:
        raise CommandError("expected a store: DB (a SQLite file or a postgresql:// URL) or --dsn URL")
    if after and getattr(args, after) is None:
        raise CommandError(f"expected {after.upper()} after the store (see --help)")


def command(name: str, body: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Wrap a command so the errors a user can fix print as one line on stderr, with a non-zero exit."""

    def run(args: argparse.Namespace) -> int:
        try:
            if hasattr(args, "after_db"):
                _store_arguments(args)
            return body(args)
        except CommandError as error:
            return _fail(args, name, str(error), error.code)
        except (LogDamaged, ReplayDiverged, StoreDamaged) as error:
            return _fail(args, name, str(error), CHECK_FAILED)
        except DecodeError as error:
            return _fail(args, name, f"{error}; {_decode_advice(error)}", USAGE_ERROR)
        except SessionExists as error:
            return _fail(args, name, f"{error} with --as ID", USAGE_ERROR)
        except SessionNotFound as error:
            return _fail(args, name, f"{getattr(args, 'db', '')}: {error}".removeprefix(": "), USAGE_ERROR)
        except (NotAStore, StoreError) as error:
            return _fail(args, name, str(error), USAGE_ERROR)
        except sqlite3.DatabaseError as error:
            message = f"{args.db}: the store cannot be read ({error}); restore it from a backup or an export"
            return _fail(args, name, message, USAGE_ERROR)

    return run


def _decode_advice(error: DecodeError) -> str:
    text = str(error)
    if "newer than this release" in text or "session-started" in text:
        return "nothing was changed"
    if error.source.startswith("session "):
        return "the stored record cannot be read by this release; nothing was changed"
    return "expected a JSON-lines agent-core log (one input per line, session-started first); nothing was changed"


def _fail(args: argparse.Namespace, name: str, message: str, code: int) -> int:
    if getattr(args, "debug", False):
        traceback.print_exc()
    print(f"agent-core {name}: {message}", file=sys.stderr)
    return code


@contextmanager
def opened(target: str, *, readonly: bool = True, create: bool = False) -> Iterator[EventStore]:
    """The store at ``target`` (a path or a URL), closed afterwards. Read-only commands never create or change it;
    a writable one creates a store only with ``create`` (else a missing or empty file is named, as a reader would)."""
    if not readonly and not create:
        open_store(target, readonly=True).close()
    store = open_store(target, readonly=readonly)
    try:
        yield store
    finally:
        store.close()


def print_json(data: Any, out: TextIO | None = None) -> None:
    """``data`` (Structs as objects, bytes as hex) as indented JSON on stdout."""
    text = json.dumps(as_builtins(data), indent=2, ensure_ascii=False)
    (out or sys.stdout).write(text + "\n")


def as_builtins(data: Any) -> Any:
    """``data`` with Structs as dicts and bytes as hex strings, ready for :func:`print_json`."""
    if isinstance(data, bytes):
        return data.hex()
    if isinstance(data, dict):
        return {key: as_builtins(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [as_builtins(value) for value in data]
    if isinstance(data, msgspec.Struct):
        return {field: as_builtins(getattr(data, field)) for field in data.__struct_fields__}
    return data


def show_time(ms: int) -> str:
    """A timestamp (ms since the epoch) as UTC, to the millisecond; one outside the calendar as its number."""
    try:
        moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    except (ValueError, OverflowError, OSError):
        return f"{ms} ms (not a date)"
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}Z"


def show_duration(ms: int) -> str:
    """``850 ms``, ``12.4 s``, ``3 min 05 s``."""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(ms // 1000, 60)
    return f"{minutes} min {seconds:02d} s"


def progress_printer(args: argparse.Namespace, what: str) -> Callable[[int, int], None] | None:
    """A progress callback writing to stderr, when it is a terminal or ``--progress`` was given."""
    if not (getattr(args, "progress", False) or sys.stderr.isatty()):
        return None

    def report(done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        end = "\n" if done >= total else ""
        print(f"\r{what}: {done}/{total} records ({percent}%)", end=end, file=sys.stderr, flush=True)

    return report


def add_progress(parser: argparse.ArgumentParser) -> None:
    """``--progress``: report progress on stderr even when it is not a terminal."""
    parser.add_argument("--progress", action="store_true", help="report progress on stderr (default: when a terminal)")


def table(headers: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    """Left-aligned columns separated by two spaces."""
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (headers, *rows)
    ]
    return "\n".join(lines)


DEFAULT_PAGE = 1_000
"""How many sessions a command that goes through a store's sessions reads unless told otherwise."""


def add_paging(parser: argparse.ArgumentParser) -> None:
    """``--limit`` and ``--offset``: which page of a store's sessions a command reads (each one's log is read)."""
    parser.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_PAGE,
        metavar="N",
        help=f"at most N sessions (default {DEFAULT_PAGE:,}): each one's log is read",
    )
    parser.add_argument("--offset", type=int, default=0, metavar="N", help="skip the N oldest sessions (default 0)")


def session_page(store: EventStore, args: argparse.Namespace) -> tuple[list[SessionInfo], int]:
    """The page of ``store``'s sessions that ``--limit`` and ``--offset`` ask for, and how many there are."""
    if not 1 <= args.limit <= SQL_INT_MAX or not 0 <= args.offset <= SQL_INT_MAX:
        raise CommandError(
            f"expected --limit of 1 or more and --offset of 0 or more, each at most {SQL_INT_MAX:,}; "
            f"got --limit {args.limit} --offset {args.offset}"
        )
    return sessions_page(store, offset=args.offset, limit=args.limit)


def next_page(args: argparse.Namespace, listed: int, total: int) -> str | None:
    """The line that says which sessions were listed of how many, and how to list the next; ``None``: all were."""
    shown = args.offset + listed
    if shown >= total or not listed:
        return None
    return f"… sessions {args.offset + 1:,} to {shown:,} of {total:,}; the next with --offset {shown}"


def no_sessions(args: argparse.Namespace, total: int) -> str:
    """What a command prints for an empty page: an empty store, or an offset past its sessions."""
    return f"{args.db}: no sessions" + (f" past the first {total:,}" if total else "")
