"""One contender of a long pair in a process of its own: the child's side of the conversation with the parent.

The parent (:mod:`.pair`) sends one command at a time and waits for the
reply, so the two children of a pair never run at the same time. Commands,
each answered ``("ok", value)``:

* ``("turn", n)``: quiet the process (and the disk, on SQLite), then run and
  time turn ``n`` (turns come in order from 0); the value is (nanoseconds of
  wall time, nanoseconds of the process's CPU time): the child runs nothing
  else, so its CPU time is the conversation's, its threads included.
* ``("bytes",)``: bytes on disk of the conversation's directory.
* ``("close",)``: close the conversation and check it did the workload's work.
* ``("resume",)``: quiet, then time reopening the stored conversation; the
  value is (nanoseconds, messages loaded).
* ``("exit",)``: stop (no reply).

The child opens its conversation in a temporary directory of its own and says
``("ok", "ready")`` first. Any failure is answered ``("error", traceback)``
and ends the child.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .catalogue import named
from .measure import check_work, timed_turn
from .workload import Contender, Conversation, disk_bytes


def quiet(contender: Contender) -> None:
    """What runs, untimed, before every timed sample: a full garbage collection and, on SQLite, ``os.sync()``.

    The collection makes nobody pay for the garbage of the sample before; the
    sync writes every dirty page of the machine back to the disk, so a sample
    starts on a quiet disk and no contender's commits wait behind the other's writes.
    """
    gc.collect()
    if contender.persistence == "sqlite":
        os.sync()


async def receive(connection: Connection) -> tuple[Any, ...]:
    """The next command, awaited on the event loop (background work of the conversation keeps running meanwhile)."""
    loop = asyncio.get_running_loop()
    readable: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not readable.done():
            readable.set_result(None)

    loop.add_reader(connection.fileno(), wake)
    try:
        await readable
    finally:
        loop.remove_reader(connection.fileno())
    command: tuple[Any, ...] = connection.recv()
    return command


class Server:
    """A contender's conversation answering the parent's commands."""

    def __init__(self, connection: Connection, contender: Contender, directory: Path) -> None:
        self.connection = connection
        self.contender = contender
        self.directory = directory
        self.turns = 0

    async def run(self) -> None:
        """Open the conversation, answer commands until ``close``, check the work, answer ``resume`` until ``exit``."""
        async with self.contender.open(self.directory) as conversation:
            self.connection.send(("ok", "ready"))
            while (command := await receive(self.connection)) != ("close",):
                self.connection.send(("ok", await self.open_command(conversation, command)))
        check_work(self.contender, conversation, self.turns)
        self.connection.send(("ok", None))
        while (command := await receive(self.connection)) != ("exit",):
            if command != ("resume",):
                raise ValueError(f"expected ('resume',) or ('exit',) after ('close',), got {command!r}")
            self.connection.send(("ok", await self.resume()))

    async def open_command(self, conversation: Conversation, command: tuple[Any, ...]) -> int | tuple[int, int]:
        """Answer ``turn`` (wall and CPU nanoseconds) or ``bytes`` while the conversation is open."""
        if command == ("bytes",):
            return disk_bytes(self.directory)
        if command != ("turn", self.turns):
            raise ValueError(f"expected ('turn', {self.turns}), ('bytes',) or ('close',), got {command!r}")
        quiet(self.contender)
        times = await timed_turn(conversation, self.turns)
        self.turns += 1
        return times

    async def resume(self) -> tuple[int, int]:
        """Time reopening the stored conversation as a new process would."""
        if self.contender.resume is None:
            raise ValueError(f"{self.contender.key} has no stored conversation to resume")
        quiet(self.contender)
        start = time.perf_counter_ns()
        messages = await self.contender.resume(self.directory)
        return time.perf_counter_ns() - start, messages


def serve(connection: Connection, key: str) -> None:
    """The child process: run the contender named ``key`` for the parent until ``exit`` or a failure."""
    try:
        with tempfile.TemporaryDirectory(prefix="peers-") as directory:
            asyncio.run(Server(connection, named(key), Path(directory)).run())
    except BaseException:
        try:
            connection.send(("error", traceback.format_exc()))
        except OSError:  # the parent is gone: nobody to tell but stderr
            traceback.print_exc()
        sys.exit(1)
    finally:
        connection.close()
