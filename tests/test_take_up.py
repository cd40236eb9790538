"""Taking up the last game is a function of the journal's records (issue 26 point 1): the same
records give the same game, the records are left as they were, and after a restart the game goes
on as if the clock had never stopped: the clock that played it, kept running, says the same."""

import copy
import json

from tileclock.clock.core import GameClock
from tileclock.clock.recovery import take_up
from tileclock.clock.rules import PROFILES
from tileclock.clock.state import State

NS_PER_S = 10**9
RULES = PROFILES["naspa"]
START_NS = {"A": RULES.time_s * NS_PER_S, "B": RULES.time_s * NS_PER_S}


#: between two presses of `played`
STEP_NS = 7 * NS_PER_S + 123_457


def played(clock=None):
    """A game's records as the journal holds them (A runs at the end), and the last instant."""
    clock = clock or GameClock(RULES, checkpoint_ms=1000)
    made = clock.new_game(5 * NS_PER_S, {"boot_id": "b1"})
    t_ns = 6 * NS_PER_S
    for button in "BABAB":
        made += clock.edge(button, True, t_ns) + clock.edge(button, False, t_ns + 50_000_000)
        t_ns += STEP_NS
    made += clock.advance(t_ns)
    return [json.loads(json.dumps(record.as_dict())) for record in made], t_ns


def test_the_same_records_give_the_same_game_and_are_left_as_they_were():
    records, t_ns = played()
    kept = copy.deepcopy(records)
    first = take_up(records, t_ns + NS_PER_S, {"boot_id": "b1"}, RULES, START_NS)
    again = take_up(records, t_ns + NS_PER_S, {"boot_id": "b1"}, RULES, START_NS)
    assert records == kept
    assert first.game == again.game and first.next_seq == again.next_seq == records[-1]["seq"] + 1
    assert first.game.run == "A" and first.down == {"reason": "restart", "down_ms": 1000}


def test_after_a_restart_the_game_goes_on_as_if_the_clock_had_never_stopped():
    kept_running = GameClock(RULES, checkpoint_ms=1000)  # the same game, on a clock never restarted
    records, t_ns = played(kept_running)
    now = t_ns + 3 * NS_PER_S  # 3 s down, in the same boot: the monotonic clock ran on
    taken = take_up(records, now, {"boot_id": "b1"}, RULES, START_NS)
    assert taken.same_boot and taken.notes == [] and taken.game.run == "A"
    assert taken.down == {"reason": "restart", "down_ms": 3000}
    # A ran 6 s to 13, 20 to 27, 34 to 41 and the 3 s down; B 13 to 20 and 27 to 34: to the ns
    assert [taken.game.used_ns(side, now) for side in "AB"] == [3 * STEP_NS + 3 * NS_PER_S, 2 * STEP_NS]
    assert [taken.game.used_ns(side, now) for side in "AB"] == [kept_running.used_ns(s, now) for s in "AB"]
    # and the panels of the clock started again show what the one kept running shows
    restarted = GameClock(RULES, checkpoint_ms=1000)
    restarted.recover(records, now, {"boot_id": "b1"})
    shown = restarted.view(now)
    assert (shown.run, shown.A.shown, shown.B.shown) == ("A", "24:36", "24:46")
    kept = kept_running.view(now)
    assert (shown.state, shown.A, shown.B) == (kept.state, kept.A, kept.B)
    assert shown.notice.kind == "recovered"  # the one difference: it says it was restarted


def test_after_a_power_cut_the_game_is_stopped_as_its_newest_record_left_it():
    records, t_ns = played()
    taken = take_up(records, 10**15, {"boot_id": "b2"}, RULES, START_NS)
    newest = records[-1]
    assert not taken.same_boot and taken.was_running == "A"
    assert taken.game.state == State.PAUSED
    for side in "AB":
        # to the millisecond its instant is floored to
        assert abs(taken.game.used_ns(side, 10**15) // 1_000_000 - newest[side]["used_ms"]) <= 1
    assert taken.down == {"reason": "power_cut", "uncertain_ms": None}


def test_a_journal_with_no_game_opens_a_new_one_and_says_nothing_is_wrong():
    made = GameClock(RULES).recover([{"seq": 0, "ev": "boot", "t_ms": 0}], 9 * NS_PER_S, {"boot_id": "b2"})
    assert [record.ev for record in made if record.ev in ("new_game", "fault")] == ["new_game"]


def test_a_last_game_that_cannot_be_taken_up_at_all_opens_a_new_one_now_and_says_why():
    records, t_ns = played()
    for record in records:
        record.pop("A", None)  # no record says what either side has used: nothing to go on from
    made = GameClock(RULES).recover(records, t_ns + NS_PER_S, {"boot_id": "b2"})
    [opened] = [record for record in made if record.ev == "new_game"]
    [fault] = [record.as_dict() for record in made if record.ev == "fault"]
    assert opened.as_dict()["t_ms"] == 0 and opened.as_dict()["state"] == State.READY
    assert fault["part"] == "journal" and fault["detail"].startswith("the last game could not be taken up (")
    assert fault["detail"].endswith("): a new game is opened; the journal's records are kept")


def test_a_game_whose_segment_begins_at_its_opening_is_known_to_be_of_this_boot_by_its_opening():
    """A later game's records begin at its `new_game` (the boot before it is in an older segment):
    the opening names its boot, so a restart in that boot is a restart, the time down charged."""
    records, t_ns = played()
    records = [record for record in records if record["ev"] != "boot"]
    assert records[0]["ev"] == "new_game" and records[0]["boot_id"] == "b1"
    taken = take_up(records, t_ns + 3 * NS_PER_S, {"boot_id": "b1"}, RULES, START_NS)
    assert taken.same_boot and taken.down == {"reason": "restart", "down_ms": 3000}


def test_a_power_cut_while_nobody_runs_loses_no_time_and_says_so():
    clock = GameClock(RULES, checkpoint_ms=1000)
    records, t_ns = played(clock)
    records += [r.as_dict() for r in clock.edge("STOP", True, t_ns) + clock.edge("STOP", False, t_ns + 10**8)]
    records = json.loads(json.dumps(records))
    assert records[-1]["state"] == State.PAUSED
    taken = take_up(records, 5 * NS_PER_S, {"boot_id": "b2"}, RULES, START_NS, checkpoint_ms=1000)
    assert taken.down == {"reason": "power_cut", "uncertain_ms": 0}  # nothing ran: nothing uncertain


def test_overtime_reached_while_the_clock_was_restarting_is_recorded_step_by_step_as_it_fell():
    """A has 10 s and runs when the service restarts (the same boot: the monotonic clock ran on);
    it is back 3 minutes later. Its overtime and every penalty step while it was down are recorded
    at their own instants, as on a clock that kept running (the director's picture marks each)."""

    def a_runs_out():
        clock = GameClock(RULES, times_s={"A": 10, "B": 600}, checkpoint_ms=1000)
        made = clock.new_game(5 * NS_PER_S, {"boot_id": "b1"})
        for edge_ns, down in ((6 * NS_PER_S, True), (6 * NS_PER_S + 10**8, False)):
            made += clock.edge("B", down, edge_ns)
        made += clock.advance(9 * NS_PER_S)
        return clock, json.loads(json.dumps([record.as_dict() for record in made]))

    def steps(records):
        return [(r.ev, r.t_ms, r.A.pen) for r in records if r.ev in ("overtime", "penalty")]

    kept_running, records = a_runs_out()
    restarted = GameClock(RULES, times_s={"A": 10, "B": 600}, checkpoint_ms=1000)
    made = restarted.recover(records, 200 * NS_PER_S, {"boot_id": "b1"})
    # A ran from 1 s into the game: -0:01 at 12 s, then a step each minute (NASPA: 10 points each)
    expected = [("overtime", 12_000, 10), ("penalty", 12_000, 10)]
    expected += [("penalty", 12_000 + n * 60_000, 10 + 10 * n) for n in (1, 2, 3)]
    assert steps(made) == steps(kept_running.advance(200 * NS_PER_S)) == expected
