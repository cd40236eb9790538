"""The hall at a glance (issue 41, point 3), in Debian's chromium: the page's map lays each board
out where the room's plan puts its table, says its state by colour and by symbol, opens the board
on a click, and holds 200 boards legibly on one 1920x1080 screen."""

import pytest

from support.fixed_feed import NOW_MS, Feed, board
from tileclock.director.pages.web import HallPage

#: a board in each state the map tells apart, by its number
HALL = [
    board(1, "running", "A", ("12:31", 748_400), ("14:02", 658_000)),
    board(2, "running", "B", ("9:59", 900_200), ("-0:41", 1_540_900, 10)),
    board(3, "paused", None, ("3:10", 1_310_000), ("6:45", 1_095_000)),
    board(4, "running", "A", ("18:20", 400_000), ("17:05", 475_000), online=False, age_ms=130_000),
    board(5, "ready", None),
    board(6, "ended", None, ("-1:12", 1_572_000, 20), ("2:01", 1_379_000)),
    board(
        9,
        "paused",
        None,
        call={"seq": 57, "state": "called", "raised_ms": NOW_MS - 5_000, "waited_ms": 5_000},
    ),
]
#: the room: boards 1 to 3 at the front, an aisle, 9 alone at the back; 4, 5 and 6 are on no line
PLAN = {"1": [0, 0], "2": [0, 1], "3": [0, 3], "9": [2, 2]}


def serve(boards, plan=None):
    page_server = HallPage(Feed(boards), port=0)
    page_server.plan = plan
    return page_server.start()


@pytest.fixture
def server():
    page_server = serve(HALL, PLAN)
    yield page_server
    page_server.close()


def map_of(page, server, count, viewport=None, under_way=False):
    page.set_viewport_size(viewport or {"width": 1280, "height": 900})
    page.clock.set_fixed_time(NOW_MS)
    page.goto(server.address)
    page.locator(".board").first.wait_for()
    if under_way:  # the round's words are in before the map is measured
        page.locator("#round-status", has_text="Round 3").wait_for()
    page.click("#view")
    page.locator(".tile").nth(count - 1).wait_for()
    return page


def test_the_map_lays_the_boards_out_as_the_room_is(server, page):
    map_of(page, server, len(HALL))
    assert page.locator("#list").is_hidden() and page.inner_text("#view") == "List of boards"
    tiles = page.evaluate(
        "[...document.querySelectorAll('.tile')].map(t => [t.innerText.replace(/\\s+/g, ' '), t.dataset.status,"
        " t.style.gridRow + ',' + t.style.gridColumn])"
    )
    assert sorted(tiles) == sorted(
        [
            ["1 ▶", "playing", "1,1"],
            ["2 −", "overtime", "1,2"],
            ["3 ■", "stopped", "1,4"],
            ["9 ☎", "calling", "3,3"],
            # on no line of the plan: after it, a row of nothing between, in board order
            ["4 ✕", "silent", "5,1"],
            ["5 ○", "ready", "5,2"],
            ["6 ✓", "ended", "5,3"],
        ]
    )
    # in the room's places: board 3 right of 2 past the gap, 9 below them
    box = {n: page.locator(f'.tile[data-clock="clock-{n}"]').bounding_box() for n in (1, 2, 3, 9)}
    assert box[1]["x"] < box[2]["x"] < box[3]["x"] and box[1]["y"] == box[3]["y"] < box[9]["y"]
    # colour says it too: calling, overtime, silent each their own
    colours = {n: page.locator(f'.tile[data-clock="clock-{n}"]').evaluate("e => getComputedStyle(e).backgroundColor")
               for n in (9, 2, 4, 1)}  # fmt: skip  # one reading a board
    assert len(set(colours.values())) == 4
    assert page.get_attribute('.tile[data-clock="clock-9"]', "title") == "Board 9: CALLING"
    # the choice holds across a reload; a click on a tile opens its board
    page.reload()
    page.locator(".tile").first.wait_for()
    assert page.locator("#list").is_hidden()
    page.click('.tile[data-clock="clock-3"]')
    page.wait_for_url("**/board/clock-3")


def test_two_hundred_boards_are_legible_on_one_screen(page):
    boards = [board(n, "running", "A", ("12:31", 748_400), ("14:02", 658_000)) for n in range(1, 201)]
    page_server = serve(boards)  # no plan: the boards in order, rows as wide as the screen is for its height
    page_server.rounds.current = {  # round 3 under way on all of them, as test_hall_page_look's
        "round": 3,
        "start_ms": NOW_MS - 600_000,
        "start": "14:00:00",
        "boards": [b["board"] for b in boards],
        "clocks": [b["clock"] for b in boards],
    }
    try:
        map_of(page, page_server, 200, {"width": 1920, "height": 1080}, under_way=True)
        assert "No plan of the room" in page.inner_text("#map-source")
        seen = page.evaluate(
            "[...document.querySelectorAll('.tile')].map(t => { const r = t.getBoundingClientRect(),"
            " n = t.querySelector('.num'); return [r.bottom, r.right, n.scrollWidth <= n.clientWidth + 1,"
            " parseFloat(getComputedStyle(n).fontSize)]; })"
        )
        assert max(bottom for bottom, *_ in seen) <= 1080 and max(right for _, right, *_ in seen) <= 1920
        assert all(whole for _, _, whole, _ in seen)  # no number cut off
        assert min(size for *_, size in seen) >= 16  # read from a step back
        assert page.inner_text('.tile[data-clock="clock-200"] .num') == "200"
    finally:
        page_server.close()


def test_two_hundred_boards_that_cannot_start_are_one_line(page):
    """Before a round, the boards that cannot start a timed round are named by reason, in runs
    (it was a paragraph a board: at 200 boards 1,000 px that pushed every board below the fold)."""
    boards = [board(n, "running", "A", ("12:31", 748_400), ("14:02", 658_000)) for n in range(1, 201)]
    boards[4] = board(5, "ready", None, time={"offset_us": 0, "error_us": 0, "synced": False})
    page_server = serve(boards)
    try:
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.goto(page_server.address)
        before = page.locator("#before-round")
        before.wait_for()
        assert before.inner_text() == (
            "Cannot start a timed round now: Boards 1-4, 6-200 (its game has begun or ended: new game first), "
            "Board 5 (its clock's time is not synchronised)"
        )
        assert before.bounding_box()["height"] < 40
    finally:
        page_server.close()
