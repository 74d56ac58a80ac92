"""The reducer benchmark's timings of the pure core: transitions per input kind and per session size, and the
projections the runner asks after every transition (effects_at, llm_context)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from _common import Timing, calls_per_run, loop, measure
from _session import CALLS, INPUTS_PER_TURN, fold, fresh_batches, session_started
from _session import turn as generated_turn

from agent_core import (
    AgentInput,
    AgentState,
    ContextWindowExpanded,
    ContinueReAct,
    HistoryToolCallsAdded,
    LlmCallFailed,
    ReActCancelled,
    ReActObserved,
    TimerFired,
    ToolCallApproved,
    ToolCallCompleted,
    ToolCallDenied,
    ToolCallRequest,
    effects_at,
    initial_state,
    llm_context,
    tag_of,
    transition,
)

SIMPLE = "tool-call-completed"


def label(state: AgentState, inp: AgentInput) -> str:
    """The input's tag, with the variant where one kind has a cheap and a costly case."""
    tag = tag_of(inp)
    if isinstance(inp, ReActObserved):
        return tag + (":continue" if isinstance(inp.observation, ContinueReAct) else ":complete")
    if isinstance(inp, ToolCallCompleted) and state.turn is not None and len(state.turn.open_call_ids) == 1:
        return tag + ":last"
    return tag


def scenarios(base: AgentState) -> tuple[list[AgentInput], dict[str, tuple[AgentState, AgentInput]]]:
    """The mixed turn that follows ``base``, and one (state, input) pair per input kind on ``base``."""
    number, t = base.turns, base.timestamp + 1
    turn = generated_turn(number, t)
    pairs: dict[str, tuple[AgentState, AgentInput]] = {"session-started": (initial_state(), session_started())}
    state, acting = base, base
    for inp in turn:
        pairs.setdefault(label(state, inp), (state, inp))
        state = transition(state, inp)
        if state.turn is not None and len(state.turn.open_call_ids) == CALLS and acting is base:
            acting = state
    thinking = transition(base, turn[0])
    failed = LlmCallFailed(timestamp=t + 1, error="overloaded", retryable=True)
    retrying = transition(thinking, failed)
    assert retrying.turn is not None and retrying.turn.retry_at is not None
    log = base.tool_call_log
    wanted = (log[len(log) - 30], log[len(log) - 40])
    ask = ContinueReAct(tool_calls={f"x{number}": ToolCallRequest(name="delete_file", parameters='{"p":"/x"}')})
    awaiting = transition(thinking, ReActObserved(timestamp=t + 1, called_llm_at=t, observation=ask))
    pairs |= {
        "llm-call-failed": (thinking, failed),
        "timer-fired": (retrying, TimerFired(timestamp=retrying.turn.retry_at)),
        "context-window-expanded": (thinking, ContextWindowExpanded(timestamp=t + 1)),
        "history-tool-calls-added": (thinking, HistoryToolCallsAdded(timestamp=t + 1, tool_call_ids=wanted)),
        "tool-call-approved": (awaiting, ToolCallApproved(timestamp=t + 2, tool_call_id=f"x{number}")),
        "tool-call-denied": (awaiting, ToolCallDenied(timestamp=t + 2, tool_call_id=f"x{number}", reason="no")),
        "re-act-cancelled": (acting, ReActCancelled(timestamp=acting.timestamp + 1, reason="stop")),
    }
    return turn, dict(sorted(pairs.items()))


def per_call(states: dict[str, tuple[Any, Any]], budget_ns: int, repeat: int) -> dict[str, Timing]:
    """Time ``function(state)`` for each named (function, state)."""
    out = {}
    for name, (function, state) in states.items():
        times = calls_per_run(partial(function, state), budget_ns)

        def run(function: Any = function, state: Any = state, times: int = times) -> None:
            for _ in range(times):
                function(state)

        out[name] = measure(run, times, repeat=repeat)
    return out


def transitions(sessions: dict[int, AgentState], budget_ns: int, repeat: int) -> dict[str, dict[int, Timing]]:
    """Per-transition timings at each session size: the mixed stream and each input kind.

    ``mixed stream`` folds turns never folded before in each run, so it walks
    paths of the persistent maps that are not in the processor's caches, as a
    replay or a live session does. ``mixed turn (repeated)`` folds the same turn
    again and again, like the per-kind rows: warm caches, the code's own cost.
    Each run takes about ``budget_ns``.
    """
    out: dict[str, dict[int, Timing]] = {}
    for size, base in sessions.items():
        turn, pairs = scenarios(base)
        turns = calls_per_run(partial(fold, base, turn), budget_ns)
        batches = iter(fresh_batches(base, turns, repeat + 1))

        def stream(base: AgentState = base, batches: Iterator[list[AgentInput]] = batches) -> None:
            fold(base, next(batches))

        out.setdefault("mixed stream", {})[size] = measure(stream, turns * INPUTS_PER_TURN, repeat=repeat)

        def repeated(base: AgentState = base, turn: list[AgentInput] = turn, turns: int = turns) -> None:
            for _ in range(turns):
                fold(base, turn)

        out.setdefault("mixed turn (repeated)", {})[size] = measure(repeated, turns * len(turn), repeat=repeat)
        for name, (state, inp) in pairs.items():
            times = calls_per_run(partial(transition, state, inp), budget_ns)
            out.setdefault(name, {})[size] = measure(loop(transition, state, inp, times), times, repeat=repeat)
    return out


def projections(sessions: dict[int, AgentState], budget_ns: int, repeat: int) -> dict[str, dict[int, Timing]]:
    """effects_at and llm_context per call at each session size."""
    out: dict[str, dict[int, Timing]] = {}
    for size, base in sessions.items():
        turn, _ = scenarios(base)
        thinking = fold(base, turn[:-3])  # after the last round's results: 12 calls in context
        acting = fold(base, turn[:6])  # three calls open
        named = {
            "effects_at (thinking)": (effects_at, thinking),
            "effects_at (acting)": (effects_at, acting),
            "llm_context (thinking)": (llm_context, thinking),
        }
        for name, timing in per_call(named, budget_ns, repeat).items():
            out.setdefault(name, {})[size] = timing
    return out
