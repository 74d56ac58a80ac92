"""``agent-core worker`` in a process of its own and ``agent-core submit`` from the shell, on real servers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from temporal_server import start_workers, stop_workers

from effects.cli import main

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


def test_submit_needs_one_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "s", "hi", "--cancel"]) == 2
    assert capsys.readouterr().err == (
        "agent-core submit: expected exactly one of TEXT, --approve ID, --deny ID or --cancel\n"
    )


def test_submit_says_when_the_server_is_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    from postgres_server import free_port

    assert main(["submit", "s", "hi", "--temporal", f"127.0.0.1:{free_port()}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agent-core submit: cannot reach the Temporal server at 127.0.0.1:")


def test_submit_gives_up_when_no_worker_takes_the_input(temporal_server, capsys: pytest.CaptureFixture[str]) -> None:
    queue = f"nobody-{uuid.uuid4().hex}"
    args = ["--temporal", temporal_server.address, "--task-queue", queue, "--timeout", "1"]
    assert main(["submit", f"t-{queue}", "hi", *args]) == 3
    assert capsys.readouterr().err == (
        f"agent-core submit: session t-{queue}: no answer within --timeout 1 s: the input was not accepted "
        f"(no worker took it); check that `agent-core worker` runs on task queue '{queue}', "
        "or wait longer with --timeout\n"
    )


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
