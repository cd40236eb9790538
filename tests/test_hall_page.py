"""The director's page in a real headless chromium (Debian's), driven by Playwright: live, and its buttons work."""

import time

import pytest

from support.hall_helpers import pages_question, wait_for
from support.halls import CLOCKS
from support.page_hall import hall  # noqa: F401  (the fixture: three clocks, the feed, the page)


def stopped_on_the_page(clocks, page, clock):
    """Press STOP at `clock` and wait until its card on `page` says STOPPED (at most 5 s): the card,
    and the seconds it took."""
    sim = clocks.sims[clock]
    clocks.t[clock] += 3
    pressed = time.monotonic()
    sim.set_button("STOP", True, clocks.t[clock] * 1_000_000_000)
    sim.set_button("STOP", False, clocks.t[clock] * 1_000_000_000 + 100_000_000)
    sim.uplink.pump()
    card = page.locator(f'.board[data-clock="{clock}"]')
    card.locator("text=STOPPED").wait_for(timeout=5000)
    return card, time.monotonic() - pressed


@pytest.mark.slow  # a wall-clock bound: a loaded machine (or the other xdist worker) may miss it
def test_a_record_reaches_the_page_within_a_second(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, _, server = hall
    page.goto(server.address)
    page.locator('.board[data-clock="c1"]').wait_for()
    _, taken_s = stopped_on_the_page(clocks, page, "c1")
    assert taken_s < 1.0


def test_the_page_shows_every_board_live_and_its_game(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(server.address)
    cards = page.locator(".board")
    cards.first.wait_for()
    wait_for(lambda: cards.count() == len(CLOCKS), what="a card for every board")
    assert page.inner_text("#summary").startswith("3 boards: ")
    assert requested and all(url.startswith(server.address) for url in requested)  # nothing from outside

    # a record at a clock reaches the page (within a second: test_a_record_reaches_the_page_within_a_second)
    card, _ = stopped_on_the_page(clocks, page, "c1")
    # a stopped board needs a look: it comes before the boards in play
    assert page.locator(".board").first.get_attribute("data-clock") == "c1"

    # the running clocks tick on the page between records
    running = page.locator('.board[data-clock="c2"] .side.turn .time')
    before = running.inner_text()
    wait_for(lambda: running.inner_text() != before, 5, "the running side to tick")

    # a board opens to its game: every record, and both panels as the clock drew them
    card.click()
    page.wait_for_selector("#records tr")
    assert page.locator("#records tr").count() == len(feed.store.clocks["c1"].game.records)
    # the page's own panels first: it draws them and the game's picture at once, and a third
    # drawing asked meanwhile is told to come back (PICTURE_WORKERS), as a loaded machine showed
    shown = "document.getElementById('panels').complete && document.getElementById('panels').naturalWidth"
    wait_for(lambda: page.evaluate(shown) > 0, what="the page's panels image")
    wait_for(
        lambda: page.evaluate("document.querySelector('#picture img')?.complete ?? true"), what="its picture"
    )
    image = page.context.request.get(server.address + "api/board/c1/panels.png?at_ms=1000")
    assert image.ok and image.body()[:8] == b"\x89PNG\r\n\x1a\n"


def test_round_over_on_the_page_stops_every_clock(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    page.goto(server.address)
    page.locator(".board").first.wait_for()
    page.click("#end-round")
    assert "Every clock stops" in pages_question(page)
    page.locator("#sent").get_by_text("round over").wait_for()

    def all_ended():
        clocks.pump()  # each clock's loop wakes for the command
        return all(sim.journal.records()[-1]["ev"] == "end" for sim in clocks.sims.values())

    wait_for(all_ended, what="every clock to end its game")
    assert {sim.journal.records()[-1]["reason"] for sim in clocks.sims.values()} == {"round_over"}
    page.locator(".board .badge", has_text="ENDED").first.wait_for()
    wait_for(lambda: page.locator(".board .badge", has_text="ENDED").count() == len(CLOCKS), what="all ended")


def test_a_command_asks_in_the_pages_own_dialog_and_only_yes_sends_it(hall, page):  # noqa: F811  (the fixtures imported from their module)
    """The page draws its question (never the browser's `confirm`, which a decoy page or a
    browser hiding repeated prompts could answer): No has the focus, No and Escape send nothing,
    its Yes, named for the action, sends the command once."""
    clocks, feed, server = hall
    browsers, posted = [], []
    page.on("dialog", lambda dialog: browsers.append(dialog.message))  # (the fixture dismisses it)
    page.on("request", lambda request: request.method == "POST" and posted.append(request.url))
    page.goto(server.address)
    page.locator(".board").first.wait_for()
    before = {clock: sim.journal.next_seq for clock, sim in clocks.sims.items()}
    asking = page.locator("dialog#ask[open]")

    page.click("#end-round")
    asking.wait_for()
    assert asking.locator(".question").inner_text() == "End the round? Every clock stops now."
    assert asking.locator("button.yes").inner_text() == "End the round"
    assert page.evaluate("document.activeElement.className") == "no"  # Enter is No
    pages_question(page, yes=False)
    page.click("#start-round")
    asking.wait_for()
    page.keyboard.press("Escape")
    asking.wait_for(state="hidden")
    page.click("#end-round")
    asking.wait_for()
    page.keyboard.press("Enter")  # No has the focus
    asking.wait_for(state="hidden")
    clocks.pump()
    assert {clock: sim.journal.next_seq for clock, sim in clocks.sims.items()} == before
    assert posted == [] and page.inner_text("#sent") == ""

    page.click("#end-round")
    pages_question(page)
    page.locator("#sent").get_by_text("round over").wait_for()
    # once, its one-time value asked for first (session.js): a second send of it would be a replay
    assert posted == [server.address + "api/once", server.address + "api/round/over"]
    assert browsers == []
