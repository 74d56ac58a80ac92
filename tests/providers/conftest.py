"""Adapter tests: the real SDKs talk to a scripted server on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anthropic  # noqa: F401  (imported at collection: the SDKs take seconds to import the first time,
import openai  # noqa: F401   which would otherwise land on whichever test builds an adapter first)
import pytest

from effects.testing import FakeProviderServer

RECORDED = Path(__file__).parent / "recorded"


@pytest.fixture
def anyio_backend() -> str:
    """The SDKs' async clients run on asyncio."""
    return "asyncio"


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    """A fresh scripted provider for each test."""
    with FakeProviderServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys and URLs of the developer's shell must not leak into the tests."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def recorded(name: str) -> str:
    """A recorded SSE transcript from ``recorded/``."""
    return (RECORDED / name).read_text()
