"""Invariants of the clock core over any sequence of raw edges (hypothesis)."""

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tileclock.clock.core import ButtonTiming, GameClock
from tileclock.clock.records import SIDES
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS

BUTTON = st.sampled_from(["A", "B", "STOP"])
SIDE = st.sampled_from(["A", "B"])
# gaps in whole ms: bounce-sized, human-sized, and long enough to reach overtime and the cap
GAP_MS = st.one_of(st.integers(0, 30), st.integers(0, 3_000), st.integers(0, 400_000))
START_S = st.integers(0, 120)
THINK_MS = st.one_of(st.integers(250, 60_000), st.integers(250, 400_000))


def pressed(gap_ms, button, hold_ms=100):
    return [(gap_ms, button, True), (hold_ms, button, False)]


# Gestures as edges (gap since the previous edge in ms, button, down); raw edges mix in to break them.
TURN = st.builds(pressed, THINK_MS, SIDE)
STOP_PRESS = st.builds(pressed, THINK_MS, st.just("STOP"))
RAW_EDGE = st.tuples(GAP_MS, BUTTON, st.booleans()).map(lambda edge: [edge])
END_HOLD = st.builds(pressed, THINK_MS, st.just("STOP"), st.integers(2_000, 3_000))


@st.composite
def correction(draw):
    """Stop the clock, make one or two corrections (a tap adds a minute, a hold takes one), play on."""
    edges = pressed(draw(THINK_MS), "STOP") + [(draw(st.integers(300, 5_000)), "STOP", True)]
    for _ in range(draw(st.integers(1, 2))):
        edges += pressed(300, draw(SIDE), draw(st.sampled_from([100, 600, 1_200, 1_800])))
    return edges + [(300, "STOP", False)] + pressed(draw(st.integers(300, 5_000)), draw(SIDE))


#: A fresh game opens with a side's press, or with a late start (STOP held, the present side pressed)
#: after which the late side stays away a while (long enough for a late penalty in some runs).
OPENING = st.one_of(
    st.builds(pressed, st.integers(0, 5_000), SIDE),
    st.builds(
        lambda present, away_ms: [
            (0, "STOP", True),
            *pressed(100, present),
            (100, "STOP", False),
            (away_ms, present, False),
        ],
        SIDE,
        st.sampled_from([0, 60_000, 190_000, 370_000, 730_000, 1_000_000]),
    ),
)
MOVES = st.lists(st.one_of(TURN, TURN, STOP_PRESS, RAW_EDGE, END_HOLD, correction()), max_size=12)
# the last wait: mostly long enough for a side to run past its time and the 10 minutes after it
END_GAP_MS = st.sampled_from(["any"] + ["long"] * 5).flatmap(
    lambda kind: GAP_MS if kind == "any" else st.integers(900_000, 2_400_000)
)
RELEASE_ALL = [(300, button, False) for button in ("A", "B", "STOP")]  # a release of a free button is no edge


@st.composite
def games(draw):
    """(rules, start_a, start_b, edges, end_gap_ms): a game steered so that most runs make a
    correction and most NASPA runs reach the overtime cap, with raw edges mixed in to break gestures."""
    rules, start_a, start_b = draw(st.sampled_from(sorted(PROFILES))), draw(START_S), draw(START_S)
    edges = draw(OPENING) + [edge for move in draw(MOVES) for edge in move]
    edges += draw(correction()) + [edge for move in draw(MOVES) for edge in move] + RELEASE_ALL
    # whatever state that left, get a side's clock running for the long last wait
    state = play(rules, start_a, start_b, edges, 0)[1][-1].state
    if state == "ended":
        edges += draw(END_HOLD)  # the next game
    if state != "running":
        edges += draw(TURN)
    return rules, start_a, start_b, edges, draw(END_GAP_MS)


GAMES = games()


def play(rules, start_a, start_b, edges, end_gap_ms):
    """Run `edges` through a clock; return it, its records, and (t_ns, clock snapshot) checks."""
    clock = GameClock(PROFILES[rules], ButtonTiming(), {"A": start_a, "B": start_b})
    records = clock.new_game(0)
    t = 0
    samples = []
    for gap, button, down in edges:
        t += gap * NS_PER_MS
        records += clock.edge(button, down, t)
        samples.append(
            (t, {side: clock.used_ns(side, t) for side in SIDES}, clock.stopped_ns(t), clock.t0_ns)
        )
    t += end_gap_ms * NS_PER_MS
    records += clock.status(t)
    return clock, records, samples


@settings(max_examples=200, deadline=None)
@given(GAMES)
def test_time_is_conserved(game):
    """Both sides' used time plus the stopped time is exactly the game's elapsed time."""
    _, _, samples = play(*game)
    for t, used, stopped, t0 in samples:
        assert used["A"] + used["B"] + stopped == t - t0


@settings(max_examples=200, deadline=None)
@given(GAMES)
def test_records_charge_exactly_the_time_between_them(game):
    """Between two records of a game, only the running side's time moves, by exactly the gap."""
    _, records, _ = play(*game)
    for before, after in itertools.pairwise(records):
        assert after.seq == before.seq + 1
        if after.ev == "new_game":
            continue
        assert after.t_ms >= before.t_ms
        for side in SIDES:
            moved = getattr(after, side).used_ms - getattr(before, side).used_ms
            expected = after.t_ms - before.t_ms if before.run == side else 0
            assert moved == expected


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
        self.late_side, self.late_pen, self.lost = None, {"A": 0, "B": 0}, None
        self.past_cap_by_correction = False

    def absent_penalty(self, used_ms):
        """School rule 25: 10 for each whole 3 minutes absent, up to the forfeit at 15:00."""
        if self.rules.name != "school":
            return 0
        return 10 * (min(used_ms, 15 * 60_000 - 1) // 180_000)

    def check(self, record):
        if record.ev == "new_game":
            self.new_game()
        elif record.ev == "adjust":
            side = record.extra["player"]
            assert record.extra["delta_ms"] in (60_000, -60_000), record  # a correction is one minute
            self.limit_s[side] += record.extra["delta_ms"] // 1000
            if self.rules.overtime_cap_s is not None:
                # A correction that takes a side past the cap does not end the game today (the cap
                # is checked only as time runs): an open rules question, so not asserted here.
                over = getattr(record, side).used_ms // 1000 - self.limit_s[side]
                self.past_cap_by_correction |= over > self.rules.overtime_cap_s
        elif record.ev == "late_start":
            self.late_side = record.extra["player"]
        elif record.ev == "forfeit":
            self.lost = (record.extra["player"], record.extra["reason"])
        if self.late_side:
            self.late_pen[self.late_side] = self.absent_penalty(getattr(record, self.late_side).used_ms)
            if record.extra.get("arrived") or record.ev in ("forfeit", "end"):
                self.late_side = None  # the late side's penalty stays as it was when it arrived
        for side in SIDES:
            state = getattr(record, side)
            left_s = self.limit_s[side] - state.used_ms // 1000
            capped = self.rules.overtime_cap_s is not None and not self.past_cap_by_correction
            if capped and (side, "overtime_limit") != self.lost:
                assert -left_s <= self.rules.overtime_cap_s, record  # the game ends at -10:01
            assert state.shown == shown(left_s), record
            if self.lost == (side, "overtime_limit"):
                assert (state.shown, state.pen) == ("-10:01", 100), record
            else:
                assert state.pen == overtime_penalty(-left_s) + self.late_pen[side], record


def test_every_record_shows_the_time_and_penalty_the_rules_give():
    """Checked against `Reference`; and the steering works: most games make a correction, most NASPA
    games end at the overtime cap, and many school late starts earn a late penalty."""
    reached = Counter()

    @settings(max_examples=300, deadline=None)
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
        reached["school late starts"] += rules == "school" and "late_start" in evs
        reached["late penalty"] += any(r.ev == "penalty" and r.extra["kind"] == "late" for r in records)

    check()
    assert reached["runs"] >= 100, reached
    assert reached["correction"] >= 0.6 * reached["runs"], reached
    assert reached["cap"] >= 0.5 * reached["naspa runs"], reached
    assert reached["late penalty"] >= 0.3 * reached["school late starts"] > 0, reached


@settings(max_examples=200, deadline=None)
@given(GAMES)
def test_nothing_runs_after_the_end(game):
    _, records, _ = play(*game)
    ended = None
    for record in records:
        if record.ev == "new_game":
            ended = None
        elif ended is not None:
            assert record.state == "ended" and record.run is None
            assert (record.A, record.B) == (ended.A, ended.B)
            assert record.ev in ("ignored", "status", "fault", "fault_cleared")  # a button may stick
        if record.ev == "end":
            ended = record


@settings(max_examples=200, deadline=None)
@given(GAMES)
def test_any_interleaving_of_edges_leaves_a_consistent_state(game):
    clock, records, _ = play(*game)
    for record in records:
        assert (record.run is not None) == (record.state == "running")
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(30, 30_000), st.lists(st.integers(1, 19), max_size=12)), max_size=20))
def test_a_bouncing_press_is_one_press_and_one_record(presses):
    """However a contact bounces (edges under the 20 ms window), press and release make one record."""
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
