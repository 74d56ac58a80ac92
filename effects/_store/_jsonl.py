"""JSON-lines export and import of one session: the portable log format.

One input per line, the first one ``session-started`` (the format of the
golden fixture logs). An export is always of the current schema version;
an import keeps the records of an older version as they were written (each
row carries its version) and upcasts them when they are read.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from agent_core import (
    SCHEMA_VERSION,
    DecodeError,
    InvalidInput,
    SessionStarted,
    decode_log,
    encode_input,
    encode_log,
    replay,
)

from ._errors import SessionExists
from ._integrity import Encoded, checked_inputs
from ._journal import SessionJournal
from ._protocol import EventStore, session_exists
from ._records import SessionInfo
from ._snapshots import DEFAULT_SNAPSHOT_EVERY


def export_session(store: EventStore, session_id: str, *, until: int | None = None) -> bytes:
    """The session's records ``1..until`` (default: all) as JSON lines, upcast to the current schema.

    The hash chain is checked on the way (:class:`LogDamaged` names the first bad record).
    """
    length = store.session(session_id).length
    stop = length if until is None else min(until, length)
    return encode_log(checked_inputs(session_id, store.read(session_id, 1, stop), stop))


class ParsedLog(NamedTuple):
    """A JSON-lines log checked and encoded for a store: its ``session-started`` id and its records."""

    session_id: str
    schema_version: int
    batch: list[Encoded]


def parse_log(data: bytes, *, source: str = "") -> ParsedLog:
    """Check a whole JSON-lines log without writing anything (see :func:`import_session`)."""
    inputs = decode_log(data, source=source)
    numbered = [(number, line) for number, line in enumerate(data.splitlines(), start=1) if line.strip()]
    try:
        replay(inputs)
    except InvalidInput as error:
        line = numbered[error.index or 0][0]
        raise DecodeError(f"the reducer refuses this input: {error.rejection}", record=line, source=source) from None
    first = inputs[0]
    assert isinstance(first, SessionStarted)  # decode_log checked it
    version = _version(numbered[0][1])
    if version == SCHEMA_VERSION:
        batch: list[Encoded] = [(inp, version, encode_input(inp, format="msgpack")) for inp in inputs]
    else:
        # Keep each old record as written (as MessagePack): it is upcast whenever it is read.
        pairs = zip(inputs, numbered, strict=True)
        batch = [(inp, version, msgspec.msgpack.encode(msgspec.json.decode(line))) for inp, (_, line) in pairs]
    return ParsedLog(first.session_id, version, batch)


def import_session(
    store: EventStore,
    data: bytes | ParsedLog,
    *,
    session_id: str | None = None,
    source: str = "",
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
) -> SessionInfo:
    """Store a JSON-lines log as a new session (default id: the one its ``session-started`` names).

    The whole file is checked before anything is written: every line must
    decode (an older schema is upcast; a newer one is refused) and the
    reducer must accept every input. Problems raise :class:`agent_core.DecodeError`
    naming ``source`` and the line; an id already in the store raises
    :class:`SessionExists`. The session is written in one transaction, and
    records of an older schema keep their version. ``data`` may also be
    what :func:`parse_log` returned.
    """
    parsed = data if isinstance(data, ParsedLog) else parse_log(data, source=source)
    target = session_id or parsed.session_id
    if session_exists(store, target):
        raise SessionExists(target, store.session(target).length)
    journal = SessionJournal(store, target, snapshot_every=snapshot_every)
    journal.append_encoded(parsed.batch)
    journal.close()
    return store.session(target)


def _version(first_line: bytes) -> int:
    record = msgspec.json.decode(first_line)
    version = record.get("schema_version", record.get("schemaVersion", SCHEMA_VERSION))
    assert isinstance(version, int)  # decode_log checked it
    return version
