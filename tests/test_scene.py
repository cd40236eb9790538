"""The director sets the scene: the time of day, the round, the table and the starting times,
through the serial line with a checked command; the records carry them; a restart keeps them and
a power cut forgets only the time of day, which is then unknown, never wrong."""

import pytest

from conftest import tap
from support.cable import Plug
from support.game_end import end_game
from support.serial_link import command, records
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.assembly import open_journal
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import with_crc

S = NS_PER_S
WALL = 1_717_430_400_000  # 2024-06-03 16:00:00 UTC


@pytest.fixture
def plug(tmp_path):
    plug = Plug(str(tmp_path), "ttyCLOCK")
    yield plug
    if plug.master is not None:
        plug.pull()


def start(plug, state_dir=None, time=None, boot_id=None):
    return Simulator(
        Config(),
        serial_url=plug.path,
        journal=open_journal(state_dir) if state_dir else None,
        time=time,
        boot_id=boot_id,
    )


def by_ev(lines, ev):
    return [r for r in records(lines) if r["ev"] == ev]


def test_a_set_before_anyone_presses_places_this_game_and_tells_the_time_of_day(plug):
    sim = start(plug)
    plug.read_lines(2)  # boot, new_game
    command(sim, plug, with_crc(f"set wall={WALL} round=3 table=12 A=27:00"), 5)
    (scene,) = records(plug.read_lines(1))
    assert scene["ev"] == "set" and scene["applies"] == "this"
    assert (scene["wall_ms"], scene["round"], scene["table"]) == (WALL, 3, "12")
    assert scene["time_ms"] == {"A": 1_620_000} and scene["start_wall_ms"] == WALL - 5000
    tap(sim, "B", 10)  # A's clock runs, from its own 27:00
    end_game(sim, 40)
    end = by_ev(plug.drain(), "end")[0]
    assert end["A"]["shown"] == "26:30"
    assert (end["round"], end["table"], end["wall_ms"]) == (3, "12", WALL + 44_000 - 5000)
    summary = end["summary"]
    assert (summary["round"], summary["table"]) == (3, "12")
    assert (summary["wall_start_ms"], summary["wall_end_ms"]) == (WALL - 5000, WALL + 39_000)
    sim.close()


def test_without_a_set_the_time_of_day_is_unknown_never_wrong(plug):
    sim = start(plug)
    new_game = by_ev(plug.read_lines(2), "new_game")[0]
    assert (new_game["wall_ms"], new_game["round"], new_game["table"]) == (None, None, None)
    tap(sim, "B", 1)
    end_game(sim, 10)
    end = by_ev(plug.drain(), "end")[0]
    assert end["wall_ms"] is None and end["summary"]["wall_start_ms"] is None
    assert end["summary"]["wall_end_ms"] is None
    sim.close()


def test_a_set_during_a_game_is_for_the_next_one_and_its_starting_times_for_that_one_only(plug):
    sim = start(plug)
    tap(sim, "B", 0)
    plug.read_lines(3)
    command(sim, plug, with_crc(f"set wall={WALL} round=4 table=Hall-B_7 B=30:00"), 5)
    (scene,) = records(plug.read_lines(1))
    assert scene["applies"] == "next" and scene["start_wall_ms"] == WALL - 5000  # this game's start
    end_game(sim, 10)
    sim.set_button("STOP", True, int(20 * S))  # hold STOP on the ended game: a new game
    sim.set_button("STOP", False, int(22.5 * S))
    sim.run_to(23 * S)  # the release counts once STOP has held open 5 ms
    lines = plug.drain()
    end, new_game = by_ev(lines, "end")[0], by_ev(lines, "new_game")[0]
    assert (end["round"], end["table"]) == (None, None)  # the game in play keeps its place
    assert (new_game["round"], new_game["table"], new_game["wall_ms"]) == (4, "Hall-B_7", WALL + 17_500)
    assert new_game["time_ms"] == {"A": 1_500_000, "B": 1_800_000}
    end_game(sim, 30)
    sim.set_button("STOP", True, int(40 * S))
    sim.set_button("STOP", False, int(42.5 * S))
    sim.run_to(43 * S)
    third = by_ev(plug.drain(), "new_game")[0]
    assert third["time_ms"] == {"A": 1_500_000, "B": 1_500_000}  # extra time was for one game
    assert (third["round"], third["table"]) == (4, "Hall-B_7")  # round and table stay
    sim.close()


def test_a_restart_keeps_what_a_set_gave_the_next_game_and_the_place_the_next_game_opened_in(tmp_path, plug):
    state, time = str(tmp_path / "state"), VirtualTime()
    sim = start(plug, state, time, boot_id="boot-1")
    tap(sim, "B", 0)
    command(sim, plug, with_crc("set round=4 table=Hall-B_7 B=30:00"), 5)  # for the next game
    sim.close()
    sim = start(plug, state, time, boot_id="boot-1")  # the process restarted mid-game
    end_game(sim, 10)
    sim.set_button("STOP", True, int(20 * S))  # hold STOP on the ended game: a new game
    sim.set_button("STOP", False, int(22.5 * S))
    sim.run_to(23 * S)
    sim.close()
    new_game = by_ev(plug.drain(), "new_game")[-1]
    assert (new_game["round"], new_game["table"], new_game["time_ms"]["B"]) == (4, "Hall-B_7", 1_800_000)
    sim = start(plug, state, time, boot_id="boot-1")  # and again, in the new game
    tap(sim, "B", 25)
    end_game(sim, 30)
    sim.close()
    end = by_ev(plug.drain(), "end")[-1]
    assert (end["round"], end["table"]) == (4, "Hall-B_7")  # the place its new_game gave it


@pytest.mark.parametrize(
    "line, why",
    [
        (f"set wall={WALL} round=3", "needs its CRC"),
        (with_crc("set table=../x"), "set: 'table=../x'"),
        (with_crc("set table==SUM(A1)"), "set: 'table==SUM(A1)'"),
        (with_crc("set wall=12"), "set: 'wall=12'"),  # 1970: a director's computer with no clock set
        (with_crc("set round=0"), "set: 'round=0'"),
        (with_crc("set A=25"), "set: 'A=25'"),
        (with_crc("set"), "nothing to set"),
    ],
)
def test_a_bad_set_is_refused_by_name_and_changes_nothing(plug, line, why):
    sim = start(plug)
    plug.read_lines(2)
    command(sim, plug, line, 1)
    (error,) = records(plug.read_lines(1))
    assert error["ev"] == "error" and why in error["detail"]
    assert error["line"] == line  # the line refused, quoted whole for the director
    tap(sim, "B", 2)
    end_game(sim, 5)
    end = by_ev(plug.drain(), "end")[0]
    assert (end["round"], end["table"], end["wall_ms"]) == (None, None, None)
    assert end["A"]["shown"] == "24:57"
    sim.close()


def test_a_restart_keeps_the_scene_and_a_power_cut_forgets_only_the_time_of_day(tmp_path, plug):
    state = str(tmp_path / "state")
    time = VirtualTime()
    sim = start(plug, state, time, boot_id="boot-1")
    command(sim, plug, with_crc(f"set wall={WALL} round=2 table=9 A=26:00"), 1)
    tap(sim, "B", 2)
    sim.run_to(10 * S)
    sim.close()
    plug.drain()

    again = start(plug, state, time, boot_id="boot-1")  # the process restarted; the Pi did not
    again.run_to(12 * S)
    end_game(again, 12)
    end = by_ev(plug.drain(), "end")[0]
    assert (end["round"], end["table"]) == (2, "9")
    assert end["summary"]["wall_start_ms"] == WALL - 1000 and end["wall_ms"] == WALL + 15_000
    assert end["A"]["shown"] == "25:50"  # its own 26:00, run from 2 s to 12 s: the restart cost nothing
    again.close()

    cut = start(plug, state, VirtualTime(), boot_id="boot-2")  # power cut: a new monotonic clock
    end_game(cut, 1)
    cut.set_button("STOP", True, int(10 * S))
    cut.set_button("STOP", False, int(12.5 * S))
    new_game = by_ev(plug.drain(), "new_game")[0]
    assert new_game["wall_ms"] is None  # unknown after a power cut, until set again
    assert (new_game["round"], new_game["table"]) == (2, "9")
    cut.close()
