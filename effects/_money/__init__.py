"""Money: pricing model calls where their replies enter, and budget pools shared by sessions."""

from ._pools import DEFAULT_HOLD_MS, BudgetPools, PoolAnswer, PoolTotals
from ._pricing import GenaiPrices, Pricing, default_pricing, model_name, priced

__all__ = [
    "DEFAULT_HOLD_MS",
    "BudgetPools",
    "GenaiPrices",
    "PoolAnswer",
    "PoolTotals",
    "Pricing",
    "default_pricing",
    "model_name",
    "priced",
]
