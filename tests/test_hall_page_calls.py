"""A call on the director's page in a real headless chromium: the banner, its sound and mute, the
answers, and a table's history. The same without a browser: tests/test_hall_calls.py."""

import threading

import pytest

from hall_helpers import wait_for
from test_hall import Clocks, director, settle
from test_hall_calls import call_from
from test_hall_page import browser, page  # noqa: F401  (the fixtures: Debian's chromium)
from tileclock.director.follow.audit import read
from tileclock.director.pages.web import HallPage


@pytest.fixture
def hall(broker, tmp_path):
    """Two simulated clocks, the director's feed in a thread of its own, and the page."""
    clocks = Clocks(broker, tmp_path, ids=("c1", "c2"))
    clocks.play(2)
    feed = director(broker, tmp_path / "records")
    settle(feed, clocks, "the first records")
    stop = threading.Event()
    stepper = threading.Thread(target=feed.run, args=(stop.is_set,), daemon=True)
    stepper.start()
    server = HallPage(feed, port=0).start()
    yield clocks, feed, server, tmp_path / "records"
    stop.set()
    stepper.join(5)
    server.close()
    feed.close()
    clocks.close()


def answered(clocks, answer):
    def check():
        clocks.pump()
        return any(
            r["ev"] == "call_answer" and r["answer"] == answer for r in clocks.sims["c1"].journal.records()
        )

    return check


def test_a_call_rings_on_the_page_and_is_answered_from_it(hall, page):  # noqa: F811  (page: the fixture imported above)
    clocks, feed, server, folder = hall
    page.goto(server.address)
    page.locator(".board").first.wait_for()
    assert page.locator(".call").count() == 0
    call_from(_hall(clocks), "c1")
    banner = page.locator('.call[data-clock="c1"]')
    banner.wait_for(timeout=5000)
    text = banner.inner_text()
    assert "CALL: Board" in text and "STOPPED" in text and "waiting 0:" in text
    assert page.evaluate("window.rang") >= 1  # the sound, once for the new call
    assert "CALLING" in page.locator('.board[data-clock="c1"]').inner_text()  # the card says so too
    before = banner.locator(".waited").inner_text()
    wait_for(lambda: banner.locator(".waited").inner_text() != before, 5, "the wait to count up")

    page.click("#mute")  # muted, and kept muted across a reload
    assert page.inner_text("#mute") == "Sound off"
    page.reload()
    page.locator("#mute").wait_for()
    assert page.inner_text("#mute") == "Sound off"

    banner.locator("button.take").click()
    wait_for(answered(clocks, "taken"), what="the clock to take the answer")
    assert clocks.sims["c1"].view().call == "taken"
    wait_for(lambda: clocks.pump() or "Taken:" in banner.inner_text(), what="the banner to say taken")
    banner.locator("button.done").click()
    wait_for(answered(clocks, "done"), what="the call done")
    wait_for(lambda: clocks.pump() or page.locator(".call").count() == 0, what="the banner gone")
    session = page.evaluate("sessionStorage.getItem('tileclock-session')")
    assert [(e["action"], e["by"]) for e in read(folder)] == [("call", f"page-{session}")] * 2

    # the board's page: its history, on file and as the clock recorded it
    page.goto(server.address + "board/c1")
    page.locator("#recorded tr").first.wait_for()
    assert "call" in page.locator("#actions-on-file tr").first.inner_text()
    assert f"page-{session}" in page.locator("#recorded tr").first.inner_text()


def _hall(clocks):
    """`call_from` wants the hall's clocks under `.clocks`."""
    return type("Hall", (), {"clocks": clocks})()
