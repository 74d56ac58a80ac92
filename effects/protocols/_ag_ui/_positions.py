"""Positions in a session's AG-UI stream: which record an event came from, which of its events, and a check.

``12.3@9f86d081`` is the fourth event (index 3) of record 12, whose chain hash
begins with ``9f86d081``; ``12.3+40@9f86d081`` adds that 40 characters of the
message being streamed after that event were sent too (text the model streams
is not in the log until its message completes). The hash ties a position to
one log: a position from another session, or from a history that a fork or a
refused batch replaced, is refused instead of being misread.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FORM = re.compile(r"(\d{1,18})\.(\d{1,9})(?:\+(\d{1,12}))?@([0-9a-f]{8})")

TAG_CHARS = 8
"""Hex digits of the record's chain hash a position carries."""


class Position(NamedTuple):
    """Event number ``event`` of record ``seq`` (and ``chars`` characters of streamed text after it); ``tag``
    checks that the position is of this log."""

    seq: int
    event: int
    chars: int = 0
    tag: str = ""

    def __str__(self) -> str:
        text = f"{self.seq}.{self.event}"
        if self.chars:
            text += f"+{self.chars}"
        return f"{text}@{self.tag}"


def tag_of(chain_hash: bytes) -> str:
    """The tag a position of a record with ``chain_hash`` carries."""
    return chain_hash.hex()[:TAG_CHARS]


def parse_position(text: str) -> Position:
    """A position from a client (``Last-Event-ID`` or ``forwardedProps.after``), or ``ValueError`` saying what was expected."""
    found = _FORM.fullmatch(text.strip())
    if found is None:
        raise ValueError(
            f"expected a stream position as this server sends it (such as '12.3@9f86d081', from an event's "
            f"id or metadata), got {text[:80]!r}"
        )
    seq, event, chars, tag = found.groups()
    return Position(int(seq), int(event), int(chars or 0), tag)
