"""The page says what the clocks did (issue 41, points 1 and 2): a round's start, round over and a
new game on several boards, answered board by board on the round panel as each answer comes,
through a real mosquitto to simulated clocks; a start that boards refused is a banner naming them,
the reason and the fix; a new game on the boards chosen, confirmed once on the page and audited."""

import os

from support.hall_helpers import pages_question, wait_for
from support.round_hall import (
    hall,  # noqa: F401  (the fixture: three clocks, the hall, its page)
    records,
)
from tileclock.device.timesync import system_wall
from tileclock.director.hall import audit_read
from tileclock.director.hall.answers import answered, before_a_round


def answer_of(page, clock):
    return page.locator(f'#answers li[data-clock="{clock}"]')


def test_a_start_two_clocks_refuse_is_said_board_by_board_with_the_fix(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    # c2's game has ended (its director's round over); c3's wall clock is not synchronised
    feed.command("round over", "c2")
    wait_for(lambda: records(clocks, "c2", "end"), what="c2's game to end")
    sim = clocks.sims["c3"]
    sim.daemon.commands.wall = system_wall(sim.time, sim.parts.wall, synced=lambda: False)
    page.goto(server.address)
    page.locator(".board").nth(2).wait_for()
    wait_for(lambda: (clocks.pump(), "Board c2 (its game has begun or ended" in page.inner_text("#before-round"))[-1],
             what="the ended board flagged before the round")  # fmt: skip  # laid out by hand, the way it reads best
    # the simulated clocks send no chrony figures: said, not left blank
    assert "sends no time figures: Board c1, Board c2, Board c3" in page.inner_text("#time-status")
    page.fill("#round", "3")
    page.click("#start-round")
    pages_question(page)
    # the answers come in board by board, in board order
    for clock in ("c1", "c2", "c3"):
        wait_for(lambda clock=clock: records(clocks, clock, "set") or records(clocks, clock, "error"),
                 what=f"{clock}'s answer")  # fmt: skip  # laid out by hand, the way it reads best
    wait_for(
        lambda: (clocks.pump(), "no answer yet" not in page.inner_text("#answers"))[-1],
        what="every answer on the page",
    )
    items = page.locator("#answers li")
    assert items.all_inner_texts() == [
        "Board c1: applied",
        "Board c2: REFUSED: set start: only on a fresh game (ended): start a new game first",
        "Board c3: REFUSED: set start: this clock does not know the time of day (its clock is not synchronised)",
    ]
    assert page.inner_text("#answers .answers-head").endswith("2 refused · 1 applied")
    banner = page.locator("#round-refused")
    assert banner.is_visible()
    said = banner.inner_text()
    assert said.startswith("Round 3 did NOT start on 2 boards (Board c2: set start: only on a fresh game")
    assert "open a new game on it" in said and "time is not synchronised" in said
    status = page.inner_text("#round-status")
    assert "1 not started (Board c1)" not in status  # c1 waits for its start; c2 and c3 never took it
    assert "3 not started (Board c1, Board c2, Board c3)" in status
    # the trail has one line for the start and an outcome for each clock
    (line,) = [e for e in audit_read.read(feed.store.outdir) if e["action"] == "round_start"]
    server.audit.flush(5)
    (line,) = [e for e in audit_read.read(feed.store.outdir) if e["action"] == "round_start"]
    assert {c: o["outcome"] for c, o in line["outcomes"].items()} == {
        "c1": "applied",
        "c2": "refused",
        "c3": "refused",
    }
    # the fix from the banner: a new game on the boards that refused, confirmed once
    page.click("#new-games-refused")
    question = pages_question(page)
    assert question.startswith("New game on boards c2, c3?")
    wait_for(lambda: records(clocks, "c2", "new_game") and records(clocks, "c3", "error")[1:],
             what="c2 and c3 to answer the new game")  # fmt: skip  # laid out by hand, the way it reads best
    wait_for(lambda: (clocks.pump(), "no answer yet" not in page.inner_text("#answers")
             and page.inner_text("#answers .answers-head").startswith("new game"))[-1], what="the new game's answers")  # fmt: skip  # laid out by hand, the way it reads best
    answered = [
        "Board c2: applied",
        "Board c3: REFUSED: new game: only on an ended game (ready): end it first (round over)",
    ]
    # the list is drawn as each answer comes: waited for whole (the head may come first)
    wait_for(
        lambda: (clocks.pump(), items.all_inner_texts() == answered)[-1],
        what=f"the page's answers {answered}",
    )
    assert banner.is_hidden()  # the newest command is the new game: its refusal is not a start's
    server.audit.flush(5)
    (opened,) = [e for e in audit_read.read(feed.store.outdir) if e["action"] == "new_game"]
    assert opened["clock"] == "all" and opened["changed"] == {"boards": ["c2", "c3"]}
    assert records(clocks, "c2", "new_game")[-1]["by"] == opened["id"]


def test_round_over_then_a_new_game_on_every_board_from_the_page(hall, page):  # noqa: F811  (the fixtures imported from their module)
    clocks, feed, server = hall
    page.goto(server.address)
    page.locator(".board").nth(2).wait_for()
    page.fill("#round", "4")
    page.click("#start-round")
    pages_question(page)
    wait_for(lambda: all(records(clocks, c, "set") for c in ("c1", "c2", "c3")), what="every start taken")
    page.click("#end-round")
    pages_question(page)
    wait_for(lambda: all(records(clocks, c, "end") for c in ("c1", "c2", "c3")), what="every game ended")
    wait_for(lambda: (clocks.pump(), page.locator('#answers li[data-state="applied"]').count() == 3
             and "round over" in page.inner_text("#answers .answers-head"))[-1], what="round over answered")  # fmt: skip  # laid out by hand, the way it reads best
    wait_for(lambda: (clocks.pump(), "3 ended (Board c1, Board c2, Board c3)" in page.inner_text("#round-status"))[-1],
             what="the round panel: every board ended")  # fmt: skip  # laid out by hand, the way it reads best
    page.click("#new-games")
    assert pages_question(page).startswith("New game on every board?")
    wait_for(lambda: all(records(clocks, c, "new_game")[1:] for c in ("c1", "c2", "c3")), what="new games")
    wait_for(lambda: (clocks.pump(), page.locator('#answers li[data-state="applied"]').count() == 3
             and page.inner_text("#answers .answers-head").startswith("new game"))[-1], what="the new games answered")  # fmt: skip  # laid out by hand, the way it reads best
    # the boards opened their next game: still "ended" this round, never "not started"
    wait_for(lambda: (clocks.pump(), "3 ended (Board c1, Board c2, Board c3)" in page.inner_text("#round-status"))[-1],
             what="ended this round after the new games")  # fmt: skip  # laid out by hand, the way it reads best
    server.audit.flush(5)
    (opened,) = [e for e in audit_read.read(feed.store.outdir) if e["action"] == "new_game"]
    assert opened["changed"] == {"boards": ["c1", "c2", "c3"]}


def boards(*specs):
    return [
        {"board": name, "clock": f"k{name}", "online": online, "state": state, "time": time}
        for name, online, state, time in specs
    ]


def test_answers_are_in_board_order_and_a_silent_board_is_offline():
    line = {"id": "x_1", "action": "round_start", "changed": {"round": 2, "start": "14:00:00"},
            "targets": ["k10", "k2", "k3"]}  # fmt: skip  # laid out by hand, the way it reads best
    shown = boards(("10", True, "ready", None), ("2", False, "ready", None), ("3", True, "ready", None))
    said = answered(line, {"k3": {"outcome": "applied", "reason": None, "seq": 9}}, shown)
    assert [(b["board"], b["state"]) for b in said["boards"]] == [
        ("2", "offline"),
        ("3", "applied"),
        ("10", "no answer yet"),
    ]
    assert said["what"] == "round 2's start at 14:00:00"


def test_before_a_round_names_what_cannot_start_a_timed_round():
    unsynced = {"synced": False, "offset_us": 0, "error_us": 0}
    shown = boards(("1", True, "ended", None), ("2", True, "ready", unsynced), ("3", False, "ended", None))
    before = before_a_round(shown)
    assert [(c["board"], c["why"]) for c in before["cannot"]] == [
        ("1", "its game has begun or ended: new game first"),
        ("2", "its clock's time is not synchronised"),
    ]
    assert before["no_time_figures"] == ["1"]


def test_the_phone_form_shows_the_rounds_game_not_the_new_empty_one(hall):  # noqa: F811  (the fixtures imported from their module)
    """After round over the clock opens a new, empty game: the score form of its table still shows
    the game that ended (its penalties), not the empty one ("Side A: no time penalty")."""
    clocks, feed, server = hall
    feed.command("round over", "c1")
    wait_for(lambda: records(clocks, "c1", "end"), what="c1's game to end")
    wait_for(
        lambda: server.game("c1") and server.game("c1").records[-1]["ev"] == "end", what="the end on file"
    )
    ended = server.table_facts("c1")["penalties"]
    assert not any("has not ended" in line for line in ended)
    feed.command("new game", "c1")
    wait_for(lambda: records(clocks, "c1", "new_game")[1:], what="c1's next game")
    wait_for(lambda: server.game("c1").records[0]["seq"] == records(clocks, "c1", "new_game")[-1]["seq"],
             what="the new game on file")  # fmt: skip  # laid out by hand, the way it reads best
    assert server.table_facts("c1")["penalties"] == ended  # still the round's game


def test_a_boards_page_names_the_board_and_shows_its_correction_live(hall, page):  # noqa: F811  (the fixtures imported from their module)
    """A board's page asks about the board, not its clock id, and its lower half (the records, the
    corrections, the panels' slider) follows the clock's answer without a reload, in the buttons'
    own words (+1:00, never +60 s)."""
    clocks, feed, server = hall
    feed.command("round over", "c1")  # a correction is taken on a stopped or ended game
    wait_for(lambda: records(clocks, "c1", "end"), what="c1's game to end")
    wait_for(
        lambda: server.game("c1") and server.game("c1").records[-1]["ev"] == "end", what="the end on file"
    )
    page.goto(server.address + "board/c1")
    page.locator("#title", has_text="Board c1").wait_for()
    before = page.locator("#records tr").count()
    page.click("#actions button:text-is('A +1:00')")
    assert pages_question(page) == "A +1:00 on Board c1?"
    wait_for(lambda: records(clocks, "c1", "adjust") or records(clocks, "c1", "error"), what="c1's answer")
    assert records(clocks, "c1", "adjust"), records(clocks, "c1", "error")
    page.locator("#corrections li", has_text="A +1:00").wait_for()
    wait_for(
        lambda: (clocks.pump(), page.locator("#records tr").count() > before)[-1],
        what="the records table to grow",
    )
    assert "+1:00" in page.locator("#records tr.ev-adjust").inner_text()
    slider = page.locator("#at")
    assert slider.get_attribute("max") == str(records(clocks, "c1", "adjust")[-1]["t_ms"])


def test_an_answers_outcome_is_on_the_disk_before_its_record_is_acknowledged(hall):  # noqa: F811  (the fixtures imported from their module)
    """The hall acknowledges a clock's record to the broker only once the audit trail's outcome of
    the action it answers is on the disk: a hall killed in between gets the record again, never
    an applied action left reading "no answer yet" for ever."""
    clocks, feed, server = hall
    answering, seen = {}, []  # the message ids of records that answer an action; what each ack saw
    guarded, ack = feed._guarded, feed.connection.client.ack

    def spying_guarded(message):
        if b'"by":"' in bytes(message.payload) and message.topic.endswith("/records"):
            answering[message.mid] = message.topic.split("/")[1]
        return guarded(message)

    def spying_ack(mid, qos):
        if mid in answering:
            text = open(os.path.join(feed.store.outdir, "audit.log"), encoding="ascii").read()
            seen.append((answering[mid], f'"clock":"{answering[mid]}","outcome"' in text))
        return ack(mid, qos)

    feed._guarded, feed.connection.client.ack = spying_guarded, spying_ack
    line = server.audit.record("new_game", "test", None, "new game", "all", None, {}, answered=True,
                               targets=["c1", "c2", "c3"])  # fmt: skip  # laid out by hand, the way it reads best
    for clock in ("c1", "c2", "c3"):
        feed.command(line["command"], clock)
    wait_for(lambda: (clocks.pump(), len(seen) >= 3)[-1], what="the three answers acknowledged")
    assert sorted(seen) == [("c1", True), ("c2", True), ("c3", True)]
