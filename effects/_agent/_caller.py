"""The session whose tool call is running: what a tool that starts a child session needs to know.

``call_tool`` keeps a :class:`CallingSession` in its effect run while the
toolbox runs the call (so it is there for every task the tool starts, which
belong to the same run): a tool reads the :class:`Caller` with
:func:`calling_session`, made the first time one asks (most tools never do:
a tool call makes no caller, and sets no context variable).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import msgspec

from agent_core import AgentInput, AgentState, ChildSpent, Spend

from .._machine import Dispatch, EffectRun, MachineEvent, current_run
from .._money import BudgetPools
from .._store import EventStore
from ._context import EffectContext

NOTHING_SPENT = Spend()


def _nowhere(event: MachineEvent) -> None:
    """Publishes nothing: a caller with no subscribers to reach."""


class Caller(msgspec.Struct, frozen=True):
    """The calling session's id, the id of the root of its tree, the store its log is kept in (``None``:
    a session without a store), and whether the call is still wanted: ``open()`` is false once the calling
    session closed the call (its turn was cancelled, or ended), or the session that called *it* closed its own.

    ``report(spend)`` tells the calling session what the child this call runs has spent so far, in all (a
    ``child-spent`` input, applied before it returns; refused, and ``False``, once the call is closed);
    ``reported`` is what the call had reported when it started (a call resumed after a crash).
    ``budget_pool`` and ``pools``: the calling session's budget pool and where it is kept (``""``/``None``:
    none), which a child without a pool of its own draws from.
    ``publish`` hands an event to the calling session's subscribers (a child session's, wrapped with its path).

    ``depth`` is the calling session's depth in its tree (0: a top-level session). (A frozen Struct: every
    tool call makes one, and a frozen dataclass costs ten times as much to make.)"""

    session_id: str
    root_session_id: str
    store: EventStore | None
    open: Callable[[], bool]
    report: Callable[[Spend], Awaitable[bool]]
    reported: Spend = NOTHING_SPENT
    budget_pool: str = ""
    pools: BudgetPools | None = None
    publish: Callable[[MachineEvent], None] = _nowhere
    depth: int = 0


class CallingSession:
    """The session that called a running tool call: ``with`` it around the toolbox's call, the call's effect run
    keeps it (``run.local``), and :func:`calling_session` finds it there. The :class:`Caller` is made the first
    time a tool asks for it. Outside a machine's run (a Temporal activity, where an agent tool's call runs as a
    child workflow instead) there is no run to keep it, and no tool asks."""

    __slots__ = ("_caller", "_run", "ctx", "dispatch", "state", "tool_call_id")

    def __init__(
        self, ctx: EffectContext, dispatch: Dispatch[AgentInput], state: AgentState, tool_call_id: str
    ) -> None:
        self.ctx, self.dispatch, self.state, self.tool_call_id = ctx, dispatch, state, tool_call_id
        self._caller: Caller | None = None
        self._run: EffectRun[Any] | None = None

    def __enter__(self) -> None:
        self._run = run = current_run()
        if run is not None:
            run.local = self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._run is not None:
            self._run.local = None

    def caller(self) -> Caller:
        """The calling session, as :class:`Caller` describes it."""
        if self._caller is None:
            state, ctx = self.state, self.ctx
            # A fork is kept under a new id while its copied session-started keeps the old one: its children are
            # its own.
            own = ctx.stored_id or state.session_id
            lineage = state.config.lineage
            record = state.tool_calls.get(self.tool_call_id)
            self._caller = Caller(
                own,
                lineage.root_session_id if lineage else own,
                ctx.store,
                self.open,
                self.report,
                reported=(record.child_spent if record is not None else None) or NOTHING_SPENT,
                budget_pool=state.config.budget_pool,
                pools=ctx.budget_pools,
                publish=self.dispatch.emit,
                depth=lineage.depth if lineage else 0,
            )
        return self._caller

    def open(self) -> bool:
        """Whether the call is still wanted (see :attr:`Caller.open`)."""
        return self.ctx.call_open(self.tool_call_id)

    async def report(self, spend: Spend) -> bool:
        """Tell the calling session what the call's child has spent so far (see :attr:`Caller.report`)."""
        spent = ChildSpent(timestamp=self.ctx.stamp(), tool_call_id=self.tool_call_id, spent=spend)
        return await self.dispatch.dispatch_committed(spent)


def calling_session() -> Caller | None:
    """The session whose tool call is running here (the call's own effect run, or a task it started); ``None``
    outside a tool call."""
    run = current_run()
    local = run.local if run is not None else None
    return local.caller() if isinstance(local, CallingSession) else None
