"""What every HTTP model adapter shares: one ``complete`` (open a stream, fold it, check how it ended,
translate the SDK's failures), and closing its SDK client, as ``async with`` or ``aclose()``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, Self

from agent_core import LlmContext

from .._model import ModelError, ModelReply, TextSink
from ._errors import redact, translate
from ._finish import MALFORMED, finished, malformed
from ._limits import AnswerSize, StreamLimits, StreamTooLarge


class HttpModel:
    """Base of the adapters that hold an SDK client in ``self._client``.

    Use a model as ``async with model:`` (or call :meth:`aclose`) to close its
    HTTP connections; its ``repr`` shows the model and the base URL, never a key.
    A subclass says how to open its stream (:meth:`_open`) and fold it
    (:meth:`_fold`); failures, cut-offs and truncation are handled here, once.
    """

    model: str
    base_url: str
    _client: Any
    _sdk: Any
    _http: Any
    _origin: str
    _secrets: tuple[str, ...]
    _limits: StreamLimits
    _failures: tuple[type[Exception], ...]  # the SDK's base error and its HTTP library's TransportError
    _key_hint: ClassVar[str]
    _finish_field: ClassVar[str]
    _truncations: ClassVar[Mapping[str, str]]

    async def complete(self, context: LlmContext, on_text: TextSink) -> ModelReply:
        """Stream one answer for ``context``; raise :class:`~effects.ModelError` when it fails or is cut off."""
        request = self._request(context)
        try:
            stream = await self._open(request)
            async with stream:
                try:
                    reply = await self._fold(stream, on_text)
                except MALFORMED as error:
                    raise malformed(self._origin, error, self._secrets) from None
                content_type = str(stream.response.headers.get("content-type", ""))
        except StreamTooLarge as error:
            message = f"{self._origin} {error}. Not retryable: the server sent more than a model's answer can be."
            raise ModelError(redact(message, self._secrets), retryable=False) from None
        except self._failures as error:  # the SDK lets some read errors through
            raise translate(error, self._sdk, self._http, self._origin, self._secrets, self._key_hint) from None
        return finished(
            reply,
            origin=self._origin,
            field=self._finish_field,
            markers=self._truncations,
            content_type=content_type,
            on_text=on_text,
        )

    def _request(self, context: LlmContext) -> dict[str, Any]:
        raise NotImplementedError

    async def _open(self, request: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _fold(self, stream: AsyncIterator[Any], on_text: TextSink) -> ModelReply:
        raise NotImplementedError

    def _answer(self) -> AnswerSize:
        """A new count of the answer a fold keeps, against the adapter's :class:`StreamLimits`."""
        return AnswerSize(self._limits.answer_chars)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections; use the model as ``async with`` to do it on the way out."""
        await self._client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"
