"""A process whose SQLite commit fails inside ``COMMIT``: the file may not grow (``RLIMIT_FSIZE``), as on a full disk.

Run by ``test_commit_failure.py``: ``python _commit_child.py DB SIZE``, SIZE the bytes of a message's content. The
rows of a small batch stay in SQLite's page cache until ``COMMIT`` writes them to the WAL, so the write that fails
is the commit's own; a batch larger than the cache (2 MiB) spills to the WAL before, and fails there. Prints, one per line, the
error the batch got, the error a further batch through the same journal got, and the length of the session
reopened once the file may grow again.
"""

from __future__ import annotations

import os
import resource
import signal
import sys

from agent_core import SessionStarted, UserMessageReceived
from effects import SessionJournal, SqliteStore, StoreUnavailable

START = 1_767_225_600_000


def main(path: str, size: int) -> None:
    store = SqliteStore(path)
    journal = SessionJournal(store, "s1")
    journal.append([SessionStarted(timestamp=START, session_id="s1")])
    # A file size limit the process may raise again; writing past it fails with EFBIG instead of a signal.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    grown = max(os.path.getsize(path), os.path.getsize(f"{path}-wal"))
    resource.setrlimit(resource.RLIMIT_FSIZE, (grown + 4096, hard))
    big = os.urandom(size // 2).hex()  # deflates to about half: still over the limit
    try:
        journal.append([UserMessageReceived(timestamp=START, message_id="m1", content=big)])
    except StoreUnavailable as error:
        print(error)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    try:
        journal.append([UserMessageReceived(timestamp=START, message_id="m2", content="again")])
    except RuntimeError as error:
        print(error)
    print(SessionJournal.open(store, "s1").seq)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
