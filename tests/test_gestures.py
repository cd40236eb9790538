"""Ending and starting games, director's corrections and late starts, through `tileclock sim --script`.

Rules: docs/rules.md#ending-and-starting-games-deliberate-gestures, docs/rules.md#directors-corrections,
docs/rules.md#late-start.
"""

from conftest import events, tap
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.screen.face import band_text

RUNNING_THEN_STOPPED = "0 press B\n10 press STOP\n"


def test_holding_stop_on_a_stopped_clock_then_pressing_it_again_ends_the_game(sim):
    records = sim(RUNNING_THEN_STOPPED + "20 hold STOP 2\n24 press STOP\n30 until\n")
    end = events(records, "end")[0]
    assert end["t_ms"] == 24_000 and end["reason"] == "stop_hold" and end["state"] == "ended"
    assert end["A"]["used_ms"] == 10_000


def test_without_the_confirming_press_within_5_s_nothing_changes(sim):
    records = sim(RUNNING_THEN_STOPPED + "20 hold STOP 2\n27.1 press STOP\n30 until\n")
    assert not events(records, "end") and records[-1]["state"] == "paused"
    # a side's press in the window runs the game on, and a later STOP does not end it
    records = sim(RUNNING_THEN_STOPPED + "20 hold STOP 2\n23 press A\n24 press STOP\n30 until\n")
    assert not events(records, "end") and events(records, "resume") and events(records, "pause")


def test_a_short_stop_on_a_stopped_clock_is_recorded_and_ends_nothing(sim):
    records = sim(RUNNING_THEN_STOPPED + "20 hold STOP 1.9\n30 until\n")
    assert not events(records, "end")
    assert events(records, "ignored")[0]["button"] == "STOP"
    assert records[-1]["state"] == "paused"


def test_a_stop_that_stops_a_running_clock_never_ends_the_game_however_long(sim):
    records = sim("0 press B\n10 hold STOP 9.5\n45 until\n")
    assert [r["ev"] for r in records] == ["new_game", "start", "pause", "status"]
    # held past 10 s it counts as stuck (see test_reliability.py), and its release ends nothing either
    records = sim("0 press B\n10 hold STOP 30\n45 until\n")
    assert [r["ev"] for r in records] == ["new_game", "start", "pause", "fault", "fault_cleared", "status"]


def test_the_same_gesture_on_an_ended_game_starts_a_new_one_keeping_the_old_records(sim):
    records = sim(
        RUNNING_THEN_STOPPED + "20 hold STOP 2\n23 press STOP\n30 hold STOP 2\n40 press B\n45 until\n"
    )
    games = events(records, "new_game")
    assert len(games) == 2
    assert games[1]["t_ms"] == 0 and games[1]["A"]["used_ms"] == 0 and games[1]["state"] == "ready"
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))  # seq 0 is the boot record
    assert records[-1]["t_ms"] == 13_000  # measured from the new game's start at 32 s
    assert records[-1]["A"]["used_ms"] == 5_000


def test_a_tap_during_a_stop_hold_gives_that_side_a_minute(sim):
    records = sim(RUNNING_THEN_STOPPED + "20 down STOP\n20.5 press A\n21 press A\n21.5 press B\n24 up STOP\n")
    adjusts = [(r["player"], r["delta_ms"]) for r in events(records, "adjust")]
    assert adjusts == [("A", 60_000), ("A", 60_000), ("B", 60_000)]
    assert records[-1]["A"]["shown"] == "26:50" and records[-1]["B"]["shown"] == "26:00"
    assert not events(records, "end")  # the hold made corrections: it does not also end the game


def test_holding_a_side_during_a_stop_hold_takes_a_minute_off(sim):
    records = sim(RUNNING_THEN_STOPPED + "20 down STOP\n20.5 hold B 1.2\n23 up STOP\n")
    adjust = events(records, "adjust")[0]  # dated at B's press, though known only at its release
    assert adjust["player"] == "B" and adjust["delta_ms"] == -60_000 and adjust["t_ms"] == 20_500
    assert adjust["B"]["shown"] == "24:00"


def test_a_correction_can_take_a_side_out_of_overtime_and_its_penalty_follows(sim):
    records = sim("0 press B\n25:30 press STOP\n26:00 down STOP\n26:01 press A\n26:05 up STOP\n")
    adjust = events(records, "adjust")[0]
    assert adjust["A"] == {"used_ms": 1_530_000, "shown": "0:30", "pen": 0, "late_pen": 0}
    penalty = events(records, "penalty")[-1]  # the penalty went down: that is a record too
    assert penalty["seq"] == adjust["seq"] + 1 and penalty["A"]["pen"] == 0


def test_both_sides_pressed_together_under_stop_mid_game_is_recorded_and_changes_nothing(sim):
    """The both-sides chord reopens an ended game or makes both players late on a fresh one; on a
    game stopped mid-play it does neither: an `ignored` record says why (docs/protocol.md)."""
    both = "20 down STOP\n20.9 down A\n20.95 down B\n21 up A\n21.1 up B\n21.2 up STOP\n"
    records = sim(RUNNING_THEN_STOPPED + both + "30 press B\n40 until\n")
    (ignored,) = events(records, "ignored")
    assert (ignored["button"], ignored["reason"], ignored["t_ms"]) == ("STOP", "both_sides", 20_900)
    assert not events(records, "adjust", "late_start", "reopen", "end")
    assert events(records, "resume")[0]["run"] == "A" and records[-1]["A"]["used_ms"] == 20_000


def test_no_correction_while_the_clock_is_running(sim):
    # the STOP press that stopped the clock is not a correction gesture
    records = sim("0 press B\n10 down STOP\n10.5 press A\n12 up STOP\n")
    assert not events(records, "adjust")
    assert events(records, "ignored")[0]["reason"] == "stop_held"


LATE_A = "0 down STOP\n1 press B\n1.5 up STOP\n"  # STOP held, then B tapped: A is late from B's press, 1 s


def test_naspa_late_start_forfeits_at_minus_one_second(sim):
    records = sim(LATE_A + "30:00 until\n")
    late = events(records, "late_start")[0]
    assert late["player"] == "A" and late["run"] == "A" and late["t_ms"] == 1000
    # who started it, as docs/protocol.md says: the present side's button
    assert (late["source"], late["button"]) == ("buttons", "B")
    forfeit = events(records, "forfeit")[0]
    assert forfeit["player"] == "A" and forfeit["reason"] == "absent"
    assert forfeit["t_ms"] == 1000 + 1_501_000 and forfeit["A"]["shown"] == "-0:01"
    (end,) = events(records, "end")
    assert (end["reason"], end["summary"]["reason"], end["summary"]["forfeit"]) == (
        "forfeit",
        "forfeit",
        {"player": "A", "reason": "absent"},
    )
    assert not events(records, "overtime")


def test_a_late_player_who_arrives_stops_the_clock_and_plays_with_the_time_left(sim):
    records = sim(LATE_A + "8:01 press STOP\n9:00 press A\n30:00 until\n")
    pause = events(records, "pause")[0]
    assert pause["arrived"] == "A" and pause["A"]["shown"] == "17:00"
    assert not events(records, "forfeit")
    assert events(records, "resume")[0]["run"] == "B"


def test_school_late_team_loses_ten_points_per_three_minutes_then_forfeits_at_fifteen(sim):
    records = sim("0 down STOP\n1 press A\n1.5 up STOP\n20:00 until\n", "--rules", "school")
    late = [(r["t_ms"], r["B"]["pen"]) for r in events(records, "penalty")]
    assert late == [(181_000, 10), (361_000, 20), (541_000, 30), (721_000, 40)]
    forfeit = events(records, "forfeit")[0]
    assert forfeit["player"] == "B" and forfeit["t_ms"] == 901_000 and forfeit["reason"] == "absent"


def test_school_late_penalty_stays_after_the_team_arrives_and_its_time_is_untouched(sim):
    script = "0 down STOP\n0.9 press A\n1.5 up STOP\n4:01 press STOP\n5:00 press A\n"
    records = sim(script, "--rules", "school")
    assert records[-1]["B"]["pen"] == 10 and records[-1]["B"]["shown"] == "25:00"


def test_the_panels_say_what_letting_go_of_a_long_stop_hold_will_do():
    """Held 2 s on a stopped game, STOP's release would end it; on an ended one, start a new game:
    both panels' bands say which before the player lets go."""
    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    tap(clock, "B", 0)
    tap(clock, "STOP", 10)

    def bands(t_ns):
        clock.advance(t_ns)
        return {band_text(clock.view(t_ns), side) for side in "AB"}

    clock.edge("STOP", True, 20 * NS_PER_S)
    assert bands(21 * NS_PER_S) == {("STOPPED", False)}  # not yet held long enough
    assert bands(22_100_000_000) == {("RELEASE: END GAME", False)}
    clock.edge("STOP", False, 23 * NS_PER_S)
    assert [r.ev for r in tap(clock, "STOP", 24)] == ["end"]
    clock.edge("STOP", True, 30 * NS_PER_S)
    assert bands(32_100_000_000) == {("RELEASE: NEW GAME", False)}
    clock.edge("STOP", False, 33 * NS_PER_S)
    assert [r.ev for r in clock.advance(34 * NS_PER_S)] == ["new_game"]
