"""What every HTTP model adapter shares: closing its SDK client, as ``async with`` or ``aclose()``."""

from __future__ import annotations

from typing import Any, Self


class HttpModel:
    """Base of the adapters that hold an SDK client in ``self._client``.

    Use a model as ``async with model:`` (or call :meth:`aclose`) to close its
    HTTP connections; its ``repr`` shows the model and the base URL, never a key.
    """

    model: str
    base_url: str
    _client: Any

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections; use the model as ``async with`` to do it on the way out."""
        await self._client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"
