"""The fleet at a glance on the director's page, in a real headless chromium: each clock's health
(device/health.py) in a table, a clock on another version than the rest flagged, a weak supply
said on its card ("Board N: power supply too weak"), and the board's own page showing it all."""

from support.hall_helpers import wait_for
from support.page_hall import hall  # noqa: F401 - the fixture: three clocks, the feed, the page
from tileclock.clock.timecode import NS_PER_S


def test_the_fleet_table_flags_another_version_and_a_weak_supply(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    odd = clocks.sims["c3"]
    odd.health.version, odd.health._at = "0.0.9", None  # an older card, read again at once
    clocks.t["c3"] += 3
    odd.set_power(0x50005, clocks.t["c3"] * NS_PER_S)  # its supply sags: a fault record
    odd.uplink.pump()
    usual = clocks.sims["c1"].health.version
    page.goto(server.address)
    rows = page.locator("#fleet-rows tr")
    rows.first.wait_for()
    wait_for(lambda: rows.count() == 3, what="a row for every clock")
    version = page.locator('#fleet-rows tr[data-clock="c3"] td[data-name="version"]')
    wait_for(lambda: version.inner_text() == f"0.0.9 (not {usual})", what="the odd version")
    assert version.get_attribute("class") == "odd"
    assert (
        page.locator('#fleet-rows tr[data-clock="c1"] td[data-name="version"]').get_attribute("class")
        != "odd"
    )
    power = page.locator('#fleet-rows tr[data-clock="c3"] td[data-name="power"]')
    assert power.inner_text() == "power supply too weak" and power.get_attribute("class") == "odd"
    card = page.locator('.board[data-clock="c3"]')
    board = clocks.sims["c3"].config.board
    card.locator(f"text=Board {board}: power supply too weak").wait_for()
    last = page.locator('#fleet-rows tr[data-clock="c1"] td[data-name="last start"]').inner_text()
    assert last == "a fresh start"
    assert page.locator('#fleet-rows tr[data-clock="c1"] td[data-name="power"]').inner_text() == "not watched"

    page.goto(server.address + "board/c3")  # the board's own page: the same facts
    health = page.locator("#health")
    health.locator("dd", has_text="0.0.9").wait_for()
    assert "power supply too weak" in health.inner_text() and "journal" in health.inner_text()
