"""A player's extra time for one game from the director's collector (`collect --time PORT A=30:00`),
through real pseudo-terminals to a simulated clock (docs/director-guide.md, docs/protocol.md)."""

import os
import select
import time

from conftest import tap
from support.cable import Cable
from support.collecting import FakeClock
from tileclock.cli import main
from tileclock.clock.timecode import NS_PER_S, parse_clock
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.director.follow.collect import ClockFeed, scene_hello
from tileclock.director.follow.start_times import StartTimes
from tileclock.director.records.actions import action_line, clock_actions
from tileclock.sim.simulator import Simulator

END_THEN_NEW_GAME = [("STOP", 0, 0.1), ("STOP", 2, 2.5), ("STOP", 5, 0.1), ("STOP", 8, 2.5)]


class Table:
    """A clock on one end of a cable and a collector with `start_times` on the other."""

    def __init__(self, folder, start_times):
        self.cable = Cable(folder)
        self.state = f"{folder}/state"
        self.director_time = FakeClock()
        hello = scene_hello(3, wall_clock=lambda: 1_717_430_400)
        self.feed = ClockFeed(
            self.cable.b.path, f"{folder}/out", self.director_time, hello, StartTimes(start_times)
        )
        self.sim = Simulator(Config(), serial_url=self.cable.a.path, state_dir=self.state)

    def talk(self, t_s, until=None):
        """Let the collector and the clock talk (the clock at `t_s`): until `until()` holds, an event
        either of them makes (the bytes cross a relay thread, which a loaded machine may run late:
        a number of rounds is no measure); then a few more rounds for anything that follows it."""
        deadline = time.monotonic() + 60  # for a hang, not a speed
        while until is not None and not until():
            assert time.monotonic() < deadline, "the collector and the clock never got there"
            self._round(t_s)
        for _ in range(30):
            self._round(t_s)

    def _round(self, t_s):
        if self.feed.fileno() is not None:
            select.select([self.feed.fileno()], [], [], 0.02)
        self.feed.poll()
        self.sim.daemon.pump(int(t_s * NS_PER_S))

    def notices(self, text):
        return [notice for _, notice in self.feed.store.notices if text in notice]

    def given(self):
        """The clock's `set` records that took starting times."""
        return [r for r in self.records("set") if "time_ms" in r]

    def press(self, presses, at_s):
        """`presses`: (button, seconds after `at_s`, held for seconds)."""
        for button, after_s, hold_s in presses:
            tap(self.sim, button, at_s + after_s, hold_s)

    def power_cut(self):
        self.sim.close()
        self.sim = Simulator(
            Config(), serial_url=self.cable.a.path, state_dir=self.state, time=VirtualTime(0)
        )

    def unplug(self):
        self.cable.pull()
        self.feed.poll()
        assert self.feed.down

    def plug(self, at_s):
        self.cable.replug()
        # the clock's end first: a collector's hello (its `status`) that reached the clock's end
        # before the clock opened its port again is dropped by that open, as a real port's would be
        self.sim.daemon.pump(int(at_s * NS_PER_S))
        assert self.sim.link.failing is None
        self.director_time.now += 1.0  # the collector tries its port again a second after it failed
        self.talk(at_s, until=lambda: self.feed.down is None)

    def replug(self, at_s):
        self.unplug()
        self.plug(at_s)

    def records(self, ev):
        return [r for r in self.sim.journal.records() if r["ev"] == ev]

    def close(self):
        self.sim.close()
        self.feed.close()
        self.cable.pull()


def test_extra_time_goes_to_the_fresh_game_once_through_a_cable_put_back_and_a_power_cut(tmp_path):
    table = Table(str(tmp_path), {"A": 30 * 60})
    table.talk(1, until=lambda: table.given() and table.notices("A=30:00 taken for this game"))
    (given,) = [r for r in table.records("set") if "time_ms" in r]
    assert (given["time_ms"], given["applies"]) == ({"A": 1_800_000}, "this")
    # on the audit trail: who set it, the way it came, and what replay and the history say of it
    scenes = [r for r in table.records("set") if "round" in r]  # sent as the port opens, as the clock boots
    assert {(r["by"], r["source"]) for r in [given, *scenes]} == {("cli", "serial")}
    scene = scenes[0]
    said = {a["seq"]: action_line(a) for a in clock_actions(table.sim.journal.records())}
    assert said[given["seq"]].endswith("set A starts 30:00 (this game) (serial, by cli)")
    assert said[scene["seq"]].endswith("set round 3, time of day 16:00:00 UTC (serial, by cli)")
    assert table.sim.view().side("A").shown == "30:00" and table.sim.view().side("B").shown == "25:00"
    notices = [text for _, text in table.feed.store.notices]
    assert any("A=30:00 taken for this game" in text for text in notices), notices
    # the game runs; a cable put back and a power cut mid-game must not give the next game 30:00 too
    tap(table.sim, "B", 5)
    table.talk(65)
    table.replug(70)
    table.power_cut()
    table.talk(1, until=lambda: len(table.records("boot")) == 2 and len(table.records("set")) >= 3)
    assert len(table.records("boot")) == 2 and len(table.records("set")) >= 3  # the scene, told again
    assert [r for r in table.records("set") if "time_ms" in r] == [given]
    # A ran about 65 s before the power cut: from 30:00, not 25:00
    assert 28 * 60 <= parse_clock(table.sim.view().side("A").shown) < 29 * 60
    table.press(END_THEN_NEW_GAME, 10)
    table.talk(25, until=lambda: len(table.records("new_game")) == 2)
    new_games = table.records("new_game")
    assert new_games[-1]["time_ms"] == {"A": 1_500_000, "B": 1_500_000} and len(new_games) == 2
    assert [r for r in table.records("set") if "time_ms" in r] == [given]  # for one game only
    table.close()


def test_a_collector_that_joins_mid_game_gives_the_extra_time_to_the_next_fresh_game(tmp_path):
    table = Table(str(tmp_path), {"B": 27 * 60})
    # the collector's cable goes in only once the game is under way: it never hears the clock ready
    # (with the cable in from the start, whether it heard `ready` before the first press depended
    # on how the relay thread cut the clock's first lines)
    table.unplug()
    tap(table.sim, "B", 0)
    table.sim.daemon.pump(5 * NS_PER_S)
    table.plug(10)
    table.talk(10, until=lambda: table.notices("B=27:00 waits for a new game"))
    assert not table.given()  # it would go to the next game
    table.press(END_THEN_NEW_GAME, 20)
    table.talk(35, until=table.given)
    (given,) = table.given()
    new_game = table.records("new_game")[-1]
    assert given["applies"] == "this" and given["seq"] > new_game["seq"]
    assert table.sim.view().side("B").shown == "27:00" and table.sim.view().side("A").shown == "25:00"
    table.close()


def test_bad_extra_times_are_refused_before_collecting(tmp_path, capsys, monkeypatch):
    leader, follower = os.openpty()  # a port that exists: collect refuses one that does not
    port = os.ttyname(follower)
    for given, says in [
        (["/dev/ttyUSB9", "A=30:00"], "not one of the ports"),
        ([port, "C=30:00"], "expected A=m:ss or B=m:ss"),
        ([port, "A=30"], 'use "30:00"'),
        ([port, "A=100:00"], "A=m:ss"),
    ]:
        assert main(["collect", port, "--out", str(tmp_path), "--time", *given]) == 2
        assert says in capsys.readouterr().err
    twice = ["--time", port, "A=30:00", "--time", port, "A=31:00"]
    assert main(["collect", port, "--out", str(tmp_path), *twice]) == 2
    assert "already given" in capsys.readouterr().err
    given = {}
    monkeypatch.setattr("tileclock.director.follow.collect.collect", lambda *a, **kw: given.update(kw))
    assert main(["collect", port, "--time", port, "B=30:00", "--time", port, "A=26:30"]) == 0
    assert given["start_times"][port].command == "set A=26:30 B=30:00 by=cli"
    os.close(leader)
    os.close(follower)


def test_the_record_words_a_rounds_start_and_times_for_the_next_game_and_never_crashes():
    records = [
        {"ev": "set", "seq": 4, "t_ms": 0, "applies": "this", "round": 3, "start_ms": 1_717_423_200_000},
        {"ev": "set", "seq": 9, "t_ms": 5_000, "applies": "next", "time_ms": {"B": 1_620_000}},
        {
            "ev": "set",
            "seq": 12,
            "t_ms": 0,
            "applies": "this",
            "start_ms": 1_717_423_200_000,
            "late_ms": 2_000,
        },
        {"ev": "set", "seq": 13, "t_ms": 0, "wall_ms": 10**30, "time_ms": {"A": "x"}},
    ]
    assert [a["what"] for a in clock_actions(records)] == [
        "set round 3, round start 14:00:00 UTC",
        "set B starts 27:00 (next game)",
        "set round start 14:00:00 UTC (0:02 late)",
        "set A starts ? (next game), time of day ?",
    ]
