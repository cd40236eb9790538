"""Calling the director from the board: the gesture, the records, the answers, a restart.

The gesture (docs/player-guide.md, docs/rules.md): on a stopped, fresh or ended clock, tap STOP
three times within 2 s. It never acts on the game, and passes through no other gesture.
"""

import pytest

from conftest import events, tap
from tileclock.clock.button_timing import ButtonTiming
from tileclock.clock.core import GameClock
from tileclock.clock.history import split_games, view_at
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config_schema import Config
from tileclock.device.journal import Journal
from tileclock.device.screen.face import top_left_text
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import CommandError, parse_command, unframe, with_crc

STOPPED = "0 press B\n10 press STOP\n"
GAME_EVENTS = ("start", "switch", "resume", "pause", "end", "adjust", "late_start", "reopen", "new_game")


def taps(t_s, count=3, apart_s=0.5):
    """STOP tapped `count` times from `t_s`, `apart_s` apart (each press 0.1 s)."""
    return "".join(f"{t_s + n * apart_s:g} press STOP\n" for n in range(count))


def game_of(records):
    """What the game did: every record that acts on it, with the sides' times."""
    return [(r["ev"], r["state"], r["A"], r["B"]) for r in records if r["ev"] in GAME_EVENTS]


def test_three_stop_taps_on_a_stopped_clock_call_the_director_and_change_nothing_else(sim):
    called = sim(STOPPED + taps(20) + "40 press A\n60 until\n")
    plain = sim(STOPPED + "40 press A\n60 until\n")
    (call,) = events(called, "call")
    assert call["t_ms"] == 21_100 and call["button"] == "STOP" and call["state"] == "paused"
    assert game_of(called) == game_of(plain)  # no end asked, no time moved, the game runs on
    assert called[-1]["A"] == plain[-1]["A"] and called[-1]["B"] == plain[-1]["B"]
    # the taps before the third mean nothing, as any short STOP on a stopped clock (docs/rules.md)
    assert [r["reason"] for r in events(called, "ignored")] == ["stopped", "stopped"]


def test_two_taps_or_three_spread_over_more_than_the_window_call_no_one(sim):
    assert not events(sim(STOPPED + taps(20, count=2) + "30 until\n"), "call")
    assert not events(sim(STOPPED + taps(20, apart_s=1.0) + "30 until\n"), "call")  # 2.1 s in all
    (call,) = events(sim(STOPPED + "20 press STOP\n" + taps(21.5) + "30 until\n"), "call")
    assert call["t_ms"] == 22_600  # the last three of four taps fall within 2 s


def test_the_call_works_on_a_fresh_game_and_on_an_ended_one_which_can_still_be_reopened(sim):
    fresh = sim(taps(5) + "20 until\n")
    assert [r["ev"] for r in fresh] == ["new_game", "ignored", "ignored", "call", "status"]
    ended = sim(STOPPED + "20 hold STOP 2\n23 press STOP\n" + taps(30) + "40 send reopen\n50 until\n")
    assert events(ended, "call")[0]["state"] == "ended"
    assert len(events(ended, "new_game")) == 1 and events(ended, "reopen")  # the old game is still there


def test_a_call_never_passes_through_the_end_or_a_new_game(sim):
    """The reviewer's case: a call hold let go at 4.5 s armed the end (stopped) or started a new game
    (ended). Taps are shorter than the end's hold, and a hold is what it was before calls."""
    asked = sim(STOPPED + taps(20) + "22 press STOP\n30 until\n")  # retrying: one more tap ends nothing
    assert events(asked, "call") and not events(asked, "end") and asked[-1]["state"] == "paused"
    held = sim(STOPPED + "20 hold STOP 6\n27 press STOP\n30 until\n")  # 6 s: the end's hold, as ever
    assert not events(held, "call") and events(held, "end")[0]["reason"] == "stop_hold"
    ended = STOPPED + "20 hold STOP 2\n23 press STOP\n"
    assert len(events(sim(ended + "30 hold STOP 6\n40 until\n"), "new_game")) == 2  # the new game's hold
    assert len(events(sim(ended + taps(30) + "40 until\n"), "new_game")) == 1


def test_while_the_end_asks_for_confirmation_a_stop_press_confirms_it_and_is_no_tap(sim):
    records = sim(STOPPED + "20 hold STOP 2\n" + taps(23) + "30 until\n")
    assert events(records, "end")[0]["t_ms"] == 23_000 and not events(records, "call")
    records = sim(STOPPED + "20 hold STOP 2\n" + taps(23, count=4) + "30 until\n")
    assert events(records, "call")[0]["state"] == "ended"  # the three taps after the confirmation


def test_the_stop_press_that_stopped_a_running_clock_is_no_tap(sim):
    records = sim("0 press B\n" + taps(10) + "20 until\n")
    assert events(records, "pause")[0]["t_ms"] == 10_000 and not events(records, "call")
    assert events(sim("0 press B\n" + taps(10, count=4) + "20 until\n"), "call")


def test_a_side_press_between_taps_is_what_the_rules_say_and_the_count_starts_again(sim):
    ended = STOPPED + "20 hold STOP 2\n23 press STOP\n"
    records = sim(ended + taps(30, count=2) + "31.2 press A\n31.5 press STOP\n40 until\n")
    assert not events(records, "call") and events(records, "ignored")[-2]["reason"] == "ended"
    records = sim(STOPPED + taps(20, count=2) + "21.2 press A\n30 until\n")  # plays on: B runs
    assert not events(records, "call") and events(records, "resume")[0]["button"] == "A"
    # a side pressed during a tap (STOP down less than 0.5 s) counts on its own, never as a chord
    records = sim(STOPPED + taps(20, count=2) + "21 down STOP\n21.05 press B\n21.2 up STOP\n30 until\n")
    assert not events(records, "call", "adjust") and events(records, "resume")[0]["button"] == "B"


def test_chatter_inside_a_tap_is_no_tap_and_a_stuck_stop_never_calls(sim):
    def chattering_tap(t_s):  # held 0.2 s, its contact opening for 3 ms in the middle (CLOCK_RULES §10)
        return f"{t_s:.3f} down STOP\n{t_s + 0.1:.3f} up STOP\n{t_s + 0.103:.3f} down STOP\n{t_s + 0.2:.3f} up STOP\n"

    records = sim(STOPPED + chattering_tap(20) + chattering_tap(20.5) + "30 until\n")
    assert not events(records, "call") and len(events(records, "ignored")) == 2
    records = sim(STOPPED + chattering_tap(20) + chattering_tap(20.5) + chattering_tap(21) + "30 until\n")
    assert len(events(records, "call")) == 1
    records = sim(STOPPED + "20 hold STOP 12\n" + taps(32.2, count=2) + "40 until\n")
    assert not events(records, "call") and events(records, "fault")[0]["part"] == "button STOP"


def test_a_press_that_wakes_dark_panels_is_no_tap(sim):
    """After 30 idle minutes the panels are dark: the first press only wakes them (docs/player-guide.md)."""
    records = sim(STOPPED + taps(32 * 60) + "33:00 until\n")
    assert [r["reason"] for r in events(records, "ignored")] == ["wake", "stopped", "stopped"]
    assert not events(records, "call")
    (call,) = events(sim(STOPPED + taps(32 * 60, count=4) + "33:00 until\n"), "call")
    assert call["t_ms"] == (32 * 60 + 1.5) * 1000 + 100


def test_the_panels_ask_nothing_for_a_call_and_show_it_on_both_sides():
    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    tap(clock, "B", 0)
    tap(clock, "STOP", 10)
    clock.edge("STOP", True, 20 * NS_PER_S)
    clock.advance(26 * NS_PER_S)
    assert clock.view(26 * NS_PER_S).hint == "end_game"  # held past 5 s: still the end's hold
    clock.edge("STOP", False, 26 * NS_PER_S)
    clock.advance(27 * NS_PER_S)
    assert clock.view(27 * NS_PER_S).hint == "confirm_end"
    clock.advance(40 * NS_PER_S)
    for t_s in (40, 40.4, 40.8):
        tap(clock, "STOP", t_s)
    view = clock.view(42 * NS_PER_S)
    assert view.call == "called" and view.hint is None
    assert top_left_text(view) == "CALLED TD"  # on both panels (goldens: tests/test_screens.py)


def test_the_director_answers_taken_then_done_and_the_panels_follow(sim):
    records = sim(STOPPED + taps(20) + "30 send call taken 6 by=page-7q4k\n50 send call done 6\n60 until\n")
    taken, done = events(records, "call_answer")
    assert (taken["call"], taken["answer"], taken["by"], taken["source"]) == (
        6,
        "taken",
        "page-7q4k",
        "serial",
    )
    assert (done["call"], done["answer"], done["t_ms"]) == (6, "done", 50_000) and "by" not in done
    assert game_of(records) == game_of(sim(STOPPED + "60 until\n"))


def test_an_answer_to_a_call_not_open_is_refused_with_an_error_naming_it(sim):
    records = sim(
        STOPPED + "20 send call done 3\n" + taps(21) + "30 send call done 99\n31 send call done 7\n"
    )
    errors = events(records, "error")
    assert "no call is" in errors[0]["detail"] and "call 7 is" in errors[1]["detail"]
    assert [r["answer"] for r in events(records, "call_answer")] == ["done"]
    # a second call while one is open is recorded and ignored: the panels already show it
    records = sim(STOPPED + taps(20) + taps(30) + "40 until\n")
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
        STOPPED + taps(20) + "30 hold STOP 2\n33 press STOP\n40 hold STOP 2.5\n50 send call done 6\n"
    )
    new_game = events(records, "new_game")[-1]
    assert new_game["call"] == 6 and new_game["call_taken"] is False
    # the time of day of the raise goes with it: the hall's page counts the wait from there
    (call,) = events(records, "call")
    assert call["wall_ms"] == SIM_EPOCH_NS // 10**6 + 21_100 == new_game["call_wall_ms"]
    assert events(records, "call_answer")[0]["answer"] == "done"
    # replay of the new game alone (its records begin at its `new_game`) shows the call it was given
    game = split_games(records)[-1]
    assert view_at(game, after_seq=new_game["seq"])[0].call == "called"
    assert view_at(game, after_seq=events(records, "call_answer")[0]["seq"])[0].call is None


def test_an_open_call_survives_a_restart_of_the_clock(tmp_path):
    folder = str(tmp_path / "journal")
    sim = Simulator(Config(), journal=Journal.open(folder), boot_id="boot-1")
    tap(sim, "B", 1)
    tap(sim, "STOP", 10)
    for t_s in (20, 20.5, 21):  # STOP tapped three times
        tap(sim, "STOP", t_s)
    (call,) = [r["seq"] for r in map(unframe, sim.serial_lines()) if r["ev"] == "call"]
    sim.send(with_crc(f"call taken {call} by=page-1"), 30 * NS_PER_S)
    sim.finish(31 * NS_PER_S)
    sim.close()
    again = Simulator(Config(), journal=Journal.open(folder), boot_id="boot-2")  # a power cut and back
    assert again.clock.view(again.time()).call == "taken"
    assert again.clock.play.calls.open.wall_ms == SIM_EPOCH_NS // 10**6 + 21_100  # the raise's time of day
    again.send(with_crc(f"call done {call}"), again.time() + NS_PER_S)
    again.finish(again.time() + 2 * NS_PER_S)
    lines = [unframe(line) for line in again.serial_lines()]
    assert [(r["call"], r["answer"]) for r in lines if r["ev"] == "call_answer"] == [(call, "done")]
    assert again.clock.view(again.time()).call is None


def test_a_call_says_its_time_of_day_only_when_the_clock_knows_one():
    clock = GameClock(PROFILES["naspa"])  # no wall clock of its own (no device), no `set wall=`
    clock.new_game(0)
    made = [r.as_dict() for t_s in (20, 20.5, 21) for r in tap(clock, "STOP", t_s)]
    (call,) = events(made, "call")
    assert "wall_ms" not in call  # unknown, never a wrong one: the page counts from the clock's game time
    clock.set_scene(30 * NS_PER_S, wall_ms=1_764_079_200_000)  # a director's `set wall=` at 30 s
    clock.answer_call(31 * NS_PER_S, call["seq"], "done")
    made = [r.as_dict() for t_s in (40, 40.5, 41) for r in tap(clock, "STOP", t_s)]
    assert events(made, "call")[0]["wall_ms"] == 1_764_079_200_000 + 11_100
    clock.play.wall = lambda t_ns: 1_700_000_000_000 + t_ns // 10**6  # the device's wall clock comes first
    clock.answer_call(50 * NS_PER_S, events(made, "call")[0]["seq"], "done")
    made = [r.as_dict() for t_s in (60, 60.5, 61) for r in tap(clock, "STOP", t_s)]
    assert events(made, "call")[0]["wall_ms"] == 1_700_000_061_100
    clock.play.wall = lambda t_ns: 61_100  # a Pi's unset wall clock (1970): the director's `set wall=`, then
    clock.answer_call(70 * NS_PER_S, events(made, "call")[0]["seq"], "done")
    made = [r.as_dict() for t_s in (80, 80.5, 81) for r in tap(clock, "STOP", t_s)]
    assert events(made, "call")[0]["wall_ms"] == 1_764_079_200_000 + 51_100  # never a record refused


CALLED_AND_CORRECTED = (
    STOPPED + taps(20) + "30 send call taken 6 by=page-7q4k\n40 send adjust B +60000 by=page-7q4k\n"
    "50 send call done 6 by=page-7q4k\n60 hold STOP 2\n63 press STOP\n"
)


def test_the_sheet_notes_each_call_and_how_it_was_answered(sim):
    from tileclock.director.records.facts import game_facts
    from tileclock.director.records.history import iter_games

    (game,) = list(iter_games(sim(CALLED_AND_CORRECTED)))
    notes = game_facts(game).notes
    assert (
        "the board called the director at 0:21.1 (call 6): taken at 0:30 by page-7q4k, done at 0:50 by page-7q4k"
        in notes
    )


def test_replay_and_the_picture_show_the_directors_actions_in_place(sim):
    from tileclock.director.records.history import iter_games
    from tileclock.director.records.replay import describe, view_at

    (game,) = list(iter_games(sim(CALLED_AND_CORRECTED)))
    text = describe(*view_at(game, at_ms=35_000), game)
    assert "a call to the director is open: taken" in text
    assert "0:30.000 call 6 taken (serial, by page-7q4k)" in text and "B +1:00" not in text  # not yet
    text = describe(*view_at(game, at_ms=45_000), game)
    assert "0:40.000 B +1:00 (serial, by page-7q4k)" in text
    plot = pytest.importorskip("tileclock.director.records.plot")
    picture = plot.picture(game)
    labels = [(mark.t_ms, mark.label) for mark in picture.marks_of("director")]
    assert (21_100, "the board called the director") in labels
    assert (50_000, "call 6 done (page-7q4k)") in labels
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


def test_a_correction_and_the_rounds_time_show_first_and_the_call_keeps_its_own_line():
    """CLOCK_RULES §6: every correction shows. The call never hides it, nor the school round's
    time left; `CALL DONE` never replaces a correction's notice (goldens: call_corrected,
    call_done_corrected, call_round)."""
    from tileclock.device.screen.face import call_mark_text

    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    tap(clock, "B", 0)
    tap(clock, "STOP", 10)
    for t_s in (20, 20.5, 21):
        tap(clock, "STOP", t_s)
    call = clock.play.calls.open.seq
    clock.answer_call(30 * NS_PER_S, call, "taken")
    clock.adjust(40 * NS_PER_S, "B", 60_000)
    view = clock.view(40 * NS_PER_S)
    assert (top_left_text(view), call_mark_text(view)) == ("B +1:00", "TD COMING")
    clock.answer_call(50 * NS_PER_S, call, "done")
    view = clock.view(50 * NS_PER_S)
    assert (top_left_text(view), call_mark_text(view)) == ("B +1:00", None)
    school = GameClock(PROFILES["school"])
    school.new_game(0)
    tap(school, "A", 0)
    tap(school, "STOP", 30 * 60)
    for t_s in (1805, 1805.5, 1806):
        tap(school, "STOP", t_s)
    school.advance(45 * 60 * NS_PER_S)
    view = school.view(45 * 60 * NS_PER_S)
    assert (top_left_text(view), call_mark_text(view)) == ("ROUND 5:00", "CALLED TD")


def test_the_clock_counts_the_taps_its_config_asks_for():
    def calls(timing, taps_s):
        sim = Simulator(Config(timing=timing))
        tap(sim, "B", 1)
        tap(sim, "STOP", 10)
        for t_s in taps_s:
            tap(sim, "STOP", t_s)
        sim.finish(30 * NS_PER_S)
        return [r["t_ms"] for r in map(unframe, sim.serial_lines()) if r["ev"] == "call"]

    four = ButtonTiming(call_taps=4, call_window_ms=3000)
    assert calls(four, (20, 20.5, 21)) == [] and calls(four, (20, 20.5, 21, 21.5)) == [21_600]
    assert calls(ButtonTiming(call_window_ms=1000), (20, 20.5, 21)) == []  # 1.1 s: too slow
