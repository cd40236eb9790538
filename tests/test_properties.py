"""Invariants of the clock core over any sequence of raw edges (hypothesis)."""

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from support.games import GAMES, play
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS
from tileclock.wire.records import SIDES


@settings(max_examples=examples(200), deadline=None)
@given(GAMES)
def test_time_is_conserved(game):
    """Both sides' used time plus the stopped time (less any time charged to both at once: both
    players late) is exactly the game's elapsed time, with absences, round ends and corrections;
    and the clock's own check of its books says so (the service keeps the watchdog fed only while
    it does: a false alarm would restart the clock mid-game)."""
    _, _, samples = play(*game)
    for t, used, stopped, t0, balanced in samples:
        assert used["A"] + used["B"] + stopped == t - t0
        assert balanced


@settings(max_examples=examples(200), deadline=None)
@given(GAMES)
def test_records_charge_exactly_the_time_between_them(game):
    """Between two records of a game, only a running side's time moves, by exactly the gap (both
    sides' while both players are late; none while a school team's absence counts)."""
    _, records, _ = play(*game)
    for before, after in itertools.pairwise(records):
        assert after.seq == before.seq + 1
        if after.ev == "new_game":
            continue
        assert after.t_ms >= before.t_ms
        gap = after.t_ms - before.t_ms
        for side in SIDES:
            moved = getattr(after, side).used_ms - getattr(before, side).used_ms
            if before.run == side:
                assert moved == gap
            elif before.run is not None or before.state != "running":
                assert moved == 0
            else:
                assert moved in (0, gap)


def shown(seconds_left):
    """docs/rules.md#display-and-penalty-one-rule-for-both: `m:ss`, or `-m:ss` past the limit."""
    sign = "-" if seconds_left < 0 else ""
    return f"{sign}{abs(seconds_left) // 60}:{abs(seconds_left) % 60:02d}"


def overtime_penalty(over_s):
    """10 points for each minute or part of one past the limit (every profile)."""
    return 10 * -(-over_s // 60) if over_s > 0 else 0


class Reference:
    """What each record must show, worked out from the records' used times as docs/rules.md says."""

    def __init__(self, rules, start_s):
        self.rules, self.start_s = PROFILES[rules], start_s
        self.new_game()

    def new_game(self):
        self.limit_s = dict(self.start_s)
        self.absent_since, self.late_pen, self.lost = {}, {"A": 0, "B": 0}, None
        self.past_cap_by_correction = {}  # side -> its used time when a correction took it past the cap

    def absent_penalty(self, absent_ms):
        """School rule 25: 10 for each whole 3 minutes absent, up to the forfeit at 15:00."""
        if self.rules.name != "school":
            return 0
        return 10 * (min(absent_ms, 15 * 60_000 - 1) // 180_000)

    def check(self, record):
        if record.ev == "new_game":
            self.new_game()
        elif record.ev == "adjust":
            side = record.extra["player"]
            assert record.extra["delta_ms"] in (60_000, -60_000), record  # a correction is one minute
            self.limit_s[side] += record.extra["delta_ms"] // 1000
            over_s = getattr(record, side).used_ms // 1000 - self.limit_s[side]
            if self.rules.overtime_cap_s is not None and over_s > self.rules.overtime_cap_s + 1:
                self.past_cap_by_correction[side] = getattr(record, side).used_ms
        elif record.ev == "late_start":
            player = record.extra["player"]
            for side in SIDES if player == "both" else (player,):
                self.absent_since[side] = record.t_ms
        elif record.ev == "forfeit":
            self.lost = (record.extra["player"], record.extra["reason"])
        for side, since in self.absent_since.items():
            due = self.absent_penalty(record.t_ms - since)
            if record.ev == "penalty" and record.extra == {"player": side, "kind": "late"}:
                assert due > self.late_pen[side], record  # a step up, at its instant
                self.late_pen[side] = due
            else:
                assert due - self.late_pen[side] in (0, 10), record  # a step's record may follow at once
        if record.ev == "arrived":
            self.absent_since.pop(record.extra["player"])
        if record.extra.get("arrived") or record.ev in ("forfeit", "end", "pause"):
            self.absent_since = {}  # a late side's penalty stays as it was when it arrived
        cap = self.rules.overtime_cap_s
        for side in SIDES:
            state = getattr(record, side)
            left_s = self.limit_s[side] - state.used_ms // 1000
            if side in self.past_cap_by_correction:  # the game ended at the correction: its clock stays
                assert state.used_ms == self.past_cap_by_correction[side], record
            elif cap is not None:
                assert -left_s <= cap + 1, record  # no clock runs past the cap
            if cap is not None:
                left_s = max(left_s, -(cap + 1))  # nor does a display show past it (a correction)
            assert state.shown == shown(left_s), record
            assert state.late_pen == self.late_pen[side], record  # kept apart from the overtime penalty
            if cap is not None and -left_s > cap:
                assert (state.shown, state.pen) == ("-10:01", 100 + state.late_pen), record
            else:
                assert state.pen == overtime_penalty(-left_s) + self.late_pen[side], record
        if self.lost and self.lost[1] == "overtime_limit":
            assert getattr(record, self.lost[0]).shown == "-10:01"


@pytest.mark.many_examples  # its @given is inside it: `make test-slow` runs its 300 examples
def test_every_record_shows_the_time_and_penalty_the_rules_give():
    """Checked against `Reference`; and the steering works: most games reach overtime and make a
    correction, most NASPA games end at the overtime cap, and many school late starts earn a late
    penalty."""
    reached = Counter()

    # derandomized: the shares below are of one fixed run, so a run of bad luck cannot fail the
    # steering (200 examples under make test's cap once gave 1 late penalty in 20 school starts).
    # But any change to the strategies or this source draws another run: 100 examples once gave 0
    # late penalties in 7 school late starts; 200 give enough of each share for any draw
    @settings(max_examples=examples(300, cap=200), deadline=None, derandomize=True)
    @given(GAMES)
    def check(game):
        _, records, _ = play(*game)
        rules, start_a, start_b = game[:3]
        reference = Reference(rules, {"A": start_a, "B": start_b})
        for record in records:
            reference.check(record)
        evs = {record.ev for record in records}
        reached["runs"] += 1
        reached["naspa runs"] += rules == "naspa"
        reached["cap"] += any(r.ev == "forfeit" and r.extra["reason"] == "overtime_limit" for r in records)
        reached["correction"] += "adjust" in evs
        reached["overtime"] += "overtime" in evs
        reached["school late starts"] += rules == "school" and "late_start" in evs
        reached["late penalty"] += any(r.ev == "penalty" and r.extra["kind"] == "late" for r in records)
        reached["both late"] += any(r.ev == "late_start" and r.extra["player"] == "both" for r in records)
        reached["round over"] += any(r.ev == "end" and r.extra["reason"] == "round_over" for r in records)
        reached["reissued"] += any(r.ev == "end" and "supersedes" in r.extra for r in records)

    check()
    # each share well under the lowest seen in many runs (corrections and overtime about 75 %, the
    # cap 44 to 66 %, late penalties 20 to 87 %), so that a run of bad luck does not fail them
    assert reached["runs"] >= 100, reached
    assert reached["correction"] >= 0.5 * reached["runs"], reached
    assert reached["overtime"] >= 0.5 * reached["runs"], reached
    assert reached["cap"] >= 0.3 * reached["naspa runs"], reached
    assert reached["late penalty"] >= 0.1 * reached["school late starts"] > 0, reached
    assert reached["both late"] > 0 and reached["round over"] > 0 and reached["reissued"] > 0, reached


@settings(max_examples=examples(200), deadline=None)
@given(GAMES)
def test_nothing_runs_after_the_end(game):
    """After `end` no time is charged and only the director's corrections change a display (each
    followed by a new `end`), until a `reopen` or the next game; a call to the director may be made
    and answered then, changing nothing."""
    _, records, _ = play(*game)
    ended = None
    for record in records:
        if record.ev in ("new_game", "reopen"):
            ended = None
        elif ended is not None:
            assert record.state == "ended" and record.run is None
            assert (record.A.used_ms, record.B.used_ms) == (ended.A.used_ms, ended.B.used_ms)
            corrected = ("adjust", "overtime", "penalty", "forfeit", "end", "error")
            assert (
                record.ev
                in ("ignored", "status", "fault", "fault_cleared", "call", "call_answer") + corrected
            ), record
            if record.ev not in corrected:
                assert (record.A, record.B) == (ended.A, ended.B)
        if record.ev == "end":
            ended = record


@settings(max_examples=examples(200), deadline=None)
@given(GAMES)
def test_any_interleaving_of_edges_leaves_a_consistent_state(game):
    clock, records, _ = play(*game)
    for record in records:
        assert record.run is None or record.state == "running"  # none runs while absence is counted
        assert record.state in ("ready", "running", "paused", "ended")
    assert [r.seq for r in records] == list(range(len(records)))
    deadline = clock.next_deadline()
    assert deadline is None or deadline > clock.now_ns
    if clock.state == "running":
        assert deadline is not None  # a running clock always has a next displayed second


def bounce_train(start_down, gaps_ms):
    """Edges alternating from `start_down`, `gaps_ms` apart, always an odd count (ends where it started)."""
    gaps = [0] + list(gaps_ms[: len(gaps_ms) // 2 * 2])
    return [(gap, start_down == (i % 2 == 0)) for i, gap in enumerate(gaps)]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.integers(30, 30_000), st.lists(st.integers(1, 4), max_size=12)), max_size=20))
def test_a_bouncing_press_is_one_press_and_one_record(presses):
    """However a contact bounces (each level held under the 5 ms glitch window), press and release
    make one record."""
    clock = GameClock(PROFILES["naspa"])
    records = clock.new_game(0)
    t = 0
    for gap_ms, bounce in presses:
        t += gap_ms * NS_PER_MS
        for phase_down in (True, False):
            for edge_gap, down in bounce_train(phase_down, bounce):
                t += edge_gap * NS_PER_MS
                records += clock.edge("B", down, t)
            t += 30 * NS_PER_MS  # held (or left) long enough to settle
    # the first press starts A; every later B press is on the idle side
    assert [r.ev for r in records] == ["new_game"] + (
        ["start"] + ["ignored"] * (len(presses) - 1) if presses else []
    )
