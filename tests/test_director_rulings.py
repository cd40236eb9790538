"""What a director rules at a real event, played end to end through `tileclock sim --script`.

Rules: docs/rules.md#the-10-minute-cap-naspa-vg3, docs/rules.md#directors-corrections,
docs/rules.md#late-start, docs/rules.md#the-school-round,
docs/rules.md#gestures-no-one-makes-by-accident, docs/protocol.md (the `end` summary).
"""

import pytest

from conftest import events
from tileclock.clock.timecode import parse_clock

A_ONE_MINUTE = ("--time", "A=1:00")
#: A's clock runs from 0 with a minute: at 10:31 A shows -9:31; STOP stops it there.
A_NEAR_THE_CAP = "0 press B\n10:31 press STOP\n"
TAKE_A_MINUTE_OFF_A = "10:40 down STOP\n10:42.2 hold A 1.2\n10:44 up STOP\n"  # dated at A's press


def never_past_the_cap(records):
    return all(parse_clock(r[side]["shown"]) >= -601 for r in records for side in "AB")


# --- the cap, however a side gets there (NASPA V.G.3)


@pytest.mark.parametrize("correction", [TAKE_A_MINUTE_OFF_A, "10:42.2 send adjust A -60000\n"])
def test_a_correction_past_the_cap_ends_the_game_at_its_instant(sim, correction):
    records = sim(A_NEAR_THE_CAP + correction + "20:00 press B\n30:00 until\n", *A_ONE_MINUTE)
    adjust, forfeit, end = events(records, "adjust", "forfeit", "end")
    assert adjust["t_ms"] == forfeit["t_ms"] == end["t_ms"] == 642_200
    # the penalty was 100 before and is the cap's 100 after: no penalty record, the forfeit at once
    assert [r["ev"] for r in records if r["seq"] > adjust["seq"]][:2] == ["forfeit", "end"]
    assert forfeit["player"] == "A" and forfeit["reason"] == "overtime_limit"
    assert (forfeit["A"]["shown"], forfeit["A"]["pen"]) == ("-10:01", 100)
    assert end["summary"]["A"]["lost_on_time"] and end["summary"]["A"]["overtime_pen"] == 100
    assert records[-1]["A"]["used_ms"] == 631_000  # A's clock never ran again
    assert never_past_the_cap(records)


def test_a_correction_into_overtime_records_overtime_and_the_penalty_at_its_instant(sim):
    records = sim("0 press B\n0:30 press STOP\n0:40 send adjust A -60000\n1:00 until\n", *A_ONE_MINUTE)
    adjust, overtime, penalty = (r for r in records if r["t_ms"] == 40_000)
    assert (adjust["ev"], overtime["ev"], penalty["ev"]) == ("adjust", "overtime", "penalty")
    assert (penalty["A"]["shown"], penalty["A"]["pen"], penalty["kind"]) == ("-0:30", 10, "overtime")


def test_corrections_are_bounded_by_button_and_by_serial(sim):
    five = "".join(f"{10 + i} send adjust A -600000\n" for i in range(5))
    records = sim("0 press B\n5 press STOP\n" + five + "20 until\n")
    assert [r["delta_ms"] for r in events(records, "adjust")] == [-600_000, -600_000]
    errors = events(records, "error")
    assert len(errors) == 3 and "0:00 to 99:59" in errors[0]["detail"]
    assert records[-1]["A"]["shown"] == "4:55"  # 25:00 - 20:00 - 0:05
    # by the buttons: a minute off a side with 0:30 left is refused the same way
    records = sim("0 press B\n5 press STOP\n10 down STOP\n11 hold A 1.2\n13 up STOP\n", "--time", "A=0:30")
    assert not events(records, "adjust") and "0:00 to 99:59" in events(records, "error")[0]["detail"]


END = "30 press STOP\n31 hold STOP 2.5\n34 press STOP\n"  # stop, hold, let go, confirm


def test_a_correction_after_the_end_reissues_the_summary(sim):
    records = sim("0 press B\n20 press A\n" + END + "40 send adjust B +60000\n45 until\n")
    first_end, adjust, second_end = events(records, "end", "adjust")
    assert second_end["supersedes"] == first_end["seq"] and second_end["reason"] == "stop_hold"
    assert adjust["state"] == "ended" and second_end["summary"]["B"]["corrections_ms"] == 60_000
    assert second_end["summary"]["B"]["shown"] == "25:50"
    # by the buttons too, and never after a forfeit
    records = sim("0 press B\n20 press A\n" + END + "40 down STOP\n41 press A\n42 up STOP\n")
    assert events(records, "end")[-1]["summary"]["A"]["shown"] == "25:40"
    records = sim("0 press B\n35:00 send adjust A +60000\n", *A_ONE_MINUTE)
    assert events(records, "forfeit") and "forfeited" in events(records, "error")[0]["detail"]


# --- late arrival (NASPA III.C; school rule 25)

LATE_A = "0 down STOP\n1 press B\n1.5 up STOP\n"  # A is late from 1.0 s, B's press (not its release)


@pytest.mark.parametrize("rules", ["naspa", "nsa1997"])
def test_a_late_player_arriving_by_their_own_button_stops_the_clock(sim, rules):
    records = sim(LATE_A + "15:01 press A\n16:00 press A\n40:00 until\n", "--rules", rules)
    pause = events(records, "pause")[0]
    assert (pause["button"], pause["arrived"], pause["state"]) == ("A", "A", "paused")
    assert pause["A"]["shown"] == "10:00" and pause["B"]["used_ms"] == 0  # never charges the opponent
    assert not events(records, "switch")
    resume = events(records, "resume")[0]
    assert resume["run"] == "B" and events(records, "status")[0]["A"]["shown"] == "10:00"


def test_a_late_player_arriving_at_the_boundary_second(sim):
    # A's display reads -0:01 at 25:02.000 (late from 1.0 s, 25:00 and one second)
    records = sim(LATE_A + "25:01.999 press A\n26:00 until\n")
    assert events(records, "pause")[0]["arrived"] == "A" and not events(records, "forfeit")
    records = sim(LATE_A + "25:02 press A\n26:00 until\n")
    forfeit = events(records, "forfeit")[0]
    assert forfeit["t_ms"] == 1_502_000 and forfeit["reason"] == "absent"
    assert events(records, "ignored")[-1]["reason"] == "ended"  # the forfeit came first


def test_a_late_player_who_never_arrives(sim):
    naspa = sim(LATE_A + "30:00 until\n")
    end = events(naspa, "end")[0]
    assert end["summary"]["forfeit"] == {"player": "A", "reason": "absent"}
    assert end["summary"]["A"]["lost_absent"] and not end["summary"]["A"]["lost_on_time"]
    nsa = sim(LATE_A + "30:00 until\n", "--rules", "nsa1997")
    assert not events(nsa, "forfeit") and nsa[-1]["A"]["shown"] == "-4:59"


def test_school_absence_costs_points_only_and_the_penalties_stay_apart(sim):
    records = sim(
        LATE_A + "6:31 press A\n7:00 press B\n40:00 press A\n42:00 press STOP\n", "--rules", "school"
    )
    pause = events(records, "pause")[0]
    assert pause["arrived"] == "A" and pause["A"]["shown"] == "25:00" and pause["A"]["late_pen"] == 20
    last = records[-1]  # A ran from 7:00 to 40:00: 33:00, 8:00 over
    assert (last["A"]["shown"], last["A"]["pen"], last["A"]["late_pen"]) == ("-8:00", 100, 20)
    assert all(r["A"]["pen"] - r["A"]["late_pen"] >= 0 for r in records)


BOTH_LATE = "0 down STOP\n1.0 down A\n1.1 down B\n1.2 up A\n1.3 up B\n1.5 up STOP\n"  # both late from 1.0 s, A's press


@pytest.mark.parametrize("first, second", [("A", "B"), ("B", "A")])
def test_both_players_late_each_charged_up_to_their_own_arrival(sim, first, second):
    records = sim(BOTH_LATE + f"5:01 press {first}\n8:01 press {second}\n9:00 until\n")
    late = events(records, "late_start")[0]
    assert late["player"] == "both" and late["run"] is None and late["state"] == "running"
    arrived, pause = events(records, "arrived", "pause")
    assert arrived["player"] == first and arrived["run"] == second
    assert pause["arrived"] == second and pause["state"] == "paused"
    assert pause[first]["used_ms"] == 300_000 and pause[second]["used_ms"] == 480_000
    summary_books = records[-1]
    assert summary_books["A"]["used_ms"] + summary_books["B"]["used_ms"] > 480_000  # the shared time


def test_both_players_late_by_serial_and_no_one_arrives_is_a_double_forfeit(sim):
    records = sim("1 send late both\n30:00 until\n")
    forfeit = events(records, "forfeit")[0]
    assert forfeit["player"] == "both" and forfeit["reason"] == "absent" and forfeit["t_ms"] == 1_502_000
    summary = events(records, "end")[0]["summary"]
    assert summary["A"]["lost_absent"] and summary["B"]["lost_absent"] and summary["shared_ms"] == 1_501_000
    school = sim("1 send late both\n30:00 until\n", "--rules", "school")
    forfeit = events(school, "forfeit")[0]
    assert forfeit["player"] == "both" and forfeit["t_ms"] == 901_000
    assert forfeit["A"]["shown"] == forfeit["B"]["shown"] == "25:00"


def pick(side, *fields):
    """The values of `fields` in one side's part of a record or summary, as a tuple."""
    return tuple(side[field] for field in fields)


def stop_and_end(at_s):
    """Stop the clock at `at_s` seconds, then end the game as a director does: hold, let go, confirm."""
    return f"{at_s} press STOP\n{at_s + 10} hold STOP 2.5\n{at_s + 14} press STOP\n"


@pytest.mark.parametrize("first, second", [("A", "B"), ("B", "A")])
def test_nsa1997_both_late_arrive_play_and_end(sim, first, second):
    """NSA 1997 VII.I.4: a late player is charged the time they were away; the profile has no
    forfeit on the clock, so each is charged up to their own arrival, then the game is played and
    ended as usual (docs/rules.md#late-start, docs/rules.md#profiles)."""
    play = f"5:01 press {first}\n8:01 press {second}\n9:00 press {first}\n28:00 press {second}\n"
    records = sim(BOTH_LATE + play + stop_and_end(30 * 60) + "32:00 until\n", "--rules", "nsa1997")
    assert events(records, "new_game")[0]["rules"] == "nsa1997"
    arrived, pause = events(records, "arrived", "pause")[:2]
    assert (arrived["player"], arrived["run"], arrived[first]["shown"]) == (first, second, "20:00")
    assert (pause["arrived"], pause[second]["shown"], pause[first]["shown"]) == (second, "17:00", "20:00")
    assert not events(records, "forfeit")
    end = events(records, "end")[0]
    summary = end["summary"]
    assert (summary["reason"], summary["forfeit"], summary["first"]) == ("stop_hold", None, second)
    assert summary[first]["absent_ms"] == summary["shared_ms"] == 300_000
    assert summary[second]["absent_ms"] == 480_000
    # second: 8:00 absent + 19:00 in play = 27:00, two minutes over; first: 5:00 absent + 2:00 in play
    assert pick(summary[second], "shown", "overtime_pen", "pen") == ("-2:00", 20, 20)
    assert (summary[first]["shown"], summary[first]["pen"]) == ("18:00", 0)
    assert summary[first]["late_pen"] == summary[second]["late_pen"] == 0  # absence is time, not points
    assert not summary[first]["lost_absent"] and not summary[second]["lost_absent"]


def test_nsa1997_both_late_and_no_one_arrives_is_left_to_the_director(sim):
    """NSA 1997 has no forfeit on the clock (VII.I.4 starts the late players' clocks; a no-show's
    forfeit, VII.I.2, is the director's ruling): the absence clock runs on against both, into
    overtime with no cap, until the director ends the round (docs/rules.md#late-start)."""
    script = "1 send late both\n40:00 send round over\n41:00 press A\n42:00 until\n"
    records = sim(script, "--rules", "nsa1997")
    assert not events(records, "forfeit")
    end = events(records, "end")[0]
    assert end["reason"] == "round_over" and end["t_ms"] == 2_400_000
    absent_all_along = {"absent_ms": 2_399_000, "shown": "-14:59", "overtime_pen": 150, "lost_absent": False}
    for side in "AB":
        assert pick(end["summary"][side], *absent_all_along) == tuple(absent_all_along.values())
    assert events(records, "ignored")[-1]["reason"] == "ended"


@pytest.mark.parametrize("first, second", [("A", "B"), ("B", "A")])
def test_school_both_late_arrive_play_and_the_round_ends(sim, first, second):
    """School rule 25: each team absent loses 10 points for each three minutes, its 25:00 untouched;
    rule 21: the round ends 50:00 after its start, here the late start at 0:01
    (docs/rules.md#late-start, docs/rules.md#the-school-round)."""
    play = f"4:01 press {first}\n7:01 press {second}\n8:00 press {first}\n20:00 press {second}\n"
    records = sim(BOTH_LATE + play + "51:00 press A\n52:00 until\n", "--rules", "school")
    arrived, pause = events(records, "arrived", "pause")[:2]
    assert (arrived["player"], arrived["run"]) == (first, None)  # no team's game clock runs in absence
    assert pause["arrived"] == second
    assert all(pause[side]["shown"] == "25:00" for side in "AB")
    assert (pause[first]["late_pen"], pause[second]["late_pen"]) == (10, 20)  # 4:00 and 7:00 absent
    late = [(r["player"], r["t_ms"]) for r in events(records, "penalty") if r["kind"] == "late"]
    assert late == [("A", 181_000), ("B", 181_000), (second, 361_000)]
    end = events(records, "end")[0]
    assert (end["reason"], end["t_ms"]) == ("round_over", 3_001_000)
    summary = end["summary"]
    assert (summary["first"], summary["forfeit"]) == (second, None)
    assert (summary[first]["absent_ms"], summary[second]["absent_ms"]) == (240_000, 420_000)
    # second ran 8:00-20:00 (12:00); first ran from 20:00 to the round's end at 50:01: 30:01, 6 started minutes over
    assert pick(summary[second], "shown", "overtime_pen", "late_pen") == ("13:00", 0, 20)
    assert pick(summary[first], "shown", "overtime_pen", "late_pen") == ("-5:01", 60, 10)
    assert summary[first]["pen"] == 70 and summary[second]["pen"] == 20
    assert events(records, "ignored")[-1]["reason"] == "ended"  # the round is over


def test_school_both_late_and_one_team_never_arrives(sim):
    """School rule 25: the team still absent 15:00 after the round began forfeits; the team that
    arrived keeps its own late penalty (docs/rules.md#late-start)."""
    records = sim("1 send late both\n4:01 press A\n20:00 press B\n21:00 until\n", "--rules", "school")
    forfeit = events(records, "forfeit")[0]
    assert (forfeit["player"], forfeit["reason"], forfeit["t_ms"]) == ("B", "absent", 901_000)
    summary = events(records, "end")[0]["summary"]
    assert summary["B"]["lost_absent"] and not summary["A"]["lost_absent"]
    assert pick(summary["A"], "late_pen", "absent_ms", "shown") == (10, 240_000, "25:00")
    assert summary["B"]["shown"] == "25:00" and summary["B"]["absent_ms"] == 900_000


def test_a_serial_late_start_only_on_a_fresh_game(sim):
    records = sim("1 send late B\n2:00 press B\n2:30 send late A\n3:00 until\n")
    late, pause = events(records, "late_start", "pause")
    assert (late["player"], late["source"], pause["arrived"]) == ("B", "serial", "B")
    assert "fresh game" in events(records, "error")[0]["detail"]


# --- the school round (rule 21)


def test_the_school_round_ends_fifty_minutes_after_its_start(sim):
    records = sim("10 press A\n30:00 press B\n55:00 press A\n56:00 until\n", "--rules", "school")
    end = events(records, "end")[0]
    assert end["reason"] == "round_over" and end["t_ms"] == 3_010_000 and end["state"] == "ended"
    assert end["summary"]["reason"] == "round_over"
    assert events(records, "ignored")[-1]["reason"] == "ended"  # later presses change nothing
    # other events set their own round length, or none
    assert not events(sim("10 press A\n56:00 until\n", "--rules", "nsa1997"), "end")


def test_round_over_from_the_director_ends_the_game_at_once(sim):
    records = sim("0 press B\n10:00 send round over\n10:01 send round over\n11:00 until\n")
    end = events(records, "end")[0]
    assert end["reason"] == "round_over" and end["t_ms"] == 600_000
    assert "already ended" in events(records, "error")[0]["detail"]


def test_the_directors_round_over_and_reopen_name_who_asked_on_the_records_they_make(sim):
    """The audit trail (docs/protocol.md, `by`): who ended the round, who reopened, who was refused."""
    records = sim(
        "0 press B\n10:00 send round over by=page-3f2a\n10:01 send round over by=page-3f2a\n11:00 until\n"
    )
    (end,), (refused,) = events(records, "end"), events(records, "error")
    assert (end["reason"], end["by"], refused["by"]) == ("round_over", "page-3f2a", "page-3f2a")
    records = sim(
        "0 press B\n20 press STOP\n" + END + "40 send reopen by=page-9z\n41 send reopen\n45 until\n"
    )
    (reopen,), (refused,) = events(records, "reopen"), events(records, "error")
    assert (reopen["by"], reopen["source"]) == ("page-9z", "serial")
    assert "has not ended" in refused["detail"] and "by" not in refused  # asked by no one named


# --- gestures no one makes by accident


def test_a_palm_on_stop_just_before_the_challenge_losers_press_is_no_correction(sim):
    records = sim("0 press B\n10 press STOP\n20 down STOP\n20.05 press A\n21 up STOP\n25 until\n")
    assert not events(records, "adjust") and events(records, "resume")[0]["run"] == "B"


def test_a_start_with_stop_touched_just_before_is_a_plain_start(sim):
    records = sim("0 down STOP\n0.04 press A\n0.5 up STOP\n10:00 until\n", "--rules", "school")
    assert not events(records, "late_start") and not events(records, "penalty")
    assert events(records, "start")[0]["run"] == "B"


def test_a_stuck_stop_is_never_a_modifier(sim):
    records = sim("0 press B\n10 down STOP\n21 press A\n25 up STOP\n30 until\n")
    assert events(records, "fault")[0]["part"] == "button STOP"
    assert not events(records, "adjust") and events(records, "resume")


def test_holding_stop_through_a_series_of_corrections_never_faults_it(sim):
    taps = "".join(f"{20 + 3 * i} press A\n" for i in range(5))
    records = sim("0 press B\n10 press STOP\n19 down STOP\n" + taps + "35 up STOP\n40 until\n")
    assert len(events(records, "adjust")) == 5 and not events(records, "fault")


def test_a_two_millisecond_pulse_is_noise(sim):
    records = sim("5 down A\n5.002 up A\n10 until\n")
    assert [r["ev"] for r in records] == ["new_game", "status"]


def test_ending_takes_a_confirmation_and_a_director_can_reopen_until_the_next_game(sim):
    records = sim("0 press B\n20 press STOP\n" + "30 hold STOP 2.5\n40 until\n")
    assert not events(records, "end")  # not confirmed: nothing changed
    reopen_by_buttons = "40 down STOP\n40.9 down A\n40.95 down B\n41 up A\n41.1 up B\n41.2 up STOP\n"
    records = sim("0 press B\n20 press STOP\n" + END + reopen_by_buttons + "50 press B\n55 until\n")
    end, reopen = events(records, "end", "reopen")
    assert reopen["reopens"] == end["seq"] and reopen["state"] == "paused" and reopen["t_ms"] == 40_900
    assert reopen["A"] == end["A"] and events(records, "resume")[0]["run"] == "A"
    # a forfeit stands
    records = sim("0 press B\n35:00 send reopen\n", *A_ONE_MINUTE)
    assert "forfeit stands" in events(records, "error")[0]["detail"]


# --- what the end record says


def test_the_end_summary_names_what_a_director_needs(sim):
    script = LATE_A + "2:01 press A\n2:30 press A\n3:00 press B\n4:00 press STOP\n4:10 send adjust B +60000\n"
    records = sim(script + "4:20 hold STOP 2.5\n4:25 press STOP\n5:00 until\n", "--time", "B=30:00")
    summary = events(records, "end")[0]["summary"]
    assert (summary["reason"], summary["forfeit"], summary["first"]) == ("stop_hold", None, "B")
    assert summary["A"]["absent_ms"] == 120_000 and summary["B"]["absent_ms"] == 0
    assert summary["B"]["start_ms"] == 1_800_000 and summary["B"]["corrections_ms"] == 60_000
    assert set(summary["A"]) >= {
        "start_ms", "corrections_ms", "used_ms", "shown", "overtime_s", "overtime_pen", "late_pen", "pen",
        "absent_ms", "lost_on_time", "lost_absent", "turns",
    }  # fmt: skip  # the fields docs/protocol.md lists, one set


def test_a_new_game_from_the_director_opens_only_on_an_ended_game(sim):
    script = "0 press B\n10 send new game by=page-1a_4\n20 send round over\n30 send new game by=page-1a_6\n40 until\n"
    records = sim(script)
    (refused,) = events(records, "error")  # a game in play is never wiped from afar
    assert refused["by"] == "page-1a_4" and "only on an ended game" in refused["detail"]
    opened = events(records, "new_game")
    assert len(opened) == 2 and opened[1]["by"] == "page-1a_6" and opened[1]["source"] == "serial"
    assert "by" not in opened[0] and "source" not in opened[0]  # the first opened at power-on
    assert [r["ev"] for r in records if r["seq"] > opened[1]["seq"]] == ["status"]  # a fresh game
