"""A director's round start and call answer sent into a fault (issue 39, point 2g): the clock's
commands held on their way (bench/fault_proxy.py's one-way hold: what a stalled access point or a
link that stopped passing packets does to them), then let through. Each is applied once when it
passes, or refused by the clock as stale once it was made more than 10 s before (wire/seal.py),
and the page says which: the round panel's applied / not delivered, the audit trail's outcome.

One sealed clock in virtual time through the proxy to a real mosquitto; the director's feed, its
wall clock the clock's own as chrony keeps them, its audit trail hearing the answers as the
page's does (pages/web.py). Nothing sleeps: the test waits for the records it asserts."""

import datetime
import secrets
from dataclasses import replace
from types import SimpleNamespace

import pytest

from conftest import tap
from support.hall_helpers import hall_config, wait_for
from support.halls import director
from tileclock.bench.fault_proxy import FaultProxy
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config_schema import Config
from tileclock.director.hall import audit_read
from tileclock.director.hall.answers import answered
from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.round_control import RoundControl
from tileclock.director.pages.board_routes import act_as, board_of, round_step_as
from tileclock.sim.simulator import Simulator
from tileclock.wire.seal import read_keys

KEY = secrets.token_hex(32)
BY = "page-39f00d"


class Hall:
    """Clock c1 (school rules, a fresh game) sealed with its key, reaching `broker` through
    `proxy`; the director's feed on `broker` itself, its audit trail and its round control."""

    def __init__(self, broker, proxy, tmp_path):
        self.proxy, self.folder = proxy, tmp_path / "records"
        through = SimpleNamespace(port=proxy.port, tls_port=None, ca_file=None)
        config = replace(Config(clock_id="c1", board="1", rules="school"), hall=hall_config(through, "c1"))
        config = replace(config, hall=replace(config.hall, key=KEY))
        self.sim = Simulator(config, state_dir=str(tmp_path / "c1"), refresh_on_ticks=False)
        self.feed = director(
            broker, self.folder, keys=read_keys(f"c1 {KEY}"), wall=lambda: self.now_ms() / 1000
        )
        self.audit = AuditLog(str(self.folder))
        self.feed.subscribe(lambda clock, record, _log: self.audit.answered(clock, record))
        self.rounds = RoundControl(self.feed, now_ns=lambda: self.now_ms() * NS_PER_MS, zone=datetime.UTC)
        wait_for(lambda: self.step() and board_of(self, "c1") and self.board()["online"], what="board 1")

    def now_ms(self):
        """The time of day (ms) on the clock's wall clock, and on this laptop's, as chrony keeps them."""
        return (SIM_EPOCH_NS + self.sim.time()) // NS_PER_MS

    def step(self):
        """What the clock's loop and the hall's feed do when woken; True."""
        self.sim.daemon.pump(self.sim.time())
        self.feed.step(0.02)
        return True

    def board(self):
        return board_of(self, "c1")

    def records(self, ev):
        return [r for r in self.sim.journal.records() if r["ev"] == ev]

    def later(self, seconds):
        """The clock's (and so the laptop's) time `seconds` on."""
        self.sim.catch_up(self.sim.time() + int(seconds * NS_PER_S))

    def said(self, entry):
        """What the audit trail says became of action `entry` at c1 (`outcome_of`, as the
        board's history shows it)."""
        self.audit.flush(5)
        line = next(e for e in audit_read.read(str(self.folder)) if e.get("id") == entry["id"])
        return audit_read.outcome_of(line, "c1")

    def round_panel(self):
        """The round panel's line for board 1, as the page draws it (`HallPage.with_answers`)."""
        line = self.audit.to_several
        (board,) = answered(line, self.audit.answers_to(line["id"]), self.feed.snapshot()["boards"])["boards"]
        return board["state"], board["reason"]

    def until_answered(self, entry):
        """Step until the trail has c1's answer to `entry`; that answer."""
        wait_for(lambda: self.step() and self.said(entry)["state"] != "no answer yet", what=entry["command"])
        return self.said(entry)

    def close(self):
        self.feed.close()
        self.sim.close()


@pytest.fixture
def hall(broker, tmp_path):
    proxy = FaultProxy(("127.0.0.1", broker.port), seed=39).start()
    made = Hall(broker, proxy, tmp_path)
    yield made
    made.close()
    proxy.close()


def held(hall):
    """The broker's bytes to the clock held on their way from now on (the clock's own still go out)."""
    hall.proxy.set(down={"hold": True})


def start_round(hall, start_text=""):
    """Round 4 started from the page (round_step_as: its audit line, then the command); the line."""
    round_step_as(hall, BY, "10.0.0.5", "start", 4, start_text, "")
    return hall.audit.to_several


def test_a_round_start_held_on_its_way_is_applied_once_when_it_passes(hall):
    held(hall)
    entry = start_round(hall)  # 10 s ahead: every clock has it before it falls due
    start_ms = hall.rounds.current["start_ms"]
    wait_for(lambda: hall.proxy.waiting("down") > 0, what="the start held on its way")
    assert hall.round_panel() == ("no answer yet", None)  # sent; the board still online
    hall.later(4)  # 4 s of the fault on the clock's own time: still fresh
    hall.proxy.clear()
    assert hall.until_answered(entry)["state"] == "applied"
    hall.later(10)  # past the start
    for _ in range(10):  # anything more on its way would be taken by now
        hall.step()
    (setting,) = [r for r in hall.records("set") if r.get("round") == 4]
    (started,) = hall.records("round_start")
    assert setting["by"] == entry["id"] and setting["start_ms"] == start_ms
    assert started["start_ms"] == start_ms and "late_ms" not in started  # on time, to the ms
    assert hall.round_panel() == ("applied", None)
    assert hall.said(entry)["seq"] == setting["seq"]


def test_a_round_start_that_passes_after_its_time_starts_at_once_and_says_how_late(hall):
    soon = datetime.datetime.fromtimestamp(hall.now_ms() // 1000 + 5, datetime.UTC)
    held(hall)
    entry = start_round(hall, soon.strftime("%H:%M:%S"))  # 5 s ahead
    wait_for(lambda: hall.proxy.waiting("down") > 0, what="the start held on its way")
    hall.later(8)  # held past its time (8 s: still fresh)
    hall.proxy.clear()
    assert hall.until_answered(entry)["state"] == "applied"
    (started,) = hall.records("round_start")
    start_ms = hall.rounds.current["start_ms"]
    late_ms = hall.now_ms() - start_ms  # taken as it passed, at the clock's time now: 3 to 4 s late
    assert started["start_ms"] == start_ms and started["late_ms"] == late_ms and 3000 <= late_ms < 4000
    assert hall.round_panel() == ("applied", None)


def test_a_round_start_held_past_ten_seconds_is_refused_and_the_page_says_not_delivered(hall):
    held(hall)
    entry = start_round(hall)
    wait_for(lambda: hall.proxy.waiting("down") > 0, what="the start held on its way")
    hall.later(12)  # the access point back 12 s later: made more than 10 s before, stale
    hall.proxy.clear()
    said = hall.until_answered(entry)
    assert said["state"] == "not delivered" and "a stale command: made 12.0 s before" in said["reason"]
    state, reason = hall.round_panel()
    assert state == "not delivered" and reason == said["reason"]
    assert [r for r in hall.records("set") if r.get("round")] == [] and hall.records("round_start") == []
    # started again from the page: taken, once
    again = start_round(hall)
    assert hall.until_answered(again)["state"] == "applied"
    hall.later(11)
    for _ in range(10):
        hall.step()
    assert [r["by"] for r in hall.records("set") if r.get("round")] == [again["id"]]
    assert len(hall.records("round_start")) == 1 and hall.round_panel() == ("applied", None)


def call_answer(hall, answer):
    """The director's answer `answer` to board 1's open call, as the page sends it; its audit line."""
    seq = hall.board()["call"]["seq"]
    return act_as(hall, BY, "10.0.0.5", "call", f"call {answer} {seq}", "c1", {"call": seq, "answer": answer})


def test_a_call_answer_held_on_its_way_is_applied_once_or_refused_as_stale(hall):
    sim = hall.sim
    tap(sim, "B", 1)  # play, then the players stop the clock and call the director
    for t_s in (3, 4, 4.5, 5):
        tap(sim, "STOP", t_s)
    wait_for(lambda: hall.step() and (hall.board() or {}).get("call"), what="the call on the page")
    held(hall)
    taken = call_answer(hall, "taken")
    wait_for(lambda: hall.proxy.waiting("down") > 0, what="the answer held on its way")
    assert hall.said(taken) == {"state": "no answer yet"}
    hall.later(3)
    hall.proxy.clear()
    assert hall.until_answered(taken)["state"] == "applied"
    for _ in range(10):
        hall.step()
    assert [(r["answer"], r["by"]) for r in hall.records("call_answer")] == [("taken", taken["id"])]
    assert sim.view().call == "taken"  # the panels say TD COMING
    wait_for(lambda: hall.step() and hall.board()["call"]["state"] == "taken", what="the page: taken")
    # the next answer held past 10 s: refused, the call still open on the page and at the board
    held(hall)
    done = call_answer(hall, "done")
    wait_for(lambda: hall.proxy.waiting("down") > 0, what="the answer held on its way")
    hall.later(11)
    hall.proxy.clear()
    said = hall.until_answered(done)
    assert said["state"] == "not delivered" and "a stale command: made 11.0 s before" in said["reason"]
    assert len(hall.records("call_answer")) == 1 and sim.view().call == "taken"
    assert hall.board()["call"]["state"] == "taken"
    again = call_answer(hall, "done")  # answered again: taken once, the call closed
    assert hall.until_answered(again)["state"] == "applied"
    wait_for(lambda: hall.step() and hall.board()["call"] is None, what="the call closed on the page")
    assert [r["by"] for r in hall.records("call_answer")] == [taken["id"], again["id"]]
