"""A round at a real event, end to end (issue 30's bar): simulated clocks in virtual time, each with
a wall clock of its own, on a real mosquitto; the director's page in Debian's chromium starts the
round, answers a board's call (taken, then done), gives a side a minute and sends round over; then
what a director looks at afterwards is read back: the director's page, the spectators' page, the
audit trail and each clock's records, and the question "who gave B a minute at table 12, and
when" is answered from the records folder alone. Nothing sleeps: the clocks move only when told.
"""

import glob
import json
import os
import re
from dataclasses import replace

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS, tap
from support.hall_helpers import Stepping, closed_after, hall_config, pages_question, wait_for
from support.halls import Clocks, director, settle
from support.round_hall import AT_14, UTC
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.timesync import virtual_wall
from tileclock.director.hall import audit_read
from tileclock.director.hall.round_control import RoundControl
from tileclock.director.pages.web import HallPage
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import frame

S = 1_000_000_000
#: clock -> its board's name, and how many minutes before 14:00 (its wall clock) it booted
BOARDS = {"c1": ("11", 1), "c2": ("12", 2)}


class EventClocks(Clocks):
    """Boards 11 and 12 (clocks c1, c2), school rules, each at a fresh game, each booted at its own
    instant: a round set for 14:00 starts on each when its own wall clock reads 14:00."""

    def start(self, clock):
        name, minutes = BOARDS[clock]
        config = replace(
            Config(clock_id=clock, board=name, rules="school"), hall=hall_config(self.broker, clock)
        )
        virtual = VirtualTime(0)
        wall = virtual_wall(AT_14 - minutes * 60_000, virtual)
        return Simulator(
            config, state_dir=str(self.tmp_path / clock), refresh_on_ticks=False, time=virtual, wall=wall
        )


class Event:
    """The clocks, the director's feed stepping in its own thread, and the page: stopped and started
    again as a restart of `tileclock hall` would (the records folder stays)."""

    def __init__(self, broker, tmp_path):
        self.broker, self.folder = broker, tmp_path / "records"
        self.clocks = EventClocks(broker, tmp_path, ids=tuple(BOARDS))
        for sim in self.clocks.sims.values():
            sim.run_to(10 * S)
        self.start()

    def start(self):
        self.feed = director(self.broker, self.folder)
        wait_for(
            lambda: (self.clocks.pump(), self.feed.step(0.01), len(self.feed.boards) == 2)[-1],
            what="every board heard",
        )
        settle(self.feed, self.clocks, "the boards' records")
        self.stepper = Stepping(self.feed)
        self.server = HallPage(self.feed, port=0)
        # this laptop's time: 13:59:30, the round kept in the records folder
        laptop_ns = (AT_14 - 30_000) * 1_000_000
        self.server.rounds = RoundControl(self.feed, lambda: laptop_ns, UTC, str(self.folder))
        self.server.start()

    def close(self):
        self.stepper.stop()
        self.server.close()
        self.feed.close()

    def records(self, clock, ev=None):
        self.clocks.pump()
        return [r for r in self.clocks.sims[clock].journal.records() if ev is None or r["ev"] == ev]

    def waits_for(self, clock, ev, count=1):
        wait_for(lambda: len(self.records(clock, ev)) >= count, what=f"{clock}'s {ev} record")


@pytest.fixture
def event(broker, tmp_path):
    yield from closed_after(Event(broker, tmp_path))


def test_a_round_with_a_call_a_correction_and_round_over_read_back_as_a_director_would(
    event,
    browser,
    viewers_broker,
):
    clocks, t = event.clocks, event.clocks.t
    # the pairings' tool sets the tables (as test_hall_calls does); the director then uses the page
    event.feed.command("set table=11", "c1")
    event.feed.command("set table=12", "c2")
    for clock in BOARDS:
        event.waits_for(clock, "set")

    director = browser.new_context()
    page = director.new_page()
    questions = []  # every command asks first, in the page's own dialog: each question, then yes
    browsers = []  # the browser's own confirm: never raised
    page.on("dialog", lambda dialog: (browsers.append(dialog.message), dialog.dismiss()))
    page.goto(event.server.address)
    page.locator(".board").nth(1).wait_for()
    (cookie,) = director.cookies()  # the tab's session: the server's, named by its cookie
    session = event.server.sessions.label(cookie["value"])
    assert re.fullmatch(r"page-[0-9a-f]{8}", session)

    # 1. the round, from the page: round 3 at 14:00:00 on boards 11 and 12
    page.fill("#round", "3")
    page.fill("#start-at", "14:00:00")
    page.fill("#boards", "11, 12")
    page.click("#start-round")
    questions.append(pages_question(page))
    page.locator("#sent", has_text="round 3 starts at 14:00:00 on 2 boards").wait_for()
    for clock in BOARDS:
        event.waits_for(clock, "set", 2)
    for clock, (_, minutes) in BOARDS.items():  # each runs on past its own 14:00, then play starts
        t[clock] = minutes * 60 + 1
        clocks.sims[clock].run_to(t[clock] * S)
        (started,) = event.records(clock, "round_start")
        assert started["start_ms"] == AT_14
        for after_s, button in ((0, "B"), (9, "A")):
            tap(clocks.sims[clock], button, t[clock] + after_s)
        t[clock] += 10

    # 2. board 12 stops and calls the director (three STOP taps); board 11 plays on
    tap(clocks.sims["c2"], "STOP", t["c2"] + 10)
    for after_s in (12, 12.5, 13):
        tap(clocks.sims["c2"], "STOP", t["c2"] + after_s)
    t["c2"] += 20
    (call,) = event.records("c2", "call")
    # a forged call: clock c1's credentials, on its own topic, a record claiming to be c2's
    forger = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger")
    forger.username_pw_set("c1", BROKER_USERS["c1"])
    forger.connect("127.0.0.1", event.broker.port)
    forger.loop_start()
    forged = {**call, "clock": "c2", "seq": call["seq"] + 1000}
    forger.publish(
        "tileclock/c1/records", frame(json.dumps(forged, separators=(",", ":"))), qos=1
    ).wait_for_publish(5)
    forger.loop_stop()
    forger.disconnect()

    banner = page.locator("#calls .call", has_text="Board 12")
    banner.wait_for()
    assert "table 12" in banner.inner_text() and "round 3" in banner.inner_text()
    # the page leads with it: the calls above the round panel and every board
    assert page.locator("#calls").bounding_box()["y"] < page.locator("#round-panel").bounding_box()["y"]
    # CALLING comes first: the cards are drawn from the snapshot that may follow the banner's
    first = page.locator(".board").first
    wait_for(lambda: first.get_attribute("data-clock") == "c2", what="the calling board first")
    assert page.locator("#calls .call").count() == 1  # the forgery raised nothing

    # the spectators see the call: a mark, and nothing on their page can answer it
    viewers = browser.new_context(viewport={"width": 1920, "height": 1080}, bypass_csp=True).new_page()
    viewers.goto(viewers_broker.address)
    twelve = viewers.locator("section.board", has_text="Table 12")
    twelve.locator(".call", has_text="DIRECTOR CALLED").wait_for()
    assert viewers.locator("button, form, input").count() == 0

    banner.locator("button.take").click()
    event.waits_for("c2", "call_answer")
    page.locator("#calls .call.taken", has_text="Board 12").wait_for()
    twelve.locator(".call", has_text="DIRECTOR COMING").wait_for()
    page.locator("#calls .call.taken button.done").click()
    page.locator("#calls .call.taken button.yes", has_text="Board 12").click()  # Done asks first
    event.waits_for("c2", "call_answer", 2)
    page.locator("#calls .call.closed").wait_for()  # in place while the pointer is on it
    page.mouse.move(1, 1)
    page.locator("#calls .call").wait_for(state="detached")

    # 3. the correction: B at table 12 gets a minute, from its board's page
    page.goto(event.server.address + "board/c2")
    page.locator("#title", has_text="Board 12").wait_for()  # its game loaded: a question names the board
    page.locator("#actions button", has_text="B +1:00").click()
    questions.append(pages_question(page))
    event.waits_for("c2", "adjust")
    # play goes on at table 12; a minute off B sent now is refused by the clock (a clock runs)
    tap(clocks.sims["c2"], "A", t["c2"] + 1)
    t["c2"] += 2
    page.locator("#actions button", has_text="B −1:00").click()
    questions.append(pages_question(page))
    event.waits_for("c2", "error")

    # 4. round over, from the round panel: every board ends at once
    page.goto(event.server.address)
    page.locator(".board").nth(1).wait_for()
    page.click("#end-round")
    questions.append(pages_question(page))
    for clock in BOARDS:
        event.waits_for(clock, "end")
    settle(event.feed, clocks, "every record on file")
    for name in ("Table 11", "Table 12"):
        viewers.locator("section.board", has_text=name).locator(".status", has_text="ROUND OVER").wait_for()
    twelve.locator(".call").wait_for(state="detached")  # the call is done: no mark

    # --- read back as the director would: the page's round panel and a table's history
    status = page.locator("#round-status")
    said = "Round 3, round over sent on 2 boards: 2 ended (Board 11, Board 12)"
    wait_for(lambda: status.inner_text() == said, what="the round panel to say both ended")
    page.goto(event.server.address + "board/c2")
    history = page.locator("#actions-on-file tr")
    history.nth(5).wait_for()
    rows = [row.split("\t") for row in history.all_inner_texts()]
    words = ["round over", "correction: B −1:00", "correction: B +1:00", "call", "call", "round 3 starts at"]
    # in a director's words, never protocol words
    assert all(row[3].startswith(said) for row, said in zip(rows, words, strict=True)), rows
    assert "by=" not in " ".join(row[4] for row in rows)  # the command without its action id
    assert all(row[1] == session for row in rows)
    # did each take: the refused minute says so, with the clock's reason, and is marked
    (refusal,) = event.records("c2", "error")
    took = [row[6] for row in rows]
    assert took[1] == f"REFUSED: {refusal['detail']}" and history.nth(1).get_attribute("class") == "refused"
    assert all(re.fullmatch(r"applied \(record \d+\)", said) for said in took[:1] + took[2:])
    page.locator("#recorded tr.ev-error", has_text=refusal["detail"]).wait_for()  # the clock's own record

    # the audit trail: every action, in order, from the page session that took it
    trail = audit_read.read(event.folder)
    assert [(e["action"], e["clock"], e["by"]) for e in trail] == [
        ("round_start", "all", session),
        ("call", "c2", session),
        ("call", "c2", session),
        ("adjust", "c2", session),
        ("adjust", "c2", session),
        ("round_over", "all", session),
    ]
    ids = [e["id"] for e in trail]
    assert all(i.startswith(session + "_") for i in ids) and len(set(ids)) == len(ids)
    # what became of each, at table 12's clock: every one applied but the refused minute
    outcomes = [(e["outcomes"]["c2"]["outcome"], e["outcomes"]["c2"]["ev"]) for e in trail]
    assert outcomes == [
        ("applied", "set"),
        ("applied", "call_answer"),
        ("applied", "call_answer"),
        ("applied", "adjust"),
        ("refused", "error"),
        ("applied", "end"),
    ]
    assert trail[4]["outcomes"]["c2"]["reason"] == refusal["detail"]
    assert trail[-1]["outcomes"]["c1"]["outcome"] == "applied"  # round over, at board 11 too
    assert trail[0]["changed"] == {"round": 3, "start_ms": AT_14, "start": "14:00:00", "boards": ["11", "12"]}
    assert [e["changed"] for e in trail[1:3]] == [
        {"call": call["seq"], "answer": "taken"},
        {"call": call["seq"], "answer": "done"},
    ]

    # each clock's own records say the same, naming the same session
    twelve_records = event.records("c2")
    said = [
        (r["ev"], r.get("by")) for r in twelve_records if r.get("by") or r["ev"] in ("call", "round_start")
    ]
    assert said == [
        ("set", ids[0]),
        ("round_start", None),
        ("call", None),
        ("call_answer", ids[1]),
        ("call_answer", ids[2]),
        ("adjust", ids[3]),
        ("error", ids[4]),
        ("end", ids[5]),
    ]
    for clock in BOARDS:
        (end,) = event.records(clock, "end")
        assert end["reason"] == "round_over" and end["by"] == ids[5]
    assert not [r for r in event.records("c1") if r["ev"].startswith("call")]  # the forgery is no call
    with open(event.folder / "rejects.log") as rejects:
        assert any("foreign_clock" in line for line in rejects)

    # "who gave B a minute at table 12, and when": from the records folder alone
    with open(event.folder / "audit.log") as trail_file:
        lines = [json.loads(line) for line in trail_file]
    (gave,) = [
        e
        for e in lines
        if e["action"] == "adjust"
        and e["table"] == "12"
        and e["changed"] == {"side": "B", "delta_ms": 60_000}
    ]
    assert gave["by"] == session and gave["addr"] == "127.0.0.1" and gave["at"].startswith("20")
    game_files = glob.glob(os.path.join(event.folder, "**", "game-*.log"), recursive=True)
    on_file = [json.loads(line) for path in game_files for line in open(path) if line.strip()]
    (adjust,) = [r for r in on_file if r["ev"] == "adjust" and r["clock"] == "c2"]
    assert (adjust["player"], adjust["delta_ms"], adjust["by"], adjust["source"]) == (
        "B",
        60_000,
        gave["id"],
        "hall",
    )
    # ...and did it take: the outcome line of that action names the clock's record of it
    (took,) = [e for e in lines if e["action"] == "outcome" and e["of"] == gave["id"] and e["clock"] == "c2"]
    assert (took["outcome"], took["seq"]) == ("applied", adjust["seq"])
    (table_set,) = [
        r for r in on_file if r.get("clock") == "c2" and r["ev"] == "set" and r.get("table") == "12"
    ]
    assert table_set["seq"] < adjust["seq"]  # the game it was given in is table 12's
    assert adjust["B"]["shown"] != gave["before"]["B"]  # what it changed: B's time before, and after

    # the next game at table 12, from its board's page: asked first, naming the clock; it opens
    page.goto(event.server.address + "board/c2")
    page.locator("#title", has_text="Board 12").wait_for()
    page.locator("#actions button", has_text="New game").click()
    questions.append(pages_question(page))
    event.waits_for("c2", "new_game", 2)
    assert (
        questions[-1].startswith("Start a new game (only once this game has ended")
        and questions[-1].endswith(" on Board 12?")  # the board, never its clock id
    )
    assert len(questions) == 5 and browsers == []
    (asked,) = [e for e in audit_read.read(event.folder) if e["action"] == "new_game"]
    opened = event.records("c2", "new_game")[-1]
    assert opened["by"] == asked["id"] and opened["source"] == "hall" and asked["by"] == session
    wait_for(
        lambda: audit_read.read(event.folder)[-1]["outcomes"], what="the new game's outcome on the trail"
    )
    assert audit_read.read(event.folder)[-1]["outcomes"]["c2"]["seq"] == opened["seq"]
    director.close()
    viewers.context.close()

    # a restart of `tileclock hall`: the round panel's round comes back from the records folder
    event.close()
    event.start()
    answer = json.loads(browser.new_context().request.get(event.server.address + "api/round").body())
    assert answer["round"]["round"] == 3 and answer["round"]["boards"] == ["11", "12"]
    assert answer["round"]["over_ms"] and answer["problem"] is None
