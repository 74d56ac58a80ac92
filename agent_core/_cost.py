"""Money as the log holds it: whole nano-units (billionths of a currency unit), exact in every codec.

A model call's cost, the cost budgets and a budget pool's amounts are
integers of nano-units: 1 unit (a dollar, for the shipped pricing) is
``1_000_000_000``. Integers add exactly, hash the same everywhere, and fit
JSON and MessagePack alike (a float would not add exactly; a decimal string
would need parsing on every comparison). A price is rounded *up* to a whole
nano-unit, so a budget never counts less than was spent.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal, InvalidOperation

NANOS_PER_UNIT = 1_000_000_000
"""Nano-units in one currency unit: ``nanos("1") == NANOS_PER_UNIT``."""


def nanos(amount: str | int | Decimal) -> int:
    """``amount`` currency units as whole nano-units, rounded up: ``nanos("0.50") == 500_000_000``.

    Takes a decimal string, an int or a :class:`~decimal.Decimal` (never a
    float: ``0.1`` is not a tenth). Raises ``ValueError`` for anything else, a
    value that is not a finite number, or one below 0.
    """
    if isinstance(amount, bool) or not isinstance(amount, str | int | Decimal):
        raise ValueError(f"expected an amount as a decimal string, an int or a Decimal, got {amount!r}")
    try:
        value = Decimal(amount.strip() if isinstance(amount, str) else amount)
    except InvalidOperation:
        raise ValueError(f"expected an amount such as '0.50', got {amount!r}") from None
    if not value.is_finite() or value < 0:
        raise ValueError(f"expected a finite amount of 0 or more, got {amount!r}")
    return int((value * NANOS_PER_UNIT).to_integral_value(rounding=ROUND_CEILING))


def format_nanos(amount: int) -> str:
    """Nano-units as a decimal string of currency units, without trailing zeros past the cents:
    ``format_nanos(10_035_000) == "0.010035"``, ``format_nanos(2 * NANOS_PER_UNIT) == "2.00"``."""
    sign, amount = ("-", -amount) if amount < 0 else ("", amount)
    units, rest = divmod(amount, NANOS_PER_UNIT)
    fraction = f"{rest:09d}".rstrip("0").ljust(2, "0")
    return f"{sign}{units}.{fraction}"
