"""What following a long session in the viewer costs per new record, and what ``inspect --html`` writes and holds.

At each size (default 1,000, 20,000 and 100,000 inputs of generated turns,
``_session.session``, in a SQLite file), one record is appended at a time and
these are timed per record, over the real server (``create_app`` under
uvicorn on a loopback port):

* ``follow (server)``: ``GET /api/sessions/ID?after=N``, the page of records
  after the last one the page had, which is what the page asks at each poll;
* ``follow (browser)``: the page's own ``follow()`` in Debian's Chromium (its
  timer stopped): that request, and appending the record to the page, with a
  forced layout (skipped with ``--no-browser`` or without Chromium);
* ``floor``: reading that record and applying it to the state
  (``transition``), the least any follower of the log does;
* ``refold (before)``: a fold of the whole log with its timeline entries, a
  lower bound of what each new record cost when the page reloaded the
  session's view (that view also projected spans, conversation and stats).

Once per size: ``open``, the first page of a session the server has not
folded yet, and ``inspect --html`` of the newest 1,000 records in a child
process (seconds, bytes, peak RSS, beside the RSS of a child that only loads
the session's state). Run: ``python benchmarks/viewer.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import table, write_results
from _session import INPUTS_PER_TURN, session

from agent_core import transition
from effects import SessionJournal, SqliteStore, create_app, load_state, timeline

SESSION = "bench"
CHROMIUM = "/usr/bin/chromium"

_CHILD = """
import json, resource, sys, time
from effects import SqliteStore, load_state, write_html
store = SqliteStore(sys.argv[1], readonly=True)
start = time.perf_counter()
size = write_html(store, "bench", sys.argv[2]) if sys.argv[3] == "html" else (load_state(store, "bench"), 0)[1]
print(json.dumps({"seconds": time.perf_counter() - start, "bytes": size,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def stored(path: Path, inputs: int) -> tuple[SqliteStore, int]:
    """A store holding a session of about ``inputs`` inputs (the one at ``path`` if it holds it already: one
    written by an earlier run with ``--dir``); returns it and its number of turns."""
    turns = max(1, -(-(inputs - 1) // INPUTS_PER_TURN))
    store = SqliteStore(path, synchronous="OFF")
    if any(info.session_id == SESSION for info in store.sessions()):
        length = store.session(SESSION).length
        return store, (length - 1) // INPUTS_PER_TURN
    journal = SessionJournal(store, SESSION)
    batch = []
    for inp in session(turns):
        batch.append(inp)
        if len(batch) == 5000:
            journal.append(batch)
            batch = []
    journal.append(batch)
    return store, turns


@contextmanager
def served(store: SqliteStore) -> Iterator[int]:
    """The viewer over ``store`` on a loopback port, in a thread of its own; yields the port."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(
        uvicorn.Config(create_app(store), log_level="warning", lifespan="off", timeout_keep_alive=3600)
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


class Client:
    """One keep-alive connection to the viewer."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def get(self, path: str) -> tuple[float, int, Any]:
        start = time.perf_counter()
        self.connection.request("GET", path)
        answer = self.connection.getresponse()
        body = answer.read()
        took = time.perf_counter() - start
        assert answer.status == 200, body[:300]
        return took, len(body), json.loads(body)


class Browser:
    """Chromium showing the session; ``follow()`` runs the page's own poll once and times it."""

    def __init__(self, port: int) -> None:
        from playwright.sync_api import sync_playwright

        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        self.page = self.browser.new_page(viewport={"width": 1400, "height": 1000})
        self.page.goto(f"http://127.0.0.1:{port}/#/s/{SESSION}")
        self.page.wait_for_selector("tr.record", timeout=600_000)
        self.page.evaluate("() => { clearTimeout(view.timer); view.following = false; }")

    def follow(self, seq: int) -> float:
        took = self.page.evaluate(
            """async () => {
                view.following = true;
                const start = performance.now();
                await follow(view);
                document.getElementById("records").offsetHeight;  // lay the page out
                const took = performance.now() - start;
                clearTimeout(view.timer); view.following = false;
                return took;
            }"""
        )
        assert self.page.query_selector(f"tr.record[data-seq='{seq}']") is not None
        return float(took) / 1000

    def rows(self) -> int:
        return int(self.page.eval_on_selector_all("tr.record", "rows => rows.length"))

    def close(self) -> None:
        self.browser.close()
        self.playwright.stop()


def child(path: Path, out: Path, what: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(out), what], capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure_size(directory: Path, inputs: int, records: int, browse: bool, parts: list[str]) -> dict[str, Any]:
    path = directory / f"{inputs}.db"
    store, turns = stored(path, inputs)
    length = store.session(SESSION).length
    row: dict[str, Any] = {"inputs": length}
    if "follow" in parts:
        follow(store, row, records, browse, turns)
    store.close()
    if "html" in parts:
        html = child(path, directory / f"{inputs}.html", "html")
        state_only = child(path, directory / "unused", "state")
        row.update(html_s=html["seconds"], html_bytes=html["bytes"], html_rss_mb=html["rss_mb"])
        row["state_rss_mb"] = state_only["rss_mb"]
    print(f"measured the session of {row['inputs']:,} inputs", file=sys.stderr, flush=True)  # progress, not the report
    return row


def follow(store: SqliteStore, row: dict[str, Any], records: int, browse: bool, turns: int) -> None:
    """Append ``records`` records one at a time, timing what following the session costs for each."""
    with served(store) as port:
        client = Client(port)
        row["open_s"], row["open_bytes"], page = client.get(f"/api/sessions/{SESSION}")
        browser = Browser(port) if browse else None
        journal = SessionJournal.open(store, SESSION)
        state = load_state(store, SESSION)
        server, floor, shown, sizes = [], [], [], []
        new = session(records // INPUTS_PER_TURN + 1, first_turn=turns, start=False)
        hi = page["to"]
        for _, inp in zip(range(records), new, strict=False):
            journal.append([inp])
            start = time.perf_counter()
            [record] = store.read(SESSION, hi + 1, hi + 1)
            state = transition(state, record.decode())
            floor.append(time.perf_counter() - start)
            took, size, answer = client.get(f"/api/sessions/{SESSION}?after={hi}")
            assert (answer["from"], answer["to"]) == (hi + 1, hi + 1), (answer["from"], answer["to"], hi)
            server.append(took)
            sizes.append(size)
            if browser is not None:
                shown.append(browser.follow(hi + 1))
            hi += 1
        if browser is not None:
            row["browser_rows"] = browser.rows()
            browser.close()
        client.connection.close()
    start = time.perf_counter()
    timeline(store, SESSION)
    row["refold_s"] = time.perf_counter() - start
    row["follow_server_ms"] = statistics.median(server) * 1000
    row["follow_server_max_ms"] = max(server) * 1000
    row["follow_bytes"] = statistics.median(sizes)
    row["floor_ms"] = statistics.median(floor) * 1000
    row["follow_browser_ms"] = statistics.median(shown) * 1000 if shown else None
    row["follow_browser_max_ms"] = max(shown) * 1000 if shown else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 20_000, 100_000])
    parser.add_argument("--records", type=int, default=40, help="records appended one at a time at each size")
    parser.add_argument("--no-browser", action="store_true", help="do not time the page in Chromium")
    parser.add_argument("--parts", nargs="+", choices=["follow", "html"], default=["follow", "html"])
    parser.add_argument("--dir", type=Path, help="keep the sessions here and reuse them (runs split in parts)")
    args = parser.parse_args()
    browse = not args.no_browser and os.path.exists(CHROMIUM)
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        directory = args.dir or Path(temporary)
        directory.mkdir(parents=True, exist_ok=True)
        for inputs in args.sizes:
            rows.append(measure_size(directory, inputs, args.records, browse, args.parts))
    ms = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    print(f"per new record, median of {args.records} appended one at a time (max in brackets)")
    print(
        table(
            ("inputs", "follow (server) ms", "follow (browser) ms", "floor ms", "refold (before) ms", "answer bytes"),
            [
                (
                    f"{r['inputs']:,}",
                    f"{ms(r['follow_server_ms'])} ({ms(r['follow_server_max_ms'])})",
                    f"{ms(r['follow_browser_ms'])} ({ms(r['follow_browser_max_ms'])})",
                    ms(r["floor_ms"]),
                    f"{r['refold_s'] * 1000:,.0f}",
                    f"{r['follow_bytes']:,.0f}",
                )
                for r in rows
                if "follow_server_ms" in r
            ],
        )
    )
    print()
    print("once per session: the first page, and inspect --html of the newest 1,000 records (child process)")
    print(
        table(
            ("inputs", "open s", "open bytes", "html s", "html KiB", "html peak RSS MB", "load_state RSS MB"),
            [
                (
                    f"{r['inputs']:,}",
                    f"{r['open_s']:.2f}" if "open_s" in r else "-",
                    f"{r['open_bytes']:,}" if "open_bytes" in r else "-",
                    f"{r['html_s']:.2f}",
                    f"{r['html_bytes'] // 1024:,}",
                    f"{r['html_rss_mb']:.0f}",
                    f"{r['state_rss_mb']:.0f}",
                )
                for r in rows
                if "html_s" in r
            ],
        )
    )
    print(f"results: {write_results('viewer', {'rows': rows, 'records': args.records})}")


if __name__ == "__main__":
    main()
