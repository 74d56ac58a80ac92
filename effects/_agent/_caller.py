"""The session whose tool call is running: what a tool that starts a child session needs to know.

``call_tool`` sets it around each call, on the effect's own task (and so for
every task the tool starts): a tool reads it with :func:`calling_session`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar, Token
from types import TracebackType

import msgspec

from agent_core import Spend

from .._machine import MachineEvent
from .._money import BudgetPools
from .._store import EventStore

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


_CALLER: ContextVar[Caller | None] = ContextVar("effects.calling_session", default=None)


class calling:  # lower case: used as ``with calling(caller):``
    """``caller`` is the calling session while the block runs. (A class, not ``@contextmanager``: every tool
    call enters one.)"""

    __slots__ = ("_caller", "_token")

    def __init__(self, caller: Caller) -> None:
        self._caller = caller

    def __enter__(self) -> None:
        self._token: Token[Caller | None] = _CALLER.set(self._caller)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        _CALLER.reset(self._token)


def calling_session() -> Caller | None:
    """The session whose tool call is running here; ``None`` outside a tool call."""
    return _CALLER.get()
