"""Machine tests run under asyncio and under trio (anyio's pytest plugin)."""

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``@pytest.mark.anyio`` test in this folder runs once per backend."""
    return str(request.param)
