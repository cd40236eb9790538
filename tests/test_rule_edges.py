"""The rules at their exact edges: each boundary a mutation run found unwatched (issue 23), pinned
where a player or a director would notice it: a correction of exactly 10:00, a turn of exactly
0.25 s, a press held exactly 5 ms, a game taken up after a restart or a power cut."""

import pytest

from conftest import events, tap
from tileclock.clock.core import ButtonTiming, GameClock
from tileclock.clock.debounce import Debouncer
from tileclock.clock.history import rebuild, reconcile, split_games
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S

MS, S = NS_PER_MS, NS_PER_S
STOPPED = "0 press B\n10 press A\n20 press STOP\n"  # A 10 s used, B 10 s; stopped at 20 s


# --- the end summary says who lost, and how


def test_an_absence_forfeit_is_lost_absent_not_on_time_and_only_for_the_absent_side(sim):
    records = sim("0 down STOP\n1 press B\n1.5 up STOP\n26:00 until\n")
    summary = events(records, "end")[0]["summary"]
    assert (summary["A"]["lost_absent"], summary["A"]["lost_on_time"]) == (True, False)
    assert (summary["B"]["lost_absent"], summary["B"]["lost_on_time"]) == (False, False)


def test_an_overtime_forfeit_is_lost_on_time_not_absent(sim):
    records = sim("0 press B\n36:00 until\n")
    summary = events(records, "end")[0]["summary"]
    assert (summary["A"]["lost_on_time"], summary["A"]["lost_absent"]) == (True, False)
    assert (summary["B"]["lost_on_time"], summary["B"]["lost_absent"]) == (False, False)


# --- a correction's bounds, exactly


@pytest.mark.parametrize(
    "command, time, accepted",
    [
        ("adjust A +600000", "A=25:00", True),  # one correction: at most 10:00
        ("adjust A -600000", "A=25:00", True),
        ("adjust A -70000", "A=1:10", True),  # a limit of exactly 0:00 is allowed
        ("adjust A -71000", "A=1:10", False),  # below 0:00 is not
        ("adjust A +60000", "A=98:59", True),  # a limit of exactly 99:59 is allowed
        ("adjust A +60000", "A=99:00", False),  # 100:00 is not
    ],
)
def test_a_corrections_bounds_are_inclusive(sim, command, time, accepted):
    records = sim(STOPPED + f"25 send {command}\n30 until\n", "--time", time)
    assert bool(events(records, "adjust")) == accepted
    assert bool(events(records, "error")) != accepted


@pytest.mark.parametrize("delta_ms, accepted", [(600_000, True), (601_000, False), (-601_000, False)])
def test_one_correction_moves_a_side_at_most_ten_minutes(delta_ms, accepted):
    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    tap(clock, "B", 0)
    tap(clock, "STOP", 10)
    made = clock.adjust(20 * S, "A", delta_ms)
    assert [r.ev for r in made][:1] == (["adjust"] if accepted else ["error"])


def test_a_correction_from_0_00_into_overtime_marks_the_overtime(sim):
    """A's display reads 0:00 (60.5 s used of 1:00): a minute off makes it -1:00, and that is the
    instant A went into overtime: `overtime` and `penalty` at the correction's instant."""
    records = sim("0 press B\n60.5 press STOP\n61 send adjust A -60000\n70 until\n", "--time", "A=1:00")
    after = [r["ev"] for r in records if r["t_ms"] == 61_000]
    assert after == ["adjust", "overtime", "penalty"]
    assert events(records, "penalty")[0]["A"]["pen"] == 10


def test_a_correction_down_to_0_00_is_not_overtime(sim):
    """0:00 is not overtime (NSA VIII.C): a minute off A's 1:00 shown leaves 0:00, and no record but the
    adjust."""
    records = sim("0 press B\n60.5 press STOP\n61 send adjust A -60000\n70 until\n", "--time", "A=2:00")
    assert [r["ev"] for r in records if r["t_ms"] == 61_000] == ["adjust"]
    assert records[-1]["A"]["shown"] == "0:00" and records[-1]["A"]["pen"] == 0


def test_a_correction_deeper_into_overtime_is_no_second_overtime(sim):
    records = sim("0 press B\n62 press STOP\n63 send adjust A -60000\n70 until\n", "--time", "A=1:00")
    assert [r["ev"] for r in records if r["t_ms"] == 63_000] == ["adjust", "penalty"]
    assert len(events(records, "overtime")) == 1  # the one A's own running made, at 61 s


# --- reopening


@pytest.mark.parametrize(
    "ending, reopens",
    [
        ("30 down STOP\n32.5 up STOP\n33 press STOP\n", True),  # ended with the two-step end
        ("30 send round over\n", False),  # the round is over
    ],
)
def test_only_a_game_ended_by_its_players_can_be_reopened(sim, ending, reopens):
    records = sim(STOPPED + ending + "40 send reopen\n45 until\n")
    assert bool(events(records, "reopen")) == reopens
    assert records[-1]["state"] == ("paused" if reopens else "ended")


def test_a_forfeit_cannot_be_reopened(sim):
    records = sim("0 press B\n36:00 send reopen\n36:10 until\n")
    assert not events(records, "reopen") and "forfeit stands" in events(records, "error")[0]["detail"]


# --- a turn of exactly the minimum


@pytest.mark.parametrize("after_ms, switches", [(250, True), (249, False)])
def test_a_press_ends_a_turn_once_the_clock_has_run_exactly_a_quarter_second(sim, after_ms, switches):
    records = sim(f"0 press B\n10 press A\n{10 + after_ms / 1000:.3f} press B\n11 until\n")
    assert len(events(records, "switch")) == (2 if switches else 1)
    assert bool(events(records, "ignored")) != switches


# --- the glitch window, exactly


@pytest.mark.parametrize("held_ns, counts", [(5 * MS, True), (5 * MS - 1, False)])
def test_a_contact_counts_once_it_has_held_exactly_the_window_both_ways(held_ns, counts):
    closing = Debouncer(5 * MS)
    assert closing.edge(True, 1_000) is None
    if counts:
        assert closing.settle(1_000 + held_ns) == (True, 1_000, 0)
    else:
        assert closing.edge(False, 1_000 + held_ns) is None
        assert closing.settle(1_000 + held_ns + 5 * MS) is None and not closing.pressed
    opening = Debouncer(5 * MS)
    opening.edge(True, 0)
    opening.settle(5 * MS)
    assert opening.edge(False, S, order=7) is None
    if counts:
        assert opening.settle(S + held_ns) == (False, S, 7)
    else:
        opening.edge(True, S + held_ns)
        assert opening.settle(S + held_ns + 5 * MS) is None and opening.pressed


def test_a_change_is_dated_at_the_first_edge_of_its_bounce_train():
    contact = Debouncer(5 * MS)
    for t_ms, down in ((100, True), (102, False), (103, True), (107, False), (109, True)):
        assert contact.edge(down, t_ms * MS) is None
    assert contact.deadline() == 114 * MS
    assert contact.settle(113 * MS) is None  # not yet: the last level has held 4 ms
    assert contact.settle(114 * MS) == (True, 100 * MS, 0)


def test_a_zero_window_takes_every_edge_at_once():
    contact = Debouncer(0)
    assert contact.edge(True, 10) == (True, 10, 0) and contact.edge(False, 11) == (False, 11, 0)


def test_presses_held_exactly_the_window_count_and_shorter_ones_do_not(sim):
    records = sim("0 press B\n10 down A\n10.005 up A\n20 down B\n20.004 up B\n25 until\n")
    assert [r["ev"] for r in records] == ["new_game", "start", "switch", "status"]
    assert records[2]["t_ms"] == 10_000 and records[-1]["run"] == "B"


# --- a game taken up after a restart or a power cut


def played(boot_id, checkpoint_ms=None):
    """A game with B running since 100 s (A ran 0-100 s), its records, and its clock's settings."""
    clock = GameClock(PROFILES["naspa"], ButtonTiming(), checkpoint_ms=checkpoint_ms, checkpoint_lag_ms=500)
    records = clock.new_game(0, boot={"boot_id": boot_id} if boot_id else None)
    records += tap(clock, "B", 0) + tap(clock, "A", 100) + clock.advance(130 * S)
    return [r.as_dict() for r in records]


def taken_up(records, now_ns, boot_id, checkpoint_ms=None):
    clock = GameClock(PROFILES["naspa"], ButtonTiming(), checkpoint_ms=checkpoint_ms, checkpoint_lag_ms=500)
    made = clock.recover(records, now_ns, {"boot_id": boot_id} if boot_id else {})
    return clock, [r.as_dict() for r in made]


def test_a_restart_in_the_same_boot_goes_on_exactly():
    clock, made = taken_up(played("boot-1"), 200 * S, "boot-1")
    recovered = events(made, "recovered")[0]
    assert recovered["reason"] == "restart" and clock.state == "running"
    assert clock.used_ns("B", 200 * S) == 100 * S  # charged for the time the process was down


@pytest.mark.parametrize("then, now", [("boot-1", "boot-2"), (None, None), ("boot-1", None)])
def test_a_start_in_another_boot_or_an_unknown_one_is_a_power_cut(then, now):
    clock, made = taken_up(played(then), 200 * S, now)
    assert events(made, "recovered")[0]["reason"] == "power_cut" and clock.state == "paused"


def test_a_power_cuts_doubt_shows_in_whole_seconds_rounded_up():
    """Checkpoints every 1 s and half a second for the last one to reach the card: the panels say
    the time may be off by up to 2 s (1.5 s, rounded up), the record by 1500 ms."""
    clock, made = taken_up(played("boot-1", checkpoint_ms=1000), 200 * S, "boot-2", checkpoint_ms=1000)
    assert events(made, "recovered")[0]["uncertain_ms"] == 1500
    assert clock.view(200 * S).notice.uncertain_s == 2


# --- the one reader of records


def test_a_newest_record_that_disagrees_by_a_millisecond_is_the_rebuild_floored():
    """A restart makes the rebuilt game agree with the newest record (what the players saw); a
    difference of 1 ms is the record's flooring, not damage; 2 ms is taken from the record, and the
    time is moved, not made: both sides and the stopped time still add up to the game's time."""
    (game_,) = split_games(played("boot-1"))
    newest = game_.records[-1]  # A's press at 100 s: A has used 100 s
    assert newest["ev"] == "switch" and newest["A"]["used_ms"] == 100_000
    t = newest["t_ms"] * MS
    for off, noted in ((1, False), (2, True)):
        probe = dict(newest, A=dict(newest["A"], used_ms=100_000 + off))
        game = rebuild(game_.records, 0, PROFILES["naspa"])
        assert bool(reconcile(game, probe, 0, PROFILES["naspa"])) == noted
        assert game.used_ns("A", t) // MS == 100_000 + (off if noted else 0)
        assert game.used_ns("A", t) + game.used_ns("B", t) + game.stopped_ns(t) == t - game.t0_ns


def test_a_rebuilt_game_counts_the_turns_its_end_summary_counts(sim):
    records = sim(
        "0 press B\n10 press A\n20 press B\n30 press A\n40 press STOP\n41 hold STOP 2.5\n44 press STOP\n"
    )
    (game,) = split_games(records)
    rebuilt = rebuild(game.records, 0, PROFILES["naspa"])
    summary = events(records, "end")[0]["summary"]
    assert rebuilt.turns == {side: summary[side]["turns"] for side in "AB"} == {"A": 2, "B": 1}
