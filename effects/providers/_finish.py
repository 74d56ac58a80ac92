"""What the end of a provider's stream means: a finished answer, a truncated one, or a failure.

* No finish reason (OpenAI's ``finish_reason``, Anthropic's ``stop_reason``):
  the stream was cut off before the model finished; a retryable
  :class:`~effects.ModelError`, never a completed answer. When the server did
  not answer with an event stream at all (a plain JSON body on a 200), the
  error says so and is not retryable.
* An answer the provider truncated (the output token limit, a content filter)
  completes, with a visible marker appended to its text (and streamed), e.g.
  ``[answer cut off: the model reached its output token limit (finish_reason: length)]``.
* A chunk that is not JSON or not of the provider's shape is a retryable
  failure naming the provider, the URL and what was wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated

import msgspec

from agent_core import TEXT_MARKER, ProviderItem

from .._model import ModelError, ModelReply, TextSink
from ._errors import redact

Tokens = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
"""A token count a provider reports for one call: a non-negative int (``null`` is read as 0 by the folds)."""

OUTPUT_LIMIT = "[answer cut off: the model reached its output token limit ({reason})]"
"""Appended to an answer that stopped at the output token limit; ``{reason}`` names the provider's field and value."""

CONTENT_FILTER = "[answer stopped by the provider's content filter ({reason})]"
"""Appended to an answer that a provider's safety filter stopped (or that the model refused)."""

MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError)
"""What reading a malformed stream raises: the SDK's JSON parse (deep nesting included), and the folds'
shape checks (msgspec)."""


def finished(
    reply: ModelReply,
    *,
    origin: str,
    field: str,
    markers: Mapping[str, str],
    content_type: str,
    on_text: TextSink,
) -> ModelReply:
    """``reply`` checked at the stream's end: raise for a cut-off or non-stream answer, mark a truncated one."""
    reason = reply.finish_reason
    if not reason:
        if "event-stream" not in content_type:
            raise ModelError(
                f"{origin} answered HTTP 200 with content-type {content_type or '(none)'} instead of an event "
                "stream. Not retryable: the server does not stream this request; check the base URL and that the "
                "server supports streaming (stream: true).",
                retryable=False,
            )
        raise ModelError(
            f"{origin} was cut off: the stream ended without a {field}, so the answer is incomplete. "
            "Retryable; if it repeats, check proxies and the server's timeouts.",
            retryable=True,
        )
    marker = markers.get(reason)
    if marker is None:
        return reply
    note = marker.format(reason=f"{field}: {reason}")
    note = f"\n\n{note}" if reply.text else note
    on_text(note)
    return msgspec.structs.replace(reply, text=reply.text + note, items=_noted(reply.items, len(note)))


def _noted(items: tuple[ProviderItem, ...], chars: int) -> tuple[ProviderItem, ...]:
    """``items`` with their text markers also covering a note of ``chars`` characters appended to the text: the
    last text marker grows, or a new one stands at the end."""
    if not items:
        return items
    for position in range(len(items) - 1, -1, -1):
        item = items[position]
        if item.kind == TEXT_MARKER:
            grown = msgspec.structs.replace(item, chars=item.chars + chars)
            return (*items[:position], grown, *items[position + 1 :])
    first = items[0]
    return (*items, ProviderItem(kind=TEXT_MARKER, provider=first.provider, model=first.model, chars=chars))


def malformed(origin: str, error: Exception, secrets: Sequence[str]) -> ModelError:
    """The failure for a stream whose chunk is not JSON or not of the provider's shape."""
    if isinstance(error, json.JSONDecodeError):
        detail = f"a line is not JSON ({error.msg} at column {error.colno})"
    elif isinstance(error, RecursionError):
        detail = "a line is nested too deeply to be a chunk"
    elif isinstance(error, msgspec.ValidationError):
        detail = f"a chunk has the wrong shape ({error})"
    else:
        detail = f"a chunk could not be read ({type(error).__name__}: {error})"
    message = (
        f"{origin} sent a malformed stream: {detail}. "
        "Retryable; if it repeats, the server does not speak this provider's streaming format."
    )
    return ModelError(redact(message, secrets), retryable=True)
