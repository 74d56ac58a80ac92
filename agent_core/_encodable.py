"""The values every codec can write: what an input may carry so that its state can be hashed, stored and replayed.

Every codec (JSON, MessagePack, the stores, readers in other languages)
writes text as UTF-8 and integers in 64 bits. Two kinds of Python value fit
neither, and once inside a state they break ``state_hash``, a store's commit
or an export that ``import`` then refuses:

* a **lone surrogate** (U+D800 to U+DFFF): what ``os.fsdecode`` makes of a
  file name byte that is not UTF-8 (``"report-\\udcff.txt"``), or what a JSON
  escape such as ``"\\udcff"`` decodes to;
* an **integer beyond 64 bits** (MessagePack writes -2**63 to 2**64-1).

The rule: text that comes from outside (a tool's result, a model's stream, a
person's message read from a terminal) has its lone surrogates replaced by
U+FFFD where it enters (:func:`replace_surrogates`; the runner and the
adapters do it), and ``transition`` refuses an input that still holds one, or
an integer beyond 64 bits, with ``InvalidInput`` code ``not-encodable`` naming
the field. Timestamps and durations are bounded more tightly, to what is a time
(see :data:`MAX_TIMESTAMP_MS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

MAX_TIMESTAMP_MS = 253_402_300_799_999
"""The last millisecond of the year 9999: every timestamp lies between 0 and this (ms since the epoch)."""

MAX_DURATION_MS = MAX_TIMESTAMP_MS
"""The longest duration an input may name (a deadline, a backoff, a tool's timeout, a server's retry-after),
in ms: added to any valid timestamp, it stays within 64 bits."""

MAX_COUNT = 2**63 - 1
"""The largest count a state keeps (tokens, steps): a signed 64-bit integer, what every reader can hold."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_msgpack = msgspec.msgpack.Encoder()


def replace_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (U+D800 to U+DFFF) replaced by U+FFFD, the replacement character.

    Free for ASCII text (returned as is). Use it on text from outside before it
    enters an input: a file name from ``os.listdir``, bytes decoded with
    ``surrogateescape``, a JSON escape of half a pair.
    """
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def unencodable(value: object) -> str | None:
    """``None`` when every codec can write ``value`` (an input, or any part of one); else what cannot be
    written and where, e.g. ``"a lone surrogate U+DCFF at $.content[9]"``."""
    try:
        _msgpack.encode(value)
    except (UnicodeEncodeError, OverflowError):
        return _find(value, "$") or "a value no codec can write"
    return None


def _find(value: object, path: str) -> str | None:
    """The first string with a lone surrogate or integer beyond 64 bits in ``value``, with its path."""
    if isinstance(value, str):
        match = _SURROGATE.search(value)
        if match is None:
            return None
        return f"a lone surrogate U+{ord(match.group()):04X} at {path}[{match.start()}]"
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if -(2**63) <= value < 2**64:
            return None
        return f"an integer beyond 64 bits at {path} ({shown_integer(value)})"
    if isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            found = _find(getattr(value, name), f"{path}.{name}")
            if found:
                return found
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _find(key, f"{path} (a key)") or _find(item, f"{path}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(value, tuple | list | frozenset):
        for index, item in enumerate(value):
            found = _find(item, f"{path}[{index}]")
            if found:
                return found
    return None


def shown_integer(value: int) -> str:
    """``value`` as text for a message; an integer beyond 64 bits as its size, never its digits (Python refuses
    to convert one of more than 4,300 digits to text, and it would fill the message)."""
    if -(2**63) <= value < 2**64:
        return str(value)
    return f"an integer of {value.bit_length()} bits"
