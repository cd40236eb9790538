"""Invariants of the clock core over any sequence of raw edges (hypothesis)."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tileclock.clock.core import ButtonTiming, GameClock
from tileclock.clock.records import SIDES
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS

BUTTON = st.sampled_from(["A", "B", "STOP"])
# gaps in whole ms: bounce-sized, human-sized, and long enough to reach overtime and the cap
GAP_MS = st.one_of(st.integers(0, 30), st.integers(0, 3_000), st.integers(0, 400_000))
EDGES = st.lists(st.tuples(GAP_MS, BUTTON, st.booleans()), max_size=80)
START_S = st.integers(0, 120)


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


def shown_seconds(shown):
    sign = -1 if shown.startswith("-") else 1
    minutes, seconds = shown.lstrip("-").split(":")
    return sign * (int(minutes) * 60 + int(seconds))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), START_S, START_S, EDGES, GAP_MS)
def test_time_is_conserved(rules, start_a, start_b, edges, end_gap_ms):
    """Both sides' used time plus the stopped time is exactly the game's elapsed time."""
    _, _, samples = play(rules, start_a, start_b, edges, end_gap_ms)
    for t, used, stopped, t0 in samples:
        assert used["A"] + used["B"] + stopped == t - t0


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), START_S, START_S, EDGES, GAP_MS)
def test_records_charge_exactly_the_time_between_them(rules, start_a, start_b, edges, end_gap_ms):
    """Between two records of a game, only the running side's time moves, by exactly the gap."""
    _, records, _ = play(rules, start_a, start_b, edges, end_gap_ms)
    for before, after in itertools.pairwise(records):
        assert after.seq == before.seq + 1
        if after.ev == "new_game":
            continue
        assert after.t_ms >= before.t_ms
        for side in SIDES:
            moved = getattr(after, side).used_ms - getattr(before, side).used_ms
            expected = after.t_ms - before.t_ms if before.run == side else 0
            assert moved == expected


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), START_S, START_S, EDGES, GAP_MS)
def test_the_penalty_always_follows_the_displayed_time(rules, start_a, start_b, edges, end_gap_ms):
    profile = PROFILES[rules]
    _, records, _ = play(rules, start_a, start_b, edges, end_gap_ms)
    late_pen = {"A": 0, "B": 0}
    lost_by_cap = None
    for record in records:
        if record.ev == "new_game":
            late_pen, lost_by_cap = {"A": 0, "B": 0}, None
        if record.ev == "penalty" and record.extra["kind"] == "late":
            late_pen[record.extra["player"]] = getattr(record, record.extra["player"]).pen - (
                profile.overtime_penalty(-shown_seconds(getattr(record, record.extra["player"]).shown))
            )
        if record.ev == "forfeit" and record.extra["reason"] == "overtime_limit":
            lost_by_cap = record.extra["player"]
        for side in SIDES:
            state = getattr(record, side)
            if side == lost_by_cap:
                assert state.pen == profile.cap_deduction
                assert shown_seconds(state.shown) == -(profile.overtime_cap_s + 1)
            else:
                assert state.pen == profile.overtime_penalty(-shown_seconds(state.shown)) + late_pen[side]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), START_S, START_S, EDGES, GAP_MS)
def test_nothing_runs_after_the_end(rules, start_a, start_b, edges, end_gap_ms):
    _, records, _ = play(rules, start_a, start_b, edges, end_gap_ms)
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


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), START_S, START_S, EDGES, GAP_MS)
def test_any_interleaving_of_edges_leaves_a_consistent_state(rules, start_a, start_b, edges, end_gap_ms):
    clock, records, _ = play(rules, start_a, start_b, edges, end_gap_ms)
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
