"""Money: pricing model calls where their replies enter, and budget pools shared by sessions."""

from ._pricing import GenaiPrices, Pricing, default_pricing, model_name, priced

__all__ = ["GenaiPrices", "Pricing", "default_pricing", "model_name", "priced"]
