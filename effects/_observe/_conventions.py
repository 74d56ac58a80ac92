"""Which OpenTelemetry GenAI conventions to follow, the ids of a session's trace, and how outcomes are named.

The GenAI semantic conventions are still in development. By default spans
carry the current attribute names plus the deprecated ``gen_ai.system`` (for
backends still reading v1.36); with ``gen_ai_latest_experimental`` in
``OTEL_SEMCONV_STABILITY_OPT_IN`` only the current names are sent. Message
content (prompts, answers, tool arguments and results) is recorded only when
asked for: ``capture_content=True`` or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

import msgspec

LATEST_OPT_IN = "gen_ai_latest_experimental"
"""The ``OTEL_SEMCONV_STABILITY_OPT_IN`` value that drops attributes older conventions used."""

CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

_TIMEOUT_MARK = "did not finish within its timeout"


class Conventions(msgspec.Struct, frozen=True, kw_only=True):
    """What the spans say about the agent. ``provider`` and ``model`` are not in the log: pass them.

    ``provider`` is ``gen_ai.provider.name`` (``openai``, ``anthropic``...),
    ``model`` the requested model (span names become ``chat {model}``),
    ``agent_name`` ``gen_ai.agent.name``.
    """

    agent_name: str = "agent-core"
    provider: str = "agent-core"
    model: str = ""
    capture_content: bool = False
    latest_only: bool = False

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        agent_name: str = "agent-core",
        provider: str = "agent-core",
        model: str = "",
        capture_content: bool | None = None,
    ) -> Conventions:
        """Read ``OTEL_SEMCONV_STABILITY_OPT_IN`` and the content-capture variable (``environ``: default ``os.environ``)."""
        env = os.environ if environ is None else environ
        opt_in = {part.strip() for part in env.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(",")}
        if capture_content is None:
            capture_content = env.get(CAPTURE_CONTENT_VARIABLE, "").strip().lower() in {"true", "1", "yes"}
        return cls(
            agent_name=agent_name,
            provider=provider,
            model=model,
            capture_content=capture_content,
            latest_only=LATEST_OPT_IN in opt_in,
        )


def trace_id_of(session_id: str) -> int:
    """The 128-bit trace id of a session: the same in every process, so a resumed session continues its trace."""
    return _nonzero(hashlib.sha256(b"agent-core trace\0" + session_id.encode()).digest()[:16])


def span_id_of(session_id: str, key: str) -> int:
    """The 64-bit span id of an effect key (or ``turn:<n>``) within a session."""
    return _nonzero(hashlib.sha256(f"agent-core span\0{session_id}\0{key}".encode()).digest()[:8])


def _nonzero(digest: bytes) -> int:
    return int.from_bytes(digest, "big") or 1


def tool_failure_kind(error: str) -> str:
    """``timeout`` for a tool that ran out of time, ``error`` for any other failure result."""
    return "timeout" if _TIMEOUT_MARK in error else "error"
