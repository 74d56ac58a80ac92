"""Checks every store applies to a batch before writing it."""

from __future__ import annotations

from collections.abc import Sequence

from ._records import StoredInput


def check_batch(session_id: str, records: Sequence[StoredInput], expected: int) -> None:
    """Refuse an empty batch or one whose sequence numbers do not continue the log at ``expected + 1``.

    This is a bug in the caller (the journal numbers records), so it raises ``ValueError``.
    """
    if not records:
        raise ValueError(f"append to session {session_id!r} got no records; expected at least one")
    for offset, record in enumerate(records, start=expected + 1):
        if record.seq != offset:
            raise ValueError(
                f"append to session {session_id!r}: record has seq {record.seq}, expected {offset} "
                f"(the log has {expected} inputs)"
            )
