"""The viewer on a long session in a real browser: the page follows a live session of 20,000 inputs record by
record, keeps a bounded window of records, and never asks for or draws the whole session again.

A record appended to the log must be on the page within :data:`SHOWN_WITHIN_MS`; that is a functional
timeout (the page polls every 500 ms and each poll costs about a millisecond on the server), not a measure:
``benchmarks/viewer.py`` measures.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.async_api import Page

from effects import SqliteStore

from ._browser import browser, screenshot, serving
from ._generated import INPUTS_PER_TURN, turn, turns, write_session

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SHOWN_WITHIN_MS = 5000
MAX_ROWS = 2000  # app.js: records the page holds at once
SESSION = "long"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def shown(page: Page, seq: int) -> None:
    await page.wait_for_selector(f"tr.record[data-seq='{seq}']", timeout=SHOWN_WITHIN_MS)


async def rows(page: Page) -> list[int]:
    return await page.eval_on_selector_all("tr.record", "rows => rows.map(r => +r.dataset.seq)")


async def test_the_page_follows_a_session_of_20000_inputs_record_by_record(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    writer = SqliteStore(path, synchronous="OFF")
    count = 20_000 // INPUTS_PER_TURN + 1
    journal = write_session(writer, SESSION, count)
    length = writer.session(SESSION).length
    assert length > 20_000
    viewer = SqliteStore(path, synchronous="OFF")
    async with serving(viewer) as url, browser() as chromium:
        page = await chromium.new_page(viewport={"width": 1400, "height": 1000})
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        await page.goto(f"{url}#/s/{SESSION}")
        await page.wait_for_selector(f"tr.record[data-seq='{length}']", timeout=120_000)  # the first page: one fold
        assert await rows(page) == list(range(length - 199, length + 1))

        for inp in turn(count):  # a live turn, one record at a time
            journal.append([inp])
            length += 1
            await shown(page, length)
        assert (await page.text_content("#phase")) == "idle"
        await page.wait_for_selector(f".lane[data-key='call-tool:c{count}'][data-outcome='completed']")

        journal.append(list(turns(count + 1, 300)))  # 2,700 records at once: caught up a page at a time
        length += 300 * INPUTS_PER_TURN
        await page.wait_for_selector(f"tr.record[data-seq='{length}']", timeout=120_000)
        assert await rows(page) == list(range(length - MAX_ROWS + 1, length + 1))  # the oldest dropped
        entries = await page.eval_on_selector_all(".entry", "es => es.map(e => +e.dataset.seq)")
        assert min(entries) >= length - MAX_ROWS + 1 and entries == sorted(entries)
        lanes = await page.eval_on_selector_all(".lane", "ls => ls.map(l => l.dataset.key)")
        assert len(lanes) == len(set(lanes)) and len(lanes) <= 4 * (
            MAX_ROWS // INPUTS_PER_TURN + 2
        )  # a turn, its tool call and two model calls

        for inp in turn(count + 301):
            journal.append([inp])
            length += 1
            await shown(page, length)
        await screenshot(page, "viewer-long-session.png")

        await page.click("#earlier")  # 200 earlier records, the newest dropped, following paused
        await page.wait_for_selector(f"tr.record[data-seq='{length - MAX_ROWS}']", timeout=120_000)
        assert await rows(page) == list(range(length - MAX_ROWS - 199, length - 199))
        assert await page.is_visible("#newest") and not await page.is_visible("#live")

    pages = [parse_qs(urlsplit(u).query) for u in asked if urlsplit(u).path == f"/api/sessions/{SESSION}"]
    assert pages[0] == {}  # the newest page, once
    assert all("after" in q or "before" in q for q in pages[1:])  # then only what was new, or asked for
    assert sum("before" in q for q in pages) == 1
    writer.close()
    viewer.close()
