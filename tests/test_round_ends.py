"""When the round will end (issue 41, point 4): each board's latest possible end, from scripted
games whose ends are known, and the round's on the page, through mosquitto and simulated clocks."""

from support.hall_helpers import pages_question, wait_for
from support.round_hall import (
    hall,  # noqa: F401  (the fixture: three school clocks, the hall)
    records,
)
from tileclock.clock.rules import PROFILES
from tileclock.director.hall.ends import latest_end, seconds

NOW_MS = 1_764_079_200_000
NASPA, SCHOOL, NSA = PROFILES["naspa"], PROFILES["school"], PROFILES["nsa1997"]


def board(state, a, b, age_ms=1000):
    return {"state": state, "A": {"shown": a}, "B": {"shown": b}, "age_ms": age_ms}


def test_under_naspa_both_sides_time_left_and_the_overtime_cap():
    # A has 3:00 left and all its cap; B is 2:00 into overtime: 8:00 of its cap left
    running = latest_end(NASPA, board("running", "3:00", "-2:00"), NOW_MS)
    assert running == NOW_MS - 1000 + (180 + 600 + 0 + 480) * 1000  # counted from its last record
    # a stopped clock is counted as stopped: from now, however old its record
    assert latest_end(NASPA, board("paused", "3:00", "-2:00", 90_000), NOW_MS) == NOW_MS + 1_260_000
    # a game not started: both full times and both caps from now
    assert latest_end(NASPA, board("ready", "25:00", "25:00"), NOW_MS) == NOW_MS + 70 * 60_000
    # past the cap on one side: nothing left of it
    assert latest_end(NASPA, board("running", "-10:00", "0:30", 0), NOW_MS) == NOW_MS + 630_000
    assert latest_end(NASPA, board("ended", "1:00", "1:00"), NOW_MS) is None
    assert latest_end(NSA, board("running", "3:00", "4:00"), NOW_MS) is None  # no cap: not known
    assert seconds("-0:41") == -41 and seconds("?") is None


def test_under_school_rules_the_round_limit_from_the_round_start():
    start = NOW_MS - 600_000
    assert latest_end(SCHOOL, board("running", "12:00", "9:00"), NOW_MS, start) == start + 50 * 60_000
    assert latest_end(SCHOOL, board("running", "12:00", "9:00"), NOW_MS) is None  # no start taken


def test_the_round_panel_says_when_the_round_ends_at_the_latest(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    page.goto(server.address)
    page.locator(".board").nth(2).wait_for()
    page.fill("#round", "5")
    page.click("#start-round")
    pages_question(page)
    wait_for(lambda: all(records(clocks, c, "set") for c in ("c1", "c2", "c3")), what="every start taken")
    start_ms = records(clocks, "c1", "set")[-1]["start_ms"]

    def ends():
        return {
            b["clock"]: b["latest_end_ms"]
            for b in page.context.request.get(server.address + "api/boards").json()["boards"]
        }

    wait_for(lambda: set(ends().values()) == {start_ms + 50 * 60_000}, what="each board's latest end")
    expected = page.evaluate(
        "ms => new Date(ms).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', hour12: false})",
        start_ms + 50 * 60_000,
    )
    line = page.locator("#round-ends")
    said = f"Round 5 ends by {expected} at the latest: Board c1, Board c2, Board c3 will be the last"
    # the page's stream may still be a snapshot behind the API (one board's end known, not three)
    wait_for(lambda: line.inner_text() == said, what=f"the round panel to say {said!r}")
    assert f"ends by {expected} at the latest" in page.locator('.board[data-clock="c2"]').inner_text()
