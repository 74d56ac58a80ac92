"""``context_tokens``: the estimate of how many tokens a request holds, the same everywhere it is needed."""

from __future__ import annotations

import msgspec

from .._context import LlmContext

_encoder = msgspec.json.Encoder()

_SENT = ("system_prompt", "entries", "tools", "tools_enabled", "older_messages", "past_tool_calls", "output_schema")
# What a request sends: the context without the fields that only describe it (compaction's counts, the task).
# An empty output schema is not sent (free text), so it is omitted, as its default.
_Sent = msgspec.defstruct(
    "LlmContext",
    [(name, object) for name in _SENT[:-1]] + [("output_schema", str, "")],
    kw_only=True,
    omit_defaults=True,
)

CHARS_PER_TOKEN = 4
"""The estimate's ratio: about four characters of the request's JSON per token."""


def context_tokens(context: LlmContext) -> int:
    """About how many input tokens sending ``context`` costs: its JSON document's characters over four, rounded up.

    Providers count differently (and add their own framing); the compaction
    trigger also reads the tokens the last call reported, so the estimate
    matters most for what was added since. Deterministic, so it replays.
    """
    sent = _Sent(**{name: getattr(context, name) for name in _SENT})
    return -(-len(_encoder.encode(sent)) // CHARS_PER_TOKEN)


def text_tokens(text: str) -> int:
    """The same estimate for a piece of text."""
    return -(-len(text) // CHARS_PER_TOKEN)
