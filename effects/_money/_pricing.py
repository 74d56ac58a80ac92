"""Pricing a model call where its reply enters: the cost is logged with its usage, so replay needs no price table.

A pricing is any callable ``(model, usage) -> amount``: ``model`` the name the
adapter asked for (an adapter's ``model`` attribute; ``""`` when it has none,
as the scripted model), ``usage`` the call's :class:`~agent_core.Usage` with its
cache-read, cache-write and reasoning breakdowns, ``amount`` what the call cost
in currency units as a :class:`~decimal.Decimal`, an int or a decimal string,
or ``None`` when the pricing does not know the model. :class:`GenaiPrices`
prices from the ``genai-prices`` package's table (in US dollars). The amount is
logged in whole nano-units, rounded up (see :func:`agent_core.nanos`).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from agent_core import Usage, nanos

from .._extras import missing
from .._model import Model

Pricing = Callable[[str, Usage], Decimal | int | str | None]
"""Prices one model call: ``(model, usage) -> amount in currency units``, or ``None`` for a model it does not know."""


class GenaiPrices:
    """Prices calls from the ``genai-prices`` package's table, in US dollars (the ``prices`` extra).

    Cached-read, cache-write, reasoning and the other input and output tokens
    are priced apart, as the table prices them (tiers by prompt size
    included). ``provider_id`` (``"openai"``, ``"anthropic"``...) picks the
    provider; by default the table finds it from the model's name. The table
    is the snapshot the package shipped with: nothing is downloaded.
    A model the table does not know gets no price (``None``).
    """

    def __init__(self, provider_id: str | None = None) -> None:
        try:
            import genai_prices
        except ImportError as error:
            raise missing("pricing from genai-prices", "prices", error) from error
        self._prices: Any = genai_prices
        self.provider_id = provider_id

    def __call__(self, model: str, usage: Usage) -> Decimal | None:
        if not model:
            return None
        counts = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "output_reasoning_tokens": usage.reasoning_tokens,
        }
        reported = self._prices.Usage(**{name: count for name, count in counts.items() if count})
        try:
            price = self._prices.calc_price(reported, model, provider_id=self.provider_id)
        except LookupError:  # a model or provider the table does not list
            return None
        total: Decimal = price.total_price
        return total


def default_pricing() -> Pricing | None:
    """:class:`GenaiPrices` when the ``prices`` extra is installed, else ``None`` (calls are not priced)."""
    try:
        return GenaiPrices()
    except ImportError:
        return None


def model_name(model: Model) -> str:
    """The name a model adapter asks for (its ``model`` attribute), or ``""``."""
    name = getattr(model, "model", "")
    return name if isinstance(name, str) else ""


def priced(pricing: Pricing | None, model: str, usage: Usage) -> int | None:
    """What ``pricing`` says the call cost, in nano-units; ``None`` unpriced.

    An amount the pricing gives that is not one (a float, a negative value) is
    a bug in the pricing: ``ValueError`` naming what came.
    """
    if pricing is None:
        return None
    amount = pricing(model, usage)
    if amount is None:
        return None
    try:
        return nanos(amount)
    except ValueError as error:
        raise ValueError(f"the pricing gave {amount!r} for model {model!r}: {error}") from None
