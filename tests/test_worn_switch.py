"""CLOCK_RULES §10, as players and a director meet it: held buttons, chords and a worn switch's
chatter (pulses of 2-4 ms), through `tileclock sim --script`."""

import pytest

from conftest import events

STOPPED_AT_20 = "0 press B\n10 press A\n20 press STOP\n"  # A ran 10 s, B 10 s; stopped at 20 s


def chatter(button, t_s, opens=True, pulse_ms=3):
    """One chatter pulse of `button` at `t_s`: open (inside a hold) or closed (while idle)."""
    first, second = ("up", "down") if opens else ("down", "up")
    return f"{t_s:.3f} {first} {button}\n{t_s + pulse_ms / 1000:.3f} {second} {button}\n"


def test_a_correction_chord_with_chatter_applies_each_correction_once(sim):
    """A tapped (+1:00), then B held 1.2 s (-1:00) with a 3 ms chatter inside the hold: exactly the
    two corrections meant, never B +1:00 twice."""
    script = STOPPED_AT_20 + "25 down STOP\n26 press A\n27 down B\n"
    script += chatter("B", 27.6) + "28.2 up B\n29 up STOP\n35 until\n"
    adjusts = [(r["player"], r["delta_ms"], r["t_ms"]) for r in events(sim(script), "adjust")]
    assert adjusts == [("A", 60_000, 26_000), ("B", -60_000, 27_000)]


def test_stop_chattering_while_held_never_ends_the_game(sim):
    """STOP held 3 s on a stopped clock with a chatter pulse inside: one hold (the panels ask to
    confirm), and with no second press the game does not end."""
    script = STOPPED_AT_20 + "25 down STOP\n" + chatter("STOP", 27.5) + "28 up STOP\n40 until\n"
    records = sim(script)
    assert not events(records, "end", "ignored")
    assert records[-1]["state"] == "paused"


def test_stop_chatter_on_a_short_hold_arms_nothing(sim):
    """STOP held 1 s with chatter after 0.5 s: neither a 2 s hold nor a confirmation."""
    script = (
        STOPPED_AT_20 + "25 down STOP\n" + chatter("STOP", 25.5) + "26 up STOP\n27 press STOP\n40 until\n"
    )
    records = sim(script)
    assert not events(records, "end")
    assert records[-1]["state"] == "paused"


def test_a_press_that_wakes_dark_panels_with_chatter_only_wakes_them(sim):
    """After 30 idle minutes the panels are dark; B's press with a chatter pulse only wakes them."""
    script = STOPPED_AT_20 + "32:00 down B\n" + chatter("B", 32 * 60 + 0.2) + "32:00.400 up B\n33:00 until\n"
    records = sim(script)
    ignored = events(records, "ignored")
    assert [(r["reason"], r["button"]) for r in ignored] == [("wake", "B")]
    assert not events(records, "resume") and records[-1]["state"] == "paused"


def test_chatter_while_a_side_is_held_in_play_makes_no_record(sim):
    """A holds its button 2 s after ending its turn, the contact chattering twice: one switch only."""
    script = (
        "0 press B\n10 down A\n" + chatter("A", 10.5) + chatter("A", 11.2, pulse_ms=4) + "12 up A\n20 until\n"
    )
    records = sim(script)
    assert [r["ev"] for r in records] == ["new_game", "start", "switch", "status"]
    assert records[2]["t_ms"] == 10_000


def test_a_closed_glitch_while_idle_is_no_press(sim):
    records = sim("0 press B\n" + chatter("A", 10, opens=False, pulse_ms=4) + "20 until\n")
    assert [r["ev"] for r in records] == ["new_game", "start", "status"]


def test_a_release_bouncing_on_its_way_open_is_dated_at_its_first_open_edge(sim):
    """STOP held 2 s on a stopped clock, its release bouncing: the hold is measured to the first
    open edge (1.999 s: too short to end or ask), the bounce making nothing."""
    script = STOPPED_AT_20 + "25 down STOP\n26.999 up STOP\n27.001 down STOP\n27.003 up STOP\n30 until\n"
    records = sim(script)
    assert [r["reason"] for r in events(records, "ignored")] == ["stopped"]
    assert records[-1]["state"] == "paused"


def test_a_late_start_made_with_the_buttons_is_dated_at_the_side_press_not_its_release(sim):
    """STOP held, B held 1.5 s: A is late from B's first edge (1.0 s), not from its release (2.5 s)."""
    records = sim("0 down STOP\n1 hold B 1.5\n3 up STOP\n25:03 until\n")
    (late,) = events(records, "late_start")
    assert late["player"] == "A" and late["t_ms"] == 1000
    (forfeit,) = events(records, "forfeit")
    assert forfeit["t_ms"] == 1000 + 1_501_000  # A's own -0:01


def test_both_late_made_with_the_buttons_is_dated_at_the_first_side_press(sim):
    script = "0 down STOP\n1 down A\n1.4 down B\n2.5 up A\n2.6 up B\n3 up STOP\n5:01 press A\n6:00 until\n"
    records = sim(script)
    (late,) = events(records, "late_start")
    assert late["player"] == "both" and late["t_ms"] == 1000
    (arrived,) = events(records, "arrived")
    assert arrived["player"] == "A" and arrived["A"]["used_ms"] == 300_000  # 1.0 s to 5:01


def test_records_stay_in_time_order_when_something_is_recorded_while_a_chord_is_held(sim):
    """A bad command answered while B is held in a late-start chord: the late start, known at B's
    release, is dated no earlier than that answer, so no record's time goes back."""
    records = sim("0 down STOP\n1 down B\n1.5 send hello\n2.5 up B\n3 up STOP\n10 until\n")
    times = [r["t_ms"] for r in records]
    assert times == sorted(times)
    assert [r["ev"] for r in records[:3]] == ["new_game", "error", "late_start"]
    assert events(records, "late_start")[0]["t_ms"] == 1500


@pytest.mark.parametrize("ignored", [False, True])
def test_at_the_caps_instant_the_limit_comes_first(sim, ignored):
    """A runs from B's press at 1 s with 25:00, so its display reaches -10:01 at 1 s + 35:01. A press
    whose first edge falls on that very millisecond comes after the forfeit (`ignored`, `ended`);
    one millisecond earlier it is in time."""
    cap_ms = 1_000 + (25 * 60 + 10 * 60 + 1) * 1000
    at_ms = cap_ms - (0 if ignored else 1)
    records = sim(f"1 press B\n{at_ms / 1000:.3f} press A\n40:00 until\n")
    if ignored:
        (forfeit,) = events(records, "forfeit")
        assert forfeit["t_ms"] == cap_ms and forfeit["player"] == "A" and forfeit["A"]["shown"] == "-10:01"
        assert events(records, "ignored")[-1]["reason"] == "ended" and not events(records, "switch")
    else:
        (switch,) = events(records, "switch")
        assert switch["t_ms"] == at_ms and switch["A"]["shown"] == "-10:00" and switch["A"]["pen"] == 100
        assert not events(records, "forfeit")


@pytest.mark.parametrize("ignored", [False, True])
def test_at_an_absent_sides_minus_one_second_the_forfeit_comes_first(sim, ignored):
    late_from_ms = 1_000
    forfeit_ms = late_from_ms + 1_501_000
    at_ms = forfeit_ms - (0 if ignored else 1)
    records = sim(f"0 down STOP\n1 press B\n1.5 up STOP\n{at_ms / 1000:.3f} press A\n30:00 until\n")
    if ignored:
        (forfeit,) = events(records, "forfeit")
        assert forfeit["t_ms"] == forfeit_ms and forfeit["reason"] == "absent"
        assert events(records, "ignored")[-1]["reason"] == "ended"
    else:
        assert not events(records, "forfeit")
        (pause,) = events(records, "pause")
        assert pause["arrived"] == "A" and pause["t_ms"] == at_ms and pause["A"]["shown"] == "0:00"


def test_an_absent_side_counts_against_its_own_allowance_medical_time_included(sim):
    """A has 30:00 (medical extra time): late from 1 s, A forfeits at its own -0:01, 30:01 later."""
    records = sim("0 down STOP\n1 press B\n1.5 up STOP\n40:00 until\n", "--time", "A=30:00")
    (forfeit,) = events(records, "forfeit")
    assert forfeit["player"] == "A" and forfeit["reason"] == "absent"
    assert forfeit["t_ms"] == 1_000 + 1_801_000 and forfeit["A"]["shown"] == "-0:01"


def test_nsa1997_never_forfeits_for_absence(sim):
    """Under nsa1997 the absent side's clock simply runs, into overtime with its usual penalties."""
    records = sim("0 down STOP\n1 press B\n1.5 up STOP\n45:00 until\n", "--rules", "nsa1997")
    assert not events(records, "forfeit", "end")
    assert events(records, "overtime")[0]["t_ms"] == 1_000 + 1_501_000
    last = records[-1]
    assert last["state"] == "running" and last["A"]["shown"] == "-19:59" and last["A"]["pen"] == 200
