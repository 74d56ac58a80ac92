"""Opening a PostgreSQL database as a store: the driver, keepalives, the schema, refusing foreign databases."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..._extras import install_command
from .._errors import NotAStore, StoreError, StoreUnavailable
from .._sqlite import FORMAT

if TYPE_CHECKING:
    import psycopg

CHANNEL = "agent_core_inputs"
"""The ``NOTIFY`` channel an append signals on; the payload is the session id."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_core_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS agent_core_sessions (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    length INTEGER NOT NULL,
    head BYTEA NOT NULL,
    first_timestamp BIGINT NOT NULL,
    last_timestamp BIGINT NOT NULL,
    parent TEXT,
    parent_seq INTEGER
);
CREATE TABLE IF NOT EXISTS agent_core_inputs (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    codec SMALLINT NOT NULL,
    data BYTEA NOT NULL,
    hash BYTEA NOT NULL,
    turn_digest BYTEA,
    state_hash BYTEA,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS agent_core_snapshots (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    state_hash BYTEA NOT NULL,
    codec SMALLINT NOT NULL,
    data BYTEA NOT NULL,
    anchor BYTEA,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS agent_core_leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    holder TEXT NOT NULL,
    acquired_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL
);
"""

_LEASES = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS agent_core_leases") :]
"""A store created before leases gets their table when it is first opened for writing."""

NOW_MS = "COALESCE(%(now)s::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)"
"""The time leases are judged by, in ms since the epoch: the parameter ``now`` (a clock a test moves), else the
server's clock, so that machines whose clocks disagree judge a lease alike."""

_HAS_LEASES = "SELECT to_regclass('agent_core_leases') IS NOT NULL"

HAS_ANCHORS = (
    "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('agent_core_snapshots') "
    "AND attname = 'anchor' AND NOT attisdropped)"
)
"""Whether the snapshots have the ``anchor`` column (a store created before it gets it when opened for writing)."""

KEEPALIVES = MappingProxyType(
    {
        "keepalives": 1,
        "keepalives_idle": 30,
        "keepalives_interval": 10,
        "keepalives_count": 3,
        "tcp_user_timeout": 60_000,
    }
)
"""The libpq parameters every connection of a ``PostgresStore`` gets where its DSN does not set them (the DSN wins).

An idle connection (a waiter in ``LISTEN``, the writer between groups) is
probed after 30 s of silence, then every 10 s; after 3 probes unanswered, or
data unacknowledged for 60 s (``tcp_user_timeout``, in ms), the kernel closes
the socket, and the store connects again or raises ``StoreUnavailable``,
instead of waiting without bound on a server that vanished (a host powered
off, a NAT or firewall entry dropped).
"""


# Any constant: two processes creating the schema of a new database at once take turns.
_SCHEMA_LOCK = 0x61676E74


def driver() -> Any:
    """The ``psycopg`` module, or an error naming the extra to install."""
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "PostgreSQL stores need psycopg 3, from the 'postgres' extra, which is not installed; "
            f"install it with: {install_command('postgres')}"
        ) from None
    return psycopg


def open_connection(dsn: str) -> Any:
    """An autocommit connection to ``dsn``, with :data:`KEEPALIVES` where the DSN is silent.

    Raises ``psycopg.Error`` (a DSN that does not parse, a server that cannot
    be reached); the callers name the store in their own errors.
    """
    pg = driver()
    given = pg.conninfo.conninfo_to_dict(dsn)
    return pg.connect(dsn, autocommit=True, **{key: value for key, value in KEEPALIVES.items() if key not in given})


def is_dsn(target: str) -> bool:
    """Whether ``target`` names a PostgreSQL database (a ``postgresql://`` or ``postgres://`` URL)."""
    return target.startswith(("postgresql://", "postgres://"))


def shown(dsn: str) -> str:
    """The DSN without its password, for messages."""
    head, at, tail = dsn.rpartition("@")
    if not at:
        return dsn
    scheme, _, credentials = head.partition("://")
    user = credentials.partition(":")[0]
    return f"{scheme}://{user}@{tail}"


def connect(dsn: str, *, readonly: bool) -> psycopg.Connection[Any]:
    """An autocommit connection (with TCP keepalives) to a valid store; a writable one creates the schema if needed.

    Raises :class:`StoreError` when the server cannot be reached and
    :class:`NotAStore` when the database holds another format.
    """
    pg = driver()
    try:
        connection: psycopg.Connection[Any] = open_connection(dsn)
    except pg.Error as error:
        raise unusable(dsn, error) from None
    try:
        _check_or_create(connection, dsn, readonly)
        if readonly:
            connection.execute("SET default_transaction_read_only = on")
    except BaseException:
        connection.close()
        raise
    return connection


def unusable(dsn: str, error: Exception) -> StoreUnavailable:
    """The error for a store that is read-only, out of disk, unreachable, or whose connection broke."""
    errors = driver().errors
    reason = " ".join(str(error).split())
    if isinstance(error, errors.ReadOnlySqlTransaction):
        return StoreUnavailable(
            f"{shown(dsn)}: the store is read-only ({reason}); nothing was written; "
            "open it without readonly=True, or use a command that only reads"
        )
    if isinstance(error, errors.DiskFull):
        return StoreUnavailable(
            f"{shown(dsn)}: the database server's disk is full ({reason}); nothing of this batch was written; "
            "free space on the server, then retry (a session resumes from what was committed)"
        )
    return StoreUnavailable(
        f"{shown(dsn)}: cannot reach the PostgreSQL store ({reason}); "
        "check that the server runs and the DSN is right, then retry"
    )


def _check_or_create(connection: psycopg.Connection[Any], dsn: str, readonly: bool) -> None:
    found = connection.execute("SELECT to_regclass('agent_core_inputs') IS NOT NULL").fetchone()
    if not readonly and not (found and found[0]):
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            connection.execute(_SCHEMA)
            connection.execute(
                "INSERT INTO agent_core_meta VALUES ('format', %s) ON CONFLICT DO NOTHING", (str(FORMAT),)
            )
    found = connection.execute("SELECT to_regclass('agent_core_meta') IS NOT NULL").fetchone()
    if not (found and found[0]):
        raise NotAStore(
            f"{shown(dsn)}: the database has no agent-core tables; "
            "expected a store written by `agent-core run --db` or `agent-core import`"
        )
    row = connection.execute("SELECT value FROM agent_core_meta WHERE key = 'format'").fetchone()
    if row is None or row[0] != str(FORMAT):
        raise NotAStore(
            f"{shown(dsn)}: store format {'none' if row is None else row[0]}, this release reads format {FORMAT}; "
            "open it with the release that wrote it, or export its sessions there and import them here"
        )
    if not readonly and connection.execute(HAS_ANCHORS).fetchone() == (False,):
        with connection.transaction():  # IF NOT EXISTS: another process may be adding it too
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            connection.execute("ALTER TABLE agent_core_snapshots ADD COLUMN IF NOT EXISTS anchor BYTEA")
    if not readonly and connection.execute(_HAS_LEASES).fetchone() == (False,):
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            connection.execute(_LEASES)
