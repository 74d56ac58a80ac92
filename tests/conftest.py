"""Shared test configuration.

Hypothesis profiles, chosen with the ``HYPOTHESIS_PROFILE`` environment variable:

* ``ci`` (default): modest example counts, so the suite stays fast on two cores.
* ``dev``: ten times the examples, for a thorough run before a release:
  ``HYPOTHESIS_PROFILE=dev .venv/bin/pytest tests/test_properties.py``.

Tests scale their own counts from the active profile's ``max_examples``
(``settings().max_examples``), so ``dev`` deepens every property test.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=400,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
