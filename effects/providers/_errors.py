"""Turning a provider's failure into a :class:`~effects.ModelError` the reducer can retry or not.

Retryable: rate limits (429), request timeouts (408), conflicts (409), server
errors (5xx, Anthropic's 529 overload), timeouts, dropped connections and
errors reported in the middle of a stream. Not retryable: authentication
(401/403), bad requests (400/404/422), and anything that says the context is
too long, whatever its status. The provider's body is kept (compact JSON);
every configured secret is removed from the message and the body.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .._model import ModelError

_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_RETRYABLE_STREAM_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "server_error", "timeout_error", "rate_limit_exceeded"}
)
_CONTEXT_LENGTH = re.compile(
    r"context[_ ]length|context[_ ]window|exceed_context_size|prompt is too long|maximum context|too many tokens",
    re.IGNORECASE,
)
_DETAIL_CHARS = 300
_BODY_CHARS = 2000


def body_text(body: object, secrets: Sequence[str]) -> str:
    """The provider's error body as compact text, secrets removed."""
    if body is None:
        return ""
    text = body if isinstance(body, str) else json.dumps(body, separators=(",", ":"), default=str)
    return redact(text, secrets)


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every non-empty secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def retry_after_ms(headers: Mapping[str, str] | None) -> int | None:
    """The server's wait hint in ms: ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        with_ms = _number(raw_ms)
        if with_ms is not None:
            return math.ceil(with_ms)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return math.ceil(seconds * 1000)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0, math.ceil((when.timestamp() - time.time()) * 1000))


def _number(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def status_error(
    origin: str, status: int, body: object, headers: Mapping[str, str] | None, secrets: Sequence[str], key_hint: str
) -> ModelError:
    """The error for an HTTP error status, or for an error event inside a stream (whose status is 2xx).

    ``origin`` names the call, e.g. ``"Anthropic request to https://..."``.
    """
    text = body_text(body, secrets)
    detail = (_detail(body, secrets) or text[:_DETAIL_CHARS] or "(empty body)").rstrip().rstrip(".")
    wait = retry_after_ms(headers)
    if _CONTEXT_LENGTH.search(text):
        retryable = False
        advice = (
            "Not retryable: the conversation is longer than the model's context window; "
            "use a compaction policy (AgentConfig.compaction), a smaller initial_context_window or a model with a "
            "larger window."
        )
    elif status < 300:
        retryable = _error_type(body) in _RETRYABLE_STREAM_TYPES or _error_type(body) == ""
        advice = "Retryable." if retryable else "Not retryable."
    elif status in (401, 403):
        retryable = False
        advice = f"Not retryable: check the API key ({key_hint}) and its permissions."
    elif status == 404:
        retryable = False
        advice = "Not retryable: check the model name and the base URL."
    elif status in _RETRYABLE_STATUSES or status >= 500:
        retryable = True
        advice = f"Retryable; the server asks to wait {wait} ms." if wait is not None else "Retryable."
    else:
        retryable = False
        advice = "Not retryable: the server rejected the request (its body says why)."
    how = "mid-stream" if status < 300 else f"with HTTP {status}"
    # The body goes in the message too: the runner logs the message (``llm-call-failed``), not the error object.
    shown = text if len(text) <= _BODY_CHARS else text[:_BODY_CHARS] + "..."
    message = redact(f"{origin} failed {how}: {detail}. {advice} Body: {shown or '(empty)'}", secrets)
    too_long = _CONTEXT_LENGTH.search(text) is not None
    return ModelError(
        message, retryable=retryable, retry_after_ms=wait, status=status, body=text, context_too_long=too_long
    )


def translate(error: Exception, sdk: Any, http: Any, origin: str, secrets: Sequence[str], key_hint: str) -> ModelError:
    """The :class:`~effects.ModelError` for an exception of a provider SDK (``sdk``) or its HTTP library (``http``).

    Both official SDKs share the class names: ``APIConnectionError``,
    ``APITimeoutError``, ``APIStatusError`` (an Anthropic ``error`` event inside a
    stream has its 200 status) and ``APIError`` (an OpenAI error object inside a stream).
    """
    if isinstance(error, (sdk.APIConnectionError, http.TransportError)):
        timed_out = isinstance(error, (sdk.APITimeoutError, http.TimeoutException))
        return transport_error(origin, timed_out=timed_out, secrets=secrets)
    if isinstance(error, sdk.APIStatusError):
        body = error.body if error.status_code < 300 else response_body(error.response, error.body)
        return status_error(origin, error.status_code, body, error.response.headers, secrets, key_hint)
    if isinstance(error, sdk.APIError):
        return status_error(origin, 200, error.body, None, secrets, key_hint)
    return ModelError(redact(f"{origin} failed: {error}", secrets), retryable=False)


def transport_error(origin: str, *, timed_out: bool, secrets: Sequence[str]) -> ModelError:
    """The error for a timeout or a connection that failed or dropped: always retryable."""
    if timed_out:
        message = f"{origin} timed out. Retryable; pass a larger timeout=... if the model is slow."
    else:
        message = f"{origin} could not connect or was cut off. Retryable; check the base URL and that the server runs."
    return ModelError(redact(message, secrets), retryable=True)


def _error_type(body: object) -> str:
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        kind = error.get("type") or error.get("code") or ""
        return str(kind)
    return ""


def _detail(body: object, secrets: Sequence[str]) -> str:
    """The human message inside the usual ``{"error": {"message": ...}}`` shapes."""
    if not isinstance(body, dict):
        return ""
    error = body.get("error", body)
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str):
        return ""
    return redact(message, secrets)[:_DETAIL_CHARS]


def response_body(response: Any, parsed: object) -> object:
    """The whole error body the server sent (JSON decoded when it is JSON), else what the SDK parsed."""
    try:
        text = response.text
    except Exception:  # the body was not read (a closed stream); the SDK's parse is all there is
        return parsed
    if not isinstance(text, str) or not text:
        return parsed
    try:
        decoded: object = json.loads(text)
    except ValueError:
        return text
    return decoded
