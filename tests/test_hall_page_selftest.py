"""The self-test from the hall's page (issue 40), in a real headless chromium: "Self-test every
board" sends `selftest` to every clock, the boards on a fresh game run it (the buttons answered at
one, none at another), a board in play refuses it; the fleet table says passed, failed and why,
never tested. A board's own page starts it on that board alone."""

from conftest import tap
from support.hall_helpers import pages_question, wait_for
from support.page_hall import hall  # noqa: F401 - the fixture: three clocks, the feed, the page
from tileclock.clock.timecode import NS_PER_S


def fresh(clocks, clock):
    clocks.end_game(clock)
    clocks.open_game(clock)


def asking(clocks, clock):
    view = clocks.sims[clock].view()
    return view.selftest is not None and view.selftest.phase == "ask"


def cell(page, clock):
    return page.locator(f'#fleet-rows tr[data-clock="{clock}"] td[data-name="self-test"]')


def test_every_board_self_tested_from_the_page_and_the_fleet_says_how_each_did(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    fresh(clocks, "c1")
    fresh(clocks, "c2")  # c3 plays on: it refuses the self-test
    page.goto(server.address)
    wait_for(lambda: page.locator("#fleet-rows tr").count() == 3, what="a row for every clock")
    assert cell(page, "c1").inner_text() == "never tested"
    page.click("#selftest-all")
    assert "Self-test every board?" in pages_question(page)
    page.locator("#sent").get_by_text("selftest").wait_for()
    wait_for(lambda: clocks.pump() or (asking(clocks, "c1") and asking(clocks, "c2")), what="both testing")
    sim = clocks.sims["c1"]
    t_s = sim.time() / NS_PER_S
    for offset, button in enumerate(("A", "B", "STOP"), start=1):
        tap(sim, button, t_s + offset)
    sim.run_to(int((t_s + 10) * NS_PER_S))
    other = clocks.sims["c2"]  # nobody answers: each button's 10 s runs out
    other.run_to(other.time() + 40 * NS_PER_S)
    for clock in ("c1", "c2", "c3"):
        clocks.sims[clock].uplink.pump()
    wait_for(lambda: cell(page, "c1").inner_text() == "passed", what="c1 passed")
    failed = "failed: A not pressed, B not pressed, STOP not pressed"
    wait_for(lambda: cell(page, "c2").inner_text() == failed, what="c2 failed, and why")
    assert (
        cell(page, "c2").get_attribute("class") == "odd" and cell(page, "c1").get_attribute("class") != "odd"
    )
    assert cell(page, "c3").inner_text() == "never tested"
    refusal = [r for r in clocks.sims["c3"].journal.records() if r["ev"] == "error"]
    assert refusal and "fresh game" in refusal[-1]["detail"]
    (record,) = [r for r in sim.journal.records() if r["ev"] == "selftest"]
    assert record["result"] == "pass" and record["source"] == "hall" and record["by"]


def test_a_board_s_own_page_self_tests_that_board_alone(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    fresh(clocks, "c1")
    fresh(clocks, "c2")
    page.goto(server.address + "board/c1")
    page.click('button[data-action="selftest"]')
    assert "Self-test this board" in pages_question(page)
    wait_for(lambda: clocks.pump() or asking(clocks, "c1"), what="c1 testing")
    clocks.pump()
    assert not asking(clocks, "c2")
