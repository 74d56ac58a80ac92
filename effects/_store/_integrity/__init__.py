"""The log's integrity: the hash chain over records, turn digests, folding records with every check, and the
checks a store applies to a batch before writing it."""

from ._chain import Encoded, chain, continuing, fold_inputs
from ._checks import JOB_ERRORS, Stored, check_continues, check_job, check_lease, check_snapshot
from ._digest import turn_digest
from ._fold import Position, Step, chained, checked_inputs, fold

__all__ = [
    "JOB_ERRORS",
    "Encoded",
    "Position",
    "Step",
    "Stored",
    "chain",
    "chained",
    "check_continues",
    "check_job",
    "check_lease",
    "check_snapshot",
    "checked_inputs",
    "continuing",
    "fold",
    "fold_inputs",
    "turn_digest",
]
