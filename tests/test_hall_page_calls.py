"""A call on the director's page in a real headless chromium: the banner, its sound and mute, the
answers, and a table's history. The same without a browser: tests/test_hall_calls.py.

No test waits on a real second: the page's clock is Playwright's (`page.clock`), moved on by the
test, and the hall's time of day is virtual and moved with it (`Times.now_ms`), so the banner's
waiting time is exact whenever an update comes."""

import os
import re
import threading
import time

import pytest

from support.call_hall import call_from
from support.hall_helpers import page_request, wait_for
from support.halls import Clocks, director, settle
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.director.hall.audit_read import read
from tileclock.director.pages import app
from tileclock.director.pages.web import HallPage


class Times:
    """The hall's time of day and the page's clock, one virtual time (ms since 1970): the
    simulated clocks' wall clocks read SIM_EPOCH_NS at their virtual 0, so a call raised a few
    seconds into their games has waited about `START_S` by its time of day when the test starts:
    over a minute more than the clock's own count, so the hall shows that count unless the test
    calls `after_call`."""

    def __init__(self):
        self.now_ms = SIM_EPOCH_NS // 1_000_000 + START_S * 1000

    def after_call(self, clocks, clock, by_s=30):
        """The hall's time of day `by_s` after `clock`'s call to come (its third tap let go, 3.1 s
        on): within a minute of the clock's own count, so the hall takes the wait from the call's
        time of day (hall_board.WALL_AHEAD_MS); the page's clock is installed after this."""
        self.now_ms = SIM_EPOCH_NS // 1_000_000 + int((clocks.t[clock] + 3.1 + by_s) * 1000)

    def page(self, tab):
        """The page's clock (in browser tab `tab`) installed at the hall's time, paused: it moves
        only with `run_for`."""
        # installed a minute early: pause_at only goes forward, and the installed clock runs on
        # in real time until then (a loaded machine once took over a second); no page is open
        # yet, so no timer fires on the way
        tab.clock.install(time=(self.now_ms - 60_000) / 1000)  # Playwright for Python: seconds
        tab.clock.pause_at(self.now_ms / 1000)

    def run_for(self, tab, ms):
        """Both on by `ms`: the page's timers fire, and an update from the hall agrees with them."""
        tab.clock.run_for(ms)
        self.now_ms += ms


def quiet(feed, for_s=2.0):
    """Until the hall's feed has not changed for `for_s` (real seconds): its last update has been sent
    (at most 5 a second) and drawn."""
    last, since = feed.version, time.monotonic()

    def settled():
        nonlocal last, since
        if feed.version != last:
            last, since = feed.version, time.monotonic()
        return time.monotonic() - since >= for_s

    wait_for(settled, what="the hall's updates to settle")


#: the hall's time of day as a test starts, in the simulated clocks' seconds
START_S = 100


@pytest.fixture
def hall(broker, tmp_path):
    """Two simulated clocks, the director's feed in a thread of its own, and the page."""
    times = Times()
    clocks = Clocks(broker, tmp_path, ids=("c1", "c2"))
    clocks.play(2)
    feed = director(broker, tmp_path / "records", wall=lambda: times.now_ms / 1000)
    settle(feed, clocks, "the first records")
    stop = threading.Event()
    stepper = threading.Thread(target=feed.run, args=(stop.is_set,), daemon=True)
    stepper.start()
    server = HallPage(feed, port=0).start()
    yield clocks, feed, server, tmp_path / "records", times
    stop.set()
    stepper.join(5)
    server.close()
    feed.close()
    clocks.close()


def wait_text(seconds):
    return f"waiting {seconds // 60}:{seconds % 60:02d}"


def answered(clocks, answer):
    def check():
        clocks.pump()
        return any(
            r["ev"] == "call_answer" and r["answer"] == answer for r in clocks.sims["c1"].journal.records()
        )

    return check


def call_record(clocks, clock):
    clocks.pump()
    return [r for r in clocks.sims[clock].journal.records() if r["ev"] == "call"][-1]


def test_a_call_rings_on_the_page_and_is_answered_from_it(hall, page):
    clocks, feed, server, folder, times = hall
    times.after_call(clocks, "c1")
    opened(hall, page)
    assert page.locator(".call").count() == 0
    call_from(_hall(clocks), "c1")
    banner = page.locator('.call[data-clock="c1"]')
    banner.wait_for(timeout=5000)
    text = banner.inner_text()
    assert "CALL: Board" in text and "STOPPED" in text
    assert page.evaluate("window.rang") >= 1  # the sound, once for the new call
    assert "CALLING" in page.locator('.board[data-clock="c1"]').inner_text()  # the card says so too
    # the wait, from the clock's time of day of the call, counted on by the page's own clock
    waited_s = (times.now_ms - call_record(clocks, "c1")["wall_ms"]) // 1000
    waited = banner.locator(".waited")
    assert waited_s >= 30 and waited.inner_text() == wait_text(waited_s)
    times.run_for(page, 1000)
    assert waited.inner_text() == wait_text(waited_s + 1)
    times.run_for(page, 60_000)
    assert waited.inner_text() == wait_text(waited_s + 61)
    assert page.evaluate("window.rang") == 3  # and again 30 s and 60 s after, while nobody takes it

    page.click("#mute")  # muted, and kept muted across a reload
    assert page.inner_text("#mute") == "Sound is off"
    page.reload()
    page.locator("#mute").wait_for()
    assert page.inner_text("#mute") == "Sound is off"

    banner.locator("button.take").click()
    wait_for(answered(clocks, "taken"), what="the clock to take the answer")
    assert clocks.sims["c1"].view().call == "taken"
    wait_for(lambda: clocks.pump() or "Taken:" in banner.inner_text(), what="the banner to say taken")
    done(banner)
    wait_for(answered(clocks, "done"), what="the call done")
    gone(page, clocks, banner)
    (cookie,) = page.context.cookies()  # the tab's session: the server's, named by its cookie
    session = server.sessions.label(cookie["value"]).removeprefix("page-")
    assert [(e["action"], e["by"]) for e in read(folder)] == [("call", f"page-{session}")] * 2

    # the board's page: its history, on file and as the clock recorded it
    page.goto(server.address + "board/c1")
    page.locator("#recorded tr").first.wait_for()
    assert "call" in page.locator("#actions-on-file tr").first.inner_text()
    assert f"page-{session}" in page.locator("#recorded tr").first.inner_text()


def test_a_muted_page_says_so_where_a_call_shows_and_does_not_ring(hall, page):
    clocks, feed, server, folder, times = hall
    opened(hall, page)
    page.click("#mute")
    assert page.locator("#sound-off").is_hidden()  # no call: the button alone says it
    call_from(_hall(clocks), "c1")
    page.locator('.call[data-clock="c1"]').wait_for()
    note = page.locator("#sound-off")
    assert note.is_visible() and note.inner_text().startswith("Sound off")
    # above the banners, where the director looks when a call comes
    assert note.bounding_box()["y"] < page.locator('.call[data-clock="c1"]').bounding_box()["y"]
    assert page.evaluate("window.rang") is None  # it did not ring
    page.click("#unmute")
    assert note.is_hidden() and page.inner_text("#mute") == "Sound is on"


def test_banners_stay_in_place_by_board_and_each_answer_goes_to_its_own_board(hall, page):
    clocks, feed, server, folder, times = hall
    opened(hall, page)
    first = calling(page, clocks, "c2")
    first.evaluate("node => { node.marked = true; }")  # the same node after every update, or not
    second = calling(page, clocks, "c1")
    times.run_for(page, 3000)  # the waits count up: the banners are updated, not rebuilt
    order = page.evaluate(
        "[...document.querySelectorAll('#calls .call')].map(b => [b.dataset.clock, !!b.marked])"
    )
    assert order == [["c2", True], ["c1", False]]  # the first call stays first, and the same node
    names = {b["clock"]: b["board"] for b in feed.snapshot()["boards"]}
    assert first.locator("button.done").inner_text() == f"Done — Board {names['c2']}"
    assert second.locator("button.take").inner_text() == f"Taken — Board {names['c1']}"
    done(second)
    wait_for(answered(clocks, "done"), what="c1's call done")
    gone(page, clocks, second)
    assert first.evaluate("node => node.marked") is True and "CALL:" in first.inner_text()
    assert not [r for r in clocks.sims["c2"].journal.records() if r["ev"] == "call_answer"]


def test_the_boards_own_page_shows_its_call_live_and_answers_it(hall, page):
    clocks, feed, server, folder, times = hall
    times.after_call(clocks, "c1")
    times.page(page)
    page.goto(server.address + "board/c1")
    page.locator("#records tr").first.wait_for()
    assert page.locator(".call").count() == 0
    call_from(_hall(clocks), "c1")  # raised after the page opened: it comes to it, unasked
    banner = page.locator('#calls .call[data-clock="c1"]')
    banner.wait_for()
    waited_s = (times.now_ms - call_record(clocks, "c1")["wall_ms"]) // 1000
    assert waited_s >= 30 and banner.locator(".waited").inner_text() == wait_text(waited_s)
    # an update taken before the page's clock moves on, and drawn after, would set it back: the
    # hall's last one is let reach the page first (a loaded CI machine once drew one 2 s late)
    quiet(feed)
    times.run_for(page, 2000)
    assert banner.locator(".waited").inner_text() == wait_text(waited_s + 2)
    banner.locator("button.take").click()
    wait_for(answered(clocks, "taken"), what="the clock to take the answer")
    wait_for(lambda: clocks.pump() or "Taken:" in banner.inner_text(), what="the banner to say taken")
    assert banner.locator("button.take").is_disabled()  # in its place, off
    assert banner.locator("a").count() == 0  # no link to the page it is on
    done(banner)
    wait_for(answered(clocks, "done"), what="the call done")
    gone(page, clocks, banner)


def done(banner):
    """Done on `banner`, and Yes to its question."""
    banner.locator("button.done").click()
    banner.locator("button.yes").click()


def gone(tab, clocks, banner):
    """The closed call's banner stays while the pointer is on the banners, and goes once it leaves."""
    wait_for(lambda: clocks.pump() or "closed" in banner.get_attribute("class"), what="the banner closed")
    tab.mouse.move(1, 1)
    banner.wait_for(state="detached")


def _hall(clocks):
    """`call_from` wants the hall's clocks under `.clocks`."""
    return type("Hall", (), {"clocks": clocks})()


def opened(hall, tab):
    """The hall's page open in `tab`, on the virtual time, its boards shown."""
    hall[4].page(tab)
    tab.goto(hall[2].address)
    tab.locator(".board").first.wait_for()


def calling(tab, clocks, clock):
    """`clock` calls (STOP tapped three times) and its banner shows in `tab`: the banner."""
    call_from(_hall(clocks), clock)
    banner = tab.locator(f'.call[data-clock="{clock}"]')
    banner.wait_for()
    return banner


def test_one_session_script_for_every_page_and_the_banner_is_the_colour_the_guide_says():
    pages = os.path.join(os.path.dirname(app.__file__), "hall_page")
    for name in ("index.html", "board.html"):
        with open(os.path.join(pages, name)) as html:
            text = html.read()
        for shared in ('<script src="/session.js">', '<script src="/calls.js">', 'href="/calls.css"'):
            assert shared in text, (name, shared)
        assert "X-Tileclock-Command" not in text and "class CallBanners" not in text, name  # no copy
        assert ".call {" not in text, name
    with open(os.path.join(pages, "calls.css")) as sheet:
        css = re.search(r"\.call \{[^}]*background: (#[0-9a-f]{6})", sheet.read()).group(1)
    assert css == "#6a1b9a"  # purple, as docs/hall.md says
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "hall.md")) as guide:
        assert "a purple banner at the top" in guide.read()
    from support.fixed_feed import Feed

    server = HallPage(Feed([]), port=0).start()
    try:
        status, text = page_request(server, "GET", "/session.js")
        assert status == 200 and "X-Tileclock-Command" in text
        status, text = page_request(server, "GET", "/calls.css")
        assert status == 200 and "#6a1b9a" in text
    finally:
        server.close()


#: the board (and its button, if any) at a point of the page: what a click there would press
AT_POINT = """([x, y]) => {
  const node = document.elementFromPoint(x, y);
  const banner = node && node.closest(".call"), button = node && node.closest("button");
  return {clock: banner ? banner.dataset.clock : null, button: button ? button.className : null,
          off: button ? button.disabled : null};
}"""


def _centre(locator):
    box = locator.bounding_box()
    return [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2]


def test_closing_the_upper_banner_moves_no_other_boards_button_under_the_pointer(hall, page):
    clocks, feed, server, folder, times = hall
    opened(hall, page)
    upper = calling(page, clocks, "c2")
    lower = calling(page, clocks, "c1")
    names = {b["clock"]: b["board"] for b in feed.snapshot()["boards"]}
    done_at = _centre(upper.locator("button.done"))
    # Done on the upper banner, twice as a hurried director does: it only asks, naming the board
    page.mouse.click(*done_at)
    page.mouse.click(*done_at)
    question = upper.locator(".confirm")
    assert question.is_visible()
    assert question.inner_text().startswith(f"Board {names['c2']}'s call is done?")
    assert lower.locator(".confirm").is_hidden()
    clocks.pump()
    assert not [r for r in clocks.sims["c2"].journal.records() if r["ev"] == "call_answer"]
    yes_at = _centre(upper.locator("button.yes"))
    assert yes_at != done_at  # its Yes is elsewhere: a double click never confirms
    page.mouse.click(*yes_at)
    shown = "(document.querySelector('.call[data-clock=\"c2\"]') || {className: 'gone'}).className"
    wait_for(
        lambda: clocks.pump() or page.evaluate(shown) in ("call closed", "gone"), what="the upper call closed"
    )
    assert [r["answer"] for r in clocks.sims["c2"].journal.records() if r["ev"] == "call_answer"] == ["done"]
    # under the pointer, and where Done was: the closed banner, never the next board's buttons
    for point in (yes_at, done_at):
        assert page.evaluate(AT_POINT, point)["clock"] == "c2", point
    page.mouse.click(*done_at)  # a click more lands on the closed banner's button, which is off
    assert page.evaluate(AT_POINT, done_at) == {"clock": "c2", "button": "done", "off": True}

    # Taken on the lower banner: it stays where it was, off; Done does not slide into its place
    take_at = _centre(lower.locator("button.take"))
    page.mouse.click(*take_at)
    wait_for(lambda: clocks.pump() or "taken" in lower.get_attribute("class"), what="c1 taken")
    assert page.evaluate(AT_POINT, take_at) == {"clock": "c1", "button": "take", "off": True}
    page.mouse.click(*take_at)  # the double click's second half: nothing
    clocks.pump()
    assert [r["answer"] for r in clocks.sims["c1"].journal.records() if r["ev"] == "call_answer"] == ["taken"]
    # the pointer leaves the banners: only now does the closed one go and the other move up
    page.mouse.move(1, 1)
    upper.wait_for(state="detached")
    assert "Taken:" in lower.inner_text()


def test_a_boards_page_opened_after_its_call_shows_the_call_record_as_a_plain_row(hall, page):
    clocks, feed, server, folder, times = hall
    times.page(page)
    call_from(_hall(clocks), "c1")

    def board():
        return next(b for b in feed.snapshot()["boards"] if b["clock"] == "c1")

    wait_for(lambda: clocks.pump() or board()["call"], what="the call on file")
    seq = board()["call"]["seq"]
    page.goto(server.address + "board/c1")
    row = page.locator(f'#records tr[data-seq="{seq}"]')
    row.wait_for()
    assert "CALL to the director" in row.inner_text()
    look = row.evaluate(
        "r => { const s = getComputedStyle(r); return [s.display, s.backgroundColor, s.color]; }"
    )
    assert look == ["table-row", "rgba(0, 0, 0, 0)", "rgb(17, 17, 17)"]  # the table's, not a banner's purple
    page.locator('#calls .call[data-clock="c1"]').wait_for()  # the banner is where banners go, once
    assert page.locator(".call").count() == 1
