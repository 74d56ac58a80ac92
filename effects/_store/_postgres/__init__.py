"""PostgreSQL: one log shared by many processes and machines; its schema, connections, writer and listener."""

from ._listen import DEFAULT_RECONNECT_FOR as DEFAULT_RECONNECT_FOR
from ._listen import InputsListener
from ._schema import is_dsn
from ._store import PostgresStore

__all__ = ["InputsListener", "PostgresStore", "is_dsn"]
