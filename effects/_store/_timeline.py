"""``timeline``: what each input of a stored session did, for people inspecting a session."""

from __future__ import annotations

import msgspec

from agent_core import (
    AgentInput,
    AgentState,
    LlmCallFailed,
    ReActObserved,
    TimerFired,
    ToolCallCompleted,
    ToolCallInputRequired,
    effects_at,
    phase,
    tag_of,
    tool_call_id_of,
)

from .._machine import reconcile
from ._integrity import Position, fold
from ._protocol import EventStore
from ._records import StoredInput
from ._replay import PROGRESS_EVERY, Progress
from ._summary import summarize

_MODEL_ANSWERS = frozenset(
    {
        "re-act-observed",
        "llm-call-failed",
        "context-window-expanded",
        "history-tool-calls-added",
        "context-compacted",
        "answer-rejected",
        "handed-off",
    }
)


class TimelineEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One input and its consequences.

    ``started`` are the effect keys the state derived after it and not before;
    of the keys it no longer derived, ``completed`` are those whose outcome
    this input was (the tool call's completion, the model's answer, the
    timer's firing), ``cancelled`` the others. ``duration_ms`` is how long the
    completed effect ran (from the input that derived it); ``usage`` the
    tokens of a model answer.
    """

    seq: int
    type: str
    timestamp: int
    phase_before: str
    phase_after: str
    started: tuple[str, ...] = ()
    completed: tuple[str, ...] = ()
    cancelled: tuple[str, ...] = ()
    duration_ms: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    summary: str = ""


def timeline(
    store: EventStore,
    session_id: str,
    *,
    start: int = 1,
    stop: int | None = None,
    progress: Progress | None = None,
) -> list[TimelineEntry]:
    """The entries of records ``start..stop`` (default: to the end), folding the session from its first record.

    Effects are found by reconciling ``effects_at`` of consecutive states, as
    the machine does. The hash chain is checked on the way. ``progress``
    receives ``(records done, records in all)`` now and then.
    """
    length = store.session(session_id).length
    last = length if stop is None else min(stop, length)
    entries: list[TimelineEntry] = []
    since: dict[str, int] = {}  # effect key -> timestamp of the input that derived it

    def on_step(record: StoredInput, inp: AgentInput, before: AgentState, after: AgentState) -> None:
        entry = timeline_entry(record.seq, inp, before, after, since)
        if record.seq >= start:
            entries.append(entry)
        if progress is not None and record.seq % PROGRESS_EVERY == 0:
            progress(record.seq, last)

    origin = Position.start()
    fold(session_id, store.read(session_id, 1, last), origin, last, digests=False, on_step=on_step)
    if progress is not None:
        progress(last, last)
    return entries


def timeline_entry(
    seq: int, inp: AgentInput, before: AgentState, after: AgentState, since: dict[str, int]
) -> TimelineEntry:
    """The entry of record ``seq``; ``since`` (effect key -> when it started) is kept up to date across calls."""
    plan = reconcile(effects_at(before), effects_at(after))
    completed = tuple(key for key in plan.cancel if answered_by(inp, key))
    cancelled = tuple(key for key in plan.cancel if key not in completed)
    duration = max((inp.timestamp - since[key] for key in completed if key in since), default=None)
    for key in plan.cancel:
        since.pop(key, None)
    for key in plan.start:
        since[key] = inp.timestamp
    usage = inp.usage if isinstance(inp, ReActObserved) else None
    if isinstance(inp, ReActObserved):
        duration = inp.timestamp - inp.called_llm_at
    return TimelineEntry(
        seq=seq,
        type=tag_of(inp),
        timestamp=inp.timestamp,
        phase_before=phase(before).value,
        phase_after=phase(after).value,
        started=plan.start,
        completed=completed,
        cancelled=cancelled,
        duration_ms=duration,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        summary=summarize(inp),
    )


def answered_by(inp: AgentInput, key: str) -> bool:
    """Whether ``inp`` is the outcome of the effect ``key`` (so the key ended, rather than being cancelled)."""
    if isinstance(inp, ToolCallCompleted | ToolCallInputRequired):  # a result, or a question that ends the attempt
        return key.startswith("call-tool:") and tool_call_id_of(key) == inp.tool_call_id
    if isinstance(inp, TimerFired):
        return key.startswith("wait-until:")
    if isinstance(inp, LlmCallFailed) or tag_of(inp) in _MODEL_ANSWERS:
        return key.startswith("call-llm:")
    return False
