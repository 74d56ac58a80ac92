"""Group commit: one writer thread per store commits the batches of every session together, and settles each
batch's :class:`PendingCommit` once it is durable."""

from ._group_writer import GroupWriter
from ._grouped_writes import GroupedWrites
from ._pending_commit import PendingCommit, settle

__all__ = ["GroupWriter", "GroupedWrites", "PendingCommit", "settle"]
