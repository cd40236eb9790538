"""Calling the director from the board: the gesture, the records, the answers, a restart.

The gesture (docs/player-guide.md, docs/rules.md): on a stopped, fresh or ended clock, hold STOP
5 s and let go. It never acts on the game.
"""

import pytest

from conftest import events, tap
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config import Config
from tileclock.device.journal import Journal
from tileclock.device.render import top_left_text
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import CommandError, parse_command, unframe, with_crc

STOPPED = "0 press B\n10 press STOP\n"
GAME_EVENTS = ("start", "switch", "resume", "pause", "end", "adjust", "late_start", "reopen", "new_game")


def game_of(records):
    """What the game did: every record that acts on it, with the sides' times."""
    return [(r["ev"], r["state"], r["A"], r["B"]) for r in records if r["ev"] in GAME_EVENTS]


def test_holding_stop_5_s_on_a_stopped_clock_calls_the_director_and_changes_nothing_else(sim):
    called = sim(STOPPED + "20 hold STOP 5.5\n40 press A\n60 until\n")
    plain = sim(STOPPED + "40 press A\n60 until\n")
    (call,) = events(called, "call")
    assert call["t_ms"] == 25_500 and call["button"] == "STOP" and call["state"] == "paused"
    assert game_of(called) == game_of(plain)  # no end asked, no time moved, the game runs on
    assert called[-1]["A"] == plain[-1]["A"] and called[-1]["B"] == plain[-1]["B"]


def test_the_call_works_on_a_fresh_game_and_on_an_ended_one_without_starting_another(sim):
    fresh = sim("5 hold STOP 6\n20 until\n")
    assert [r["ev"] for r in fresh] == ["new_game", "call", "status"]
    ended = sim(STOPPED + "20 hold STOP 2\n23 press STOP\n30 hold STOP 5\n40 until\n")
    assert events(ended, "call")[0]["state"] == "ended"
    assert len(events(ended, "new_game")) == 1  # the longer hold is a call, never a new game


def test_the_shorter_holds_keep_their_meaning(sim):
    records = sim(STOPPED + "20 hold STOP 4.9\n30 until\n")
    assert not events(records, "call") and not events(records, "end")  # asks to confirm the end
    records = sim(STOPPED + "20 hold STOP 4.9\n26 press STOP\n30 until\n")
    assert events(records, "end")[0]["reason"] == "stop_hold" and not events(records, "call")


def test_a_stop_that_stopped_a_running_clock_never_calls_and_a_stuck_stop_never_does(sim):
    records = sim("0 press B\n10 hold STOP 7\n30 until\n")
    assert not events(records, "call")
    records = sim(STOPPED + "20 hold STOP 12\n40 until\n")  # stuck at 10 s: its release is nothing
    assert not events(records, "call") and events(records, "fault")[0]["part"] == "button STOP"


def test_the_panels_say_what_letting_go_will_do_then_show_the_call_on_both_sides():
    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    tap(clock, "B", 0)
    tap(clock, "STOP", 10)
    clock.edge("STOP", True, 20 * NS_PER_S)
    clock.advance(23 * NS_PER_S)
    assert clock.view(23 * NS_PER_S).hint == "end_game"
    assert clock.next_deadline() == 25 * NS_PER_S  # the hint changes at 5 s: the loop wakes for it
    clock.advance(25 * NS_PER_S)
    assert clock.view(25 * NS_PER_S).hint == "call"
    clock.edge("STOP", False, 26 * NS_PER_S)
    clock.advance(27 * NS_PER_S)
    view = clock.view(27 * NS_PER_S)
    assert view.call == "called" and view.hint is None
    assert top_left_text(view) == "CALLED TD"  # on both panels (goldens: tests/test_screens.py)


def test_the_director_answers_taken_then_done_and_the_panels_follow(sim):
    records = sim(
        STOPPED + "20 hold STOP 5.5\n30 send call taken 4 by=page-7q4k\n50 send call done 4\n60 until\n"
    )
    taken, done = events(records, "call_answer")
    assert (taken["call"], taken["answer"], taken["by"], taken["source"]) == (
        4,
        "taken",
        "page-7q4k",
        "serial",
    )
    assert (done["call"], done["answer"], done["t_ms"]) == (4, "done", 50_000) and "by" not in done
    assert game_of(records) == game_of(sim(STOPPED + "60 until\n"))


def test_an_answer_to_a_call_not_open_is_refused_with_an_error_naming_it(sim):
    records = sim(
        STOPPED + "20 send call done 3\n21 hold STOP 5.5\n30 send call done 99\n31 send call done 5\n"
    )
    errors = events(records, "error")
    assert "no call is" in errors[0]["detail"] and "call 5 is" in errors[1]["detail"]
    assert [r["answer"] for r in events(records, "call_answer")] == ["done"]
    # a second call while one is open is recorded and ignored: the panels already show it
    records = sim(STOPPED + "20 hold STOP 5.5\n30 hold STOP 5.5\n40 until\n")
    assert len(events(records, "call")) == 1 and events(records, "ignored")[-1]["reason"] == "called"


def test_answers_need_their_crc_and_who_sent_a_command_is_a_label():
    assert parse_command(with_crc("call taken 57").encode()).args == (57, "taken")
    assert parse_command(with_crc("adjust B +60000 by=page-3f2a").encode()).by == "page-3f2a"
    for bad in (
        b"call taken 57",
        with_crc("call maybe 57").encode(),
        with_crc("adjust B +60000 by=a/b").encode(),
    ):
        try:
            parse_command(bad)
        except CommandError:
            continue
        raise AssertionError(f"{bad!r} was taken")


def test_a_call_open_as_a_new_game_starts_is_carried_into_it(sim):
    records = sim(
        STOPPED + "20 hold STOP 5.5\n30 hold STOP 2\n33 press STOP\n40 hold STOP 2.5\n50 send call done 4\n"
    )
    new_game = events(records, "new_game")[-1]
    assert new_game["call"] == 4 and new_game["call_taken"] is False
    assert events(records, "call_answer")[0]["answer"] == "done"


def test_an_open_call_survives_a_restart_of_the_clock(tmp_path):
    folder = str(tmp_path / "journal")
    sim = Simulator(Config(), journal=Journal(folder), boot_id="boot-1")
    tap(sim, "B", 1)
    tap(sim, "STOP", 10)
    tap(sim, "STOP", 20, hold_s=5.5)
    (call,) = [r["seq"] for r in map(unframe, sim.serial_lines()) if r["ev"] == "call"]
    sim.send(with_crc(f"call taken {call} by=page-1"), 30 * NS_PER_S)
    sim.finish(31 * NS_PER_S)
    sim.close()
    again = Simulator(Config(), journal=Journal(folder), boot_id="boot-2")  # a power cut and back
    assert again.clock.view(again.time()).call == "taken"
    again.send(with_crc(f"call done {call}"), again.time() + NS_PER_S)
    again.finish(again.time() + 2 * NS_PER_S)
    lines = [unframe(line) for line in again.serial_lines()]
    assert [(r["call"], r["answer"]) for r in lines if r["ev"] == "call_answer"] == [(call, "done")]
    assert again.clock.view(again.time()).call is None


CALLED_AND_CORRECTED = (
    STOPPED + "20 hold STOP 5.5\n30 send call taken 4 by=page-7q4k\n40 send adjust B +60000 by=page-7q4k\n"
    "50 send call done 4 by=page-7q4k\n60 hold STOP 2\n63 press STOP\n"
)


def test_the_sheet_notes_each_call_and_how_it_was_answered(sim):
    from tileclock.director.records.facts import game_facts
    from tileclock.director.records.history import iter_games

    (game,) = list(iter_games(sim(CALLED_AND_CORRECTED)))
    notes = game_facts(game).notes
    assert (
        "the board called the director at 0:25.5 (call 4): taken at 0:30 by page-7q4k, done at 0:50 by page-7q4k"
        in notes
    )


def test_replay_and_the_picture_show_the_directors_actions_in_place(sim):
    from tileclock.director.records.history import iter_games
    from tileclock.director.records.replay import describe, view_at

    (game,) = list(iter_games(sim(CALLED_AND_CORRECTED)))
    text = describe(*view_at(game, at_ms=35_000), game)
    assert "a call to the director is open: taken" in text
    assert "0:30.000 call 4 taken (serial, by page-7q4k)" in text and "B +1:00" not in text  # not yet
    text = describe(*view_at(game, at_ms=45_000), game)
    assert "0:40.000 B +1:00 (serial, by page-7q4k)" in text
    plot = pytest.importorskip("tileclock.director.records.plot")
    picture = plot.picture(game)
    labels = [(mark.t_ms, mark.label) for mark in picture.marks_of("director")]
    assert (25_500, "the board called the director") in labels
    assert (50_000, "call 4 done (page-7q4k)") in labels
    assert picture.marks_of("correction")[0].label == "+1:00 page-7q4k"


def test_the_demos_first_board_calls_the_director_on_its_third_move():
    from tileclock.sim.fleet import Player

    player, sim = Player(7, calls=3), Simulator(Config())
    presses = [press for _ in range(3) for press in player.next_presses()]
    for t_ns, button, down in presses:
        sim.set_button(button, down, t_ns)
    sim.finish(presses[-1][0] + NS_PER_S)
    records = [unframe(line) for line in sim.serial_lines()]
    assert [r["ev"] for r in records].count("call") == 1
    assert Player(7).calls is None  # hall-bench's players never call
