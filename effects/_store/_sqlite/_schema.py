"""Opening a SQLite file as a store: connection settings, the schema, and refusing foreign files."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from .._errors import NotAStore, StoreDamaged, StoreError, StoreUnavailable

FORMAT = 1
"""The store layout this release writes and reads (kept in the ``meta`` table)."""

Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    length INTEGER NOT NULL,
    head BLOB NOT NULL,
    first_timestamp INTEGER NOT NULL,
    last_timestamp INTEGER NOT NULL,
    parent TEXT,
    parent_seq INTEGER
);
CREATE TABLE IF NOT EXISTS inputs (
    session INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    codec INTEGER NOT NULL,
    data BLOB NOT NULL,
    hash BLOB NOT NULL,
    turn_digest BLOB,
    state_hash BLOB,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshots (
    session INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    state_hash BLOB NOT NULL,
    codec INTEGER NOT NULL,
    data BLOB NOT NULL,
    anchor BLOB,
    PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    holder TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL
) WITHOUT ROWID;
"""

_ANCHORS = "ALTER TABLE snapshots ADD COLUMN anchor BLOB"
"""A store created before snapshots were anchored gets the column when it is first opened for writing."""

_LEASES = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS leases") :]
"""A store created before leases gets their table when it is first opened for writing."""

_ADVICE = "expected a store written by `agent-core run --db` or `agent-core import`"


def connect(path: str | os.PathLike[str], *, readonly: bool, synchronous: Synchronous) -> sqlite3.Connection:
    """A connection to a valid store at ``path``; a writable one creates the file and the schema if needed.

    Read-only connections never create or change anything. Raises
    :class:`NotAStore` for a missing file (read-only), a file that is not
    SQLite, or a SQLite database without the store's tables.
    """
    name = os.fspath(path)
    if readonly and name != ":memory:" and not Path(name).is_file():
        what = "a directory, not a file" if Path(name).is_dir() else "no such file"
        raise NotAStore(f"{name}: {what}; {_ADVICE}")
    target = f"{Path(name).resolve().as_uri()}?mode=ro" if readonly and name != ":memory:" else name
    try:
        connection = sqlite3.connect(target, uri=readonly, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as error:
        raise NotAStore(f"{name}: cannot open it ({error}); {_ADVICE}") from None
    try:
        connection.execute("PRAGMA busy_timeout = 10000")
        _check_or_create(connection, name, readonly)
        if not readonly:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute(f"PRAGMA synchronous = {synchronous}")
    except sqlite3.Error as error:
        connection.close()
        raise failure(name, error) from None
    except BaseException:
        connection.close()
        raise
    return connection


def _check_or_create(connection: sqlite3.Connection, name: str, readonly: bool) -> None:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables and not readonly:
        # IF NOT EXISTS and OR IGNORE: two processes may create the same new file at once.
        connection.executescript(
            f"BEGIN IMMEDIATE;{_SCHEMA}INSERT OR IGNORE INTO meta VALUES ('format', '{FORMAT}');COMMIT;"
        )
        return
    if "meta" not in tables or "inputs" not in tables:
        what = "an empty SQLite database" if not tables else "a SQLite database with other tables"
        raise NotAStore(f"{name}: {what}, not an agent-core store; {_ADVICE}")
    row = connection.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    if row is None or row[0] != str(FORMAT):
        found = "none" if row is None else row[0]
        raise NotAStore(
            f"{name}: store format {found}, this release reads format {FORMAT}; "
            "open it with the release that wrote it, or export its sessions there and import them here"
        )
    if not readonly and (not has_anchors(connection) or "leases" not in tables):
        connection.execute("BEGIN IMMEDIATE")  # another process may be adding them too: check again, locked
        try:
            if not has_anchors(connection):
                connection.execute(_ANCHORS)
            connection.execute(_LEASES)  # IF NOT EXISTS
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise


def has_anchors(connection: sqlite3.Connection) -> bool:
    """Whether the store's ``snapshots`` table has the ``anchor`` column (a store older than it is read without)."""
    return any(row[1] == "anchor" for row in connection.execute("PRAGMA table_info(snapshots)"))


@contextmanager
def sqlite_errors(name: str) -> Iterator[None]:
    """Turn a ``sqlite3.Error`` raised in the block into the :class:`StoreError` that says what happened."""
    try:
        yield
    except sqlite3.Error as error:
        raise failure(name, error) from None


def failure(name: str, error: sqlite3.Error) -> StoreError:
    """Damaged, not a store, read-only, disk full or failing: each with what to do."""
    code = getattr(error, "sqlite_errorname", "") or ""
    if code.startswith("SQLITE_CORRUPT"):
        return StoreDamaged(
            f"{name}: the database file is damaged ({error}): truncated or overwritten; restore it from a backup, "
            "or export the sessions that still read with `agent-core export`"
        )
    if code.startswith("SQLITE_NOTADB"):
        return NotAStore(f"{name}: not an agent-core store ({error}); {_ADVICE}")
    if code.startswith("SQLITE_READONLY"):
        return StoreUnavailable(
            f"{name}: the store is read-only ({error}); nothing was written; make the file and its folder writable "
            "(SQLite writes -wal and -shm files beside it), or use a command that only reads"
        )
    if code == "SQLITE_FULL":
        return StoreUnavailable(f"{name}: the disk is full ({error}); nothing of this batch was written; {_RETRY}")
    if code.startswith("SQLITE_IOERR"):
        return StoreUnavailable(
            f"{name}: cannot write or read the file ({error}): the disk may be full, failing, or over a size limit; "
            f"nothing of this batch was written; {_RETRY}"
        )
    return StoreUnavailable(f"{name}: the store failed ({error}); nothing of this batch was written; {_RETRY}")


def commit_failure(name: str, error: sqlite3.Error) -> StoreUnavailable:
    """The error for a ``COMMIT`` that failed after SQLite ended the transaction (an I/O error or a full disk while
    it wrote and synced the commit): the batches may or may not be durable, as after a PostgreSQL connection lost
    during ``COMMIT``; reopening the session tells."""
    return StoreUnavailable(
        f"{name}: the commit failed ({error}): the disk may be full or failing; the batches of this commit may or "
        "may not be durable (SQLite may have written part of the commit before the error); fix the disk, then "
        "reopen the session (SessionJournal.open, open_session) to see what the store holds, and go on from there"
    )


_RETRY = "fix that, then retry (a session resumes from what was committed)"
