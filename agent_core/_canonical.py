"""``canonical_arguments``: one text for every spelling of the same JSON arguments.

Stuck detection asks "is this the same call again?". A model that repeats a
call rarely repeats its bytes: keys come in another order, spacing changes,
``1`` becomes ``1.0``. So calls are compared on a canonical form of their
arguments, defined here once:

* the text is parsed as JSON; objects get their keys sorted (a key repeated
  in one object keeps its last value, as the tool's parser sees it), strings
  are written with the fewest escapes, no whitespace anywhere;
* numbers are compared by their exact decimal value, as JSON Schema compares
  them: ``1``, ``1.0``, ``1e0`` and ``10e-1`` are one number; ``-0.0`` and
  ``0`` are one number; ``0.1`` and ``0.10000000000000001`` are two (no
  rounding to a binary float); integers of any size stay exact. An integral
  value is written as an integer when it has at most
  :data:`INTEGER_DIGITS` digits, else (``1e5000``) as a normalised decimal
  with an exponent, so a huge exponent costs nothing;
* ``true`` and ``false`` are never numbers, and ``NaN`` or ``Infinity``
  are not JSON: text that does not parse (or nests too deeply, or holds an
  integer literal too long to read) is its own canonical form, compared byte
  for byte. Such a text can never equal the canonical form of valid JSON,
  which is itself valid JSON.

The function is pure and total: it raises nothing, whatever text it is given.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

import msgspec

INTEGER_DIGITS = 4300
"""An integral number with at most this many digits is written as an integer (``100``), a longer one with an
exponent (``1E+5000``): either way, one value has one text. It is also the longest integer literal read (as
Python reads ints); a longer one makes its text not JSON here."""


def _number(literal: str) -> int | Decimal:
    """The one form of a JSON number written with a fraction or an exponent: an integer when integral and
    short, else its exact value with the trailing zeros moved into the exponent (no rounding)."""
    sign, digits, exponent = Decimal(literal).as_tuple()
    assert isinstance(exponent, int)  # JSON has no NaN or Infinity: the decoder never passes them
    end = len(digits)
    while end > 1 and digits[end - 1] == 0:
        end -= 1
    exponent += len(digits) - end
    digits = digits[:end]
    if digits == (0,):
        return 0
    if exponent >= 0 and len(digits) + exponent <= INTEGER_DIGITS:
        whole: int = int("".join(map(str, digits))) * 10**exponent
        return -whole if sign else whole
    return Decimal((sign, digits, exponent))


# Integer literals decode to ints as they are; the others go through _number as they are read, so the
# decoded value is already canonical and the encoder only sorts the keys.
_DECODER = msgspec.json.Decoder(float_hook=_number)
_ENCODER = msgspec.json.Encoder(decimal_format="number", order="sorted")


def canonical_arguments(text: str) -> str:
    """The canonical form of a tool call's JSON arguments (see the module's documentation).

    Two argument texts mean the same call exactly when their canonical forms are equal::

        >>> canonical_arguments('{ "b": 1.0, "a": [true, -0.0] }')
        '{"a":[true,0],"b":1}'
    """
    if len(text) <= _CACHED_CHARS:
        return _canonical_cached(text)
    return _canonical(text)


_CACHED_CHARS = 4096
"""Arguments up to this long are canonicalised once per process: stuck detection asks again for every call of a
turn at each model observation. At most 4,096 of them are kept (at most 16 MiB of text)."""


def _canonical(text: str) -> str:
    try:
        return _ENCODER.encode(_DECODER.decode(text)).decode()
    except (msgspec.DecodeError, RecursionError):  # not JSON, or nested too deep to read: compared as written
        return text


_canonical_cached = lru_cache(maxsize=4096)(_canonical)
