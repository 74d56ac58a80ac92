"""The tree of sessions under a session: the child sessions its agent tools started, and theirs, with how each stands."""

from __future__ import annotations

import msgspec

from agent_core import AgentState, DecodeError, phase

from ._errors import LogDamaged, ReplayDiverged
from ._load import load_state
from ._protocol import EventStore, sessions_page

DEFAULT_TREE_LIMIT = 200
"""How many sessions below the top one :func:`session_tree` reads by default."""


class SessionNode(msgspec.Struct, frozen=True, kw_only=True):
    """One session of a tree and the sessions below it.

    ``tool_call_id`` is the call of the parent session that runs it (empty for
    the top of the tree), ``inputs`` the length of its log, ``phase`` its phase
    (``idle``, ``thinking``, ``acting``, ``awaiting-approval``, ``retrying``; or why
    its log does not load: ``damaged at record 7``), ``outcome`` how its last turn
    ended (``completed``, ``failed``, ``cancelled``; empty before one ended) and
    ``reason`` why. ``left_off`` (top node only) counts the sessions under it
    that were not read, past the limit.
    """

    session_id: str
    tool_call_id: str = ""
    inputs: int = 0
    phase: str = ""
    outcome: str = ""
    reason: str = ""
    children: tuple[SessionNode, ...] = ()
    left_off: int = 0


def session_tree(store: EventStore, session_id: str, *, limit: int = DEFAULT_TREE_LIMIT) -> SessionNode:
    """``session_id`` and the child sessions below it, found by their ids (``<parent>:<tool call>``) and kept
    only when their ``config.lineage`` names their parent; at most ``limit`` of them are read, level by level,
    in the order of their ids (the order children are listed in).

    Raises :class:`~effects.SessionNotFound` for an unknown ``session_id``.
    """
    if limit < 0:
        raise ValueError(f"expected a limit of 0 or more sessions, got {limit}")
    top = _node(store, session_id, store.session(session_id).length)
    below, _ = sessions_page(store, prefix=f"{session_id}:")  # the sessions named below it, not the whole store
    below.sort(key=lambda info: (info.session_id.count(":"), info.session_id))  # parents first, then by id
    children: dict[str, list[SessionNode]] = {}
    found = {session_id}
    for info in below[:limit]:
        loaded = state_or_why(store, info.session_id)
        lineage = loaded.config.lineage if isinstance(loaded, AgentState) else None
        if lineage is None or lineage.parent_session_id not in found:
            continue  # a session named like a child but started otherwise (or below one that is not)
        found.add(info.session_id)
        node = _node(store, info.session_id, info.length, loaded, lineage.parent_tool_call_id)
        children.setdefault(lineage.parent_session_id, []).append(node)
    return msgspec.structs.replace(_grown(top, children), left_off=max(0, len(below) - limit))


def _grown(node: SessionNode, children: dict[str, list[SessionNode]]) -> SessionNode:
    below = tuple(_grown(child, children) for child in children.get(node.session_id, ()))
    return msgspec.structs.replace(node, children=below) if below else node


def _node(
    store: EventStore,
    session_id: str,
    length: int,
    loaded: AgentState | str | None = None,
    tool_call_id: str = "",
) -> SessionNode:
    if loaded is None:
        loaded = state_or_why(store, session_id)
    if isinstance(loaded, str):
        return SessionNode(session_id=session_id, tool_call_id=tool_call_id, inputs=length, phase=loaded)
    outcome = loaded.last_outcome
    return SessionNode(
        session_id=session_id,
        tool_call_id=tool_call_id,
        inputs=length,
        phase=str(phase(loaded).value),
        outcome=outcome.kind if outcome is not None else "",
        reason=outcome.reason if outcome is not None else "",
    )


def state_or_why(store: EventStore, session_id: str) -> AgentState | str:
    """The session's state; for a log that does not load, why, in a few words (``damaged at record 7``)."""
    try:
        return load_state(store, session_id)
    except LogDamaged as error:
        return f"damaged at record {error.record}"
    except ReplayDiverged as error:
        return f"diverges at record {error.record}"
    except DecodeError as error:
        return f"unreadable at record {error.record}"
