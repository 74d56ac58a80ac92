"""A reply's provider items as the log keeps them: markers naming what the runner logs, within the bounds.

An adapter marks its reply's tool calls by the provider's ids and its text by
character counts; the log names the calls by the ids the runner gives them
(made unique in the session) and the text by the message it completed. Items
of a reply that has neither text nor tool calls have nothing to stand with in
the conversation and are not kept (no provider needs them back: a reasoning
item must precede what followed it, thinking the tool use it led to).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from agent_core import (
    MAX_ITEM_CHARS,
    MAX_REPLY_ITEM_CHARS,
    MAX_REPLY_ITEMS,
    TEXT_MARKER,
    TOOL_CALL_MARKER,
    ProviderItem,
    replace_surrogates,
)

from .._model import ModelError, ModelReply

MARKERS = (TEXT_MARKER, TOOL_CALL_MARKER)


def logged_items(reply: ModelReply, call_ids: Sequence[str], message_id: str) -> tuple[ProviderItem, ...]:
    """The items to log with ``reply``'s observation (``call_ids``: its calls as logged, in order; ``message_id``:
    the message holding its text). Raises :class:`ModelError` (not retryable) for items over the bounds or
    markers that do not match the reply."""
    items = reply.items
    if not items or all(item.kind in MARKERS for item in items) or not (reply.text or reply.tool_calls):
        return ()
    _bounded(items)
    calls = iter(call_ids)
    kept: list[ProviderItem] = []
    marked_calls = text_chars = 0
    for item in items:
        if item.kind == TOOL_CALL_MARKER:
            marked_calls += 1
            item = msgspec.structs.replace(item, ref=next(calls, ""))
        elif item.kind == TEXT_MARKER:
            text_chars += item.chars
            if not item.chars:
                continue  # an empty part of the text stands nowhere
            item = msgspec.structs.replace(item, ref=message_id)
        kept.append(item)
    if marked_calls != len(reply.tool_calls) or text_chars != len(reply.text):
        raise ModelError(
            f"the model adapter's reply marks {marked_calls} tool calls and {text_chars} characters of text among "
            f"its provider items, but has {len(reply.tool_calls)} tool calls and {len(reply.text)} characters; "
            "expected markers covering both exactly. Not retryable: a bug in the adapter.",
            retryable=False,
        )
    return tuple(kept)


def _bounded(items: tuple[ProviderItem, ...]) -> None:
    """Raise when the items are more, or larger, than a log keeps (never cut: a cut item is refused later), or
    hold text no codec can write (never repaired: a repaired item is refused later)."""
    for item in items:
        for text in (item.kind, item.provider, item.model, item.data, item.ref):
            if replace_surrogates(text) != text:
                raise ModelError(
                    f"the model adapter's reply carries a {item.kind!r} item holding a lone surrogate, which no codec "
                    "can write; expected an item's data as JSON with such a character escaped. Not retryable: a bug "
                    "in the adapter.",
                    retryable=False,
                )
    advice = (
        "Not retryable: lower what the model may spend thinking (budget_tokens, reasoning effort) or its output "
        "limit, so its reply fits."
    )
    if len(items) > MAX_REPLY_ITEMS:
        raise ModelError(
            f"the model's reply carries {len(items)} provider items; at most {MAX_REPLY_ITEMS} are kept. {advice}",
            retryable=False,
        )
    total = 0
    for item in items:
        size = len(item.data)
        if size > MAX_ITEM_CHARS:
            raise ModelError(
                f"the model's reply carries a {item.kind} item of {size} characters; at most {MAX_ITEM_CHARS} are "
                f"kept per item. {advice}",
                retryable=False,
            )
        total += size
    if total > MAX_REPLY_ITEM_CHARS:
        raise ModelError(
            f"the model's reply carries {total} characters of provider items; at most {MAX_REPLY_ITEM_CHARS} are "
            f"kept per reply. {advice}",
            retryable=False,
        )
