"""``agent-core worker`` in a process of its own and ``agent-core submit`` from the shell, on real servers."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from temporal_server import printed, start_workers, stop_workers

from effects import PostgresStore, decide, load_state
from effects.cli import main

AGENT_CORE = [sys.executable, "-m", "effects"]

pytestmark = pytest.mark.slow


@pytest.fixture
def worker(temporal_server, postgres_dsn: str) -> Iterator[list[str]]:
    """A demo worker process on a task queue of its own; yields the options `submit` needs to reach it."""
    queue = f"q-{uuid.uuid4().hex}"
    started = start_workers(1, temporal_server.address, postgres_dsn, queue)
    try:
        yield ["--temporal", temporal_server.address, "--task-queue", queue]
    finally:
        stop_workers(started)


def test_submit_sends_a_message_and_prints_the_answer(
    worker: list[str], postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["submit", "cli-1", "What is 17 * 23 + 4, and what time is it?", *worker, "--dsn", postgres_dsn])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("session cli-1: accepted as record 2\nassistant > 17 * 23 + 4 = 395, and it is ")
    assert out.endswith("turn completed\n")
    assert main(["replay", postgres_dsn, "cli-1", "--verify"]) == 0


def test_submit_prints_why_an_input_is_refused(worker: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "cli-2", "--approve", "call-9", *worker]) == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-core submit: session cli-2 refused the input: ")
    assert "[unknown-tool-call; valid now: " in err


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_worker_stops_cleanly_on_a_signal(temporal_server, postgres_dsn: str, stop: signal.Signals) -> None:
    """The worker shuts down through the SDK (its polls end before the interpreter does) and exits 0, quietly."""
    [worker] = start_workers(1, temporal_server.address, postgres_dsn, f"q-{uuid.uuid4().hex}")
    worker.send_signal(stop)
    worker.wait(timeout=30)
    assert (worker.returncode, printed(worker)) == (0, "")


def test_a_worker_names_a_namespace_the_server_does_not_have(temporal_server, postgres_dsn: str) -> None:
    done = subprocess.run(
        [*AGENT_CORE, "worker", "--temporal", temporal_server.address, "--namespace", "nowhere", "--dsn", postgres_dsn],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr  # stdout has the SDK's warning about the namespace, as a worker logs
    assert done.stderr == (
        f"agent-core worker: the Temporal server at {temporal_server.address} refused the call: Worker validation "
        "failed: Namespace nowhere was not found or otherwise could not be described: Namespace nowhere is not "
        "found. (refused)\n"
    )


def test_submit_needs_one_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "s", "hi", "--cancel"]) == 2
    assert capsys.readouterr().err == (
        "agent-core submit: expected exactly one of TEXT, --approve ID, --deny ID or --cancel\n"
    )


def test_submit_says_when_the_server_is_unreachable() -> None:
    """In a process of its own: a failed connect once aborted the interpreter at exit (exit 134)."""
    from postgres_server import free_port

    address = f"127.0.0.1:{free_port()}"
    done = subprocess.run([*AGENT_CORE, "submit", "s", "hi", "--temporal", address], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (69, "")
    assert done.stderr.startswith(f"agent-core submit: cannot reach the Temporal server at {address} (")
    assert done.stderr.endswith("; start one (for a try: `temporal server start-dev`) or pass --temporal HOST:PORT\n")
    assert done.stderr.count("\n") == 1, done.stderr


def test_submit_names_a_namespace_the_server_does_not_have(temporal_server) -> None:
    args = ["--temporal", temporal_server.address, "--namespace", "nowhere", "--timeout", "20"]
    done = subprocess.run([*AGENT_CORE, "submit", "s", "hi", *args], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"agent-core submit: the Temporal server at {temporal_server.address} refused the call: "
        "Namespace nowhere is not found. (NOT_FOUND)\n"
    )


def test_submit_gives_up_when_no_worker_takes_the_input(temporal_server, capsys: pytest.CaptureFixture[str]) -> None:
    queue = f"nobody-{uuid.uuid4().hex}"
    args = ["--temporal", temporal_server.address, "--task-queue", queue, "--timeout", "1"]
    assert main(["submit", f"t-{queue}", "hi", *args]) == 3
    assert capsys.readouterr().err == (
        f"agent-core submit: session t-{queue}: no answer within --timeout 1 s: the input was not accepted "
        f"(no worker took it); check that `agent-core worker` runs on task queue '{queue}', "
        "or wait longer with --timeout\n"
    )


def test_submit_with_no_worker_exits_within_its_timeout_every_time(temporal_server) -> None:
    """Twenty runs, each a process of its own, four at a time: the calls the timeout cuts short end through the
    SDK, so the interpreter exits at once (it used to hang in the SDK's runtime, or abort, about half the time).

    Each run ends within its --timeout plus ten seconds more than the same command that has nothing to wait for
    (a server that refuses the connection), started beside it: both from the moment their modules are imported
    until their process ended, so the machine's load weighs on both alike. A hang in the runtime never ends, so
    the margin is wide: a loaded machine with two cores once took 2.6 s where a second and a third were allowed."""
    from postgres_server import free_port

    timeout = 1.0
    for _ in range(5):  # four runs at once, each beside its own reference
        queues = [f"nobody-{uuid.uuid4().hex}" for _ in range(4)]
        runs = [["submit", f"t-{queue}", "hi", "--task-queue", queue, "--timeout", "1"] for queue in queues]
        pairs = [
            [[*run, "--temporal", temporal_server.address], [*run, "--temporal", f"127.0.0.1:{free_port()}"]]
            for run in runs
        ]
        ended = timed([command for pair in pairs for command in pair])
        for queue, (seconds, done), (reference, refused) in zip(queues, ended[::2], ended[1::2], strict=True):
            assert refused.returncode == 69, refused.stderr
            assert (done.returncode, done.stdout) == (3, ""), done.stderr
            assert done.stderr == (
                f"agent-core submit: session t-{queue}: no answer within --timeout 1 s: the input was not accepted "
                f"(no worker took it); check that `agent-core worker` runs on task queue '{queue}', "
                "or wait longer with --timeout\n"
            )
            assert seconds <= timeout + 10.0 + reference, (seconds, reference)


def test_submit_says_when_another_writer_appended_to_the_session(
    temporal_server, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An approval sent while a person denied the call in the log directly: the workflow fails the input."""
    queue = f"q-{uuid.uuid4().hex}"
    worker = start_workers(1, temporal_server.address, postgres_dsn, queue, agent="temporal._approving_agent:agent")
    try:
        options = ["--temporal", temporal_server.address, "--task-queue", queue, "--dsn", postgres_dsn]
        assert main(["submit", "cli-w", "refund order o-1", *options]) == 0
        assert capsys.readouterr().out.startswith("session cli-w: accepted as record 2\nawaiting approval: ")
        store = PostgresStore(postgres_dsn)
        [call_id] = load_state(store, "cli-w").turn.awaiting_ids  # type: ignore[union-attr]
        decide(store, "cli-w", call_id, approve=False, reason="not this one")
        store.close()
        done = subprocess.run(
            [*AGENT_CORE, "submit", "cli-w", "--approve", call_id, *options[:4], "--timeout", "60"],
            capture_output=True,
            text=True,
        )
    finally:
        stop_workers(worker)
    assert (done.returncode, done.stdout) == (4, ""), done.stderr
    assert done.stderr.startswith("agent-core submit: session cli-w: its workflow failed the input (")
    assert "the workflow failed: ValueError: session 'cli-w': expected the log to have " in done.stderr
    assert "another writer appended to it (run each session in one place only)); nothing more" in done.stderr
    assert done.stderr.endswith(
        "; nothing more was written by this command; see the log with `agent-core show --dsn URL cli-w`\n"
    )
    assert done.stderr.count("\n") == 1, done.stderr


def test_submit_gives_up_when_the_answer_does_not_come(
    worker: list[str], postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    from effects import PostgresStore

    with psycopg.connect(postgres_dsn, autocommit=True) as db:  # a store the workers do not write to
        if db.execute("SELECT 1 FROM pg_database WHERE datname = 'elsewhere'").fetchone() is None:
            db.execute("CREATE DATABASE elsewhere")
    elsewhere = postgres_dsn.rsplit("/", 1)[0] + "/elsewhere"
    PostgresStore(elsewhere).close()
    assert main(["submit", "cli-3", "hi", *worker, "--dsn", elsewhere, "--timeout", "2"]) == 3
    captured = capsys.readouterr()
    assert captured.out == "session cli-3: accepted as record 2\n"
    assert captured.err == (
        "agent-core submit: session cli-3: no answer within --timeout 2 s (the input is record 2; the workers go "
        f"on); follow it with `agent-core show {elsewhere} cli-3`, or wait longer with --timeout\n"
    )


def test_submit_refuses_a_timeout_that_is_not_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "s", "hi", "--timeout", "0"]) == 2
    assert capsys.readouterr().err == "agent-core submit: --timeout expects a number of seconds above 0, got 0\n"


# ``agent-core`` as its console script runs it, saying when its modules are imported (the monotonic clock is the
# system's, the same in every process).
_READY = (
    "import sys, time\n"
    "import effects.temporal\n"
    "from effects.cli import main\n"
    "print(time.monotonic(), file=sys.stderr, flush=True)\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def timed(commands: list[list[str]]) -> list[tuple[float, subprocess.CompletedProcess[str]]]:
    """Run ``agent-core COMMAND`` for each of ``commands`` at once: the seconds from its modules imported to the
    process ended, and the outcome (stderr without the line saying it was ready)."""
    results: dict[int, tuple[float, subprocess.CompletedProcess[str]]] = {}

    def one(index: int, command: list[str]) -> None:
        done = subprocess.run([sys.executable, "-c", _READY, *command], capture_output=True, text=True, timeout=120)
        ended = time.monotonic()
        ready, _, rest = done.stderr.partition("\n")
        results[index] = (
            ended - float(ready),
            subprocess.CompletedProcess(done.args, done.returncode, done.stdout, rest),
        )

    threads = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(commands)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [results[i] for i in range(len(commands))]
