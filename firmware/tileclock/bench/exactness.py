"""How exact the clock is: against an edge-to-edge reference, and beside a whole-second ticking clock.

All in virtual time: random presses at random nanosecond instants go through
the real core (`GameClock`), and a reference beside it adds up, edge to edge,
the exact interval each side's clock ran. The same games are also timed as a
clock that counts whole seconds on a 1 Hz tick would time them (the usual way:
each tick charges a second to the side running at that instant), to show what
exactness is worth in seconds and in penalties.
"""

import random
import statistics

from ..clock.core import GameClock
from ..clock.rules import PROFILES
from ..clock.timecode import NS_PER_MS, NS_PER_S

#: Random games are played under these rules: no overtime cap, so no game is cut short.
RULES = PROFILES["nsa1997"]
PRESS_NS = 100 * NS_PER_MS  # how long a button is held down


def exact_max_error_ns(inputs=100_000, seed=1):
    """Largest gap between the time the core charged and the exact sum of edge-to-edge intervals.

    Random presses, stops and corrections at random nanosecond instants; checked after every edge.
    """
    rng = random.Random(seed)
    clock = GameClock(PROFILES["naspa"], times_s={"A": 10**7, "B": 10**7})  # no overtime: only time
    clock.new_game(0)
    expected = {"A": 0, "B": 0}
    t = last = 0
    worst = 0
    for _ in range(inputs):
        gesture = rng.choices(["A", "B", "STOP", "correction"], weights=[8, 8, 1, 1])[0]
        t += rng.randrange(30 * NS_PER_MS, 30 * NS_PER_S)
        if gesture == "correction":
            # a chord: STOP held 0.6 s before the side's tap
            edges = [("STOP", True, t), (rng.choice("AB"), True, t + 600 * NS_PER_MS)]
            edges += [(edges[1][0], False, t + 640 * NS_PER_MS), ("STOP", False, t + 680 * NS_PER_MS)]
        else:
            edges = [(gesture, True, t), (gesture, False, t + rng.randrange(25 * NS_PER_MS, 400 * NS_PER_MS))]
        for button, down, at in edges:
            clock.advance(at)  # a press is taken 5 ms after its first edge, and dated at that edge
            if clock.run:
                expected[clock.run] += at - last
            last = at
            clock.edge(button, down, at)
            for side in "AB":
                worst = max(worst, abs(clock.used_ns(side, at) - expected[side]))
        t = edges[-1][2]
    return worst


def random_game(rng):
    """One game as `(t_ns, button)` presses: B starts A, the sides alternate for 10 to 14 turns each
    (5 s to 4 min, about 25 minutes a side in all, so a good share go into overtime), then STOP."""
    t = rng.randrange(NS_PER_S, 2 * NS_PER_S)
    presses = [(t, "B")]
    side = "A"
    for _ in range(2 * rng.randint(10, 14)):
        t += rng.randrange(5 * NS_PER_S, 240 * NS_PER_S)
        presses.append((t, side))
        side = "B" if side == "A" else "A"
    presses.append((t + rng.randrange(NS_PER_S, 5 * NS_PER_S), "STOP"))
    return presses


def intervals(presses):
    """Each side's running intervals `(side, start_ns, end_ns)`, edge to edge."""
    runs, running, since = [], None, None
    for t, button in presses:
        if running is not None:
            runs.append((running, since, t))
        if button == "STOP":
            running = None
        else:
            running = "B" if button == "A" else "A"
        since = t
    return runs


def ticking_used_s(runs, phase_ns):
    """Whole seconds a 1 Hz ticking clock charges each side: the ticks (at `phase_ns` past each
    second) that fall while that side runs."""
    used = {"A": 0, "B": 0}
    for side, start, end in runs:
        first = -(-(start - phase_ns) // NS_PER_S)  # the first tick at or after the start
        last = -(-(end - phase_ns) // NS_PER_S)  # the first tick at or after the end (not counted)
        used[side] += last - first
    return used


def beside_a_ticking_clock(games=2000, seed=3):
    """The same random games timed by the core, by the edge-to-edge reference and by a whole-second
    ticking clock; errors against the reference, and how often the penalty comes out wrong."""
    rng = random.Random(seed)
    limit = RULES.time_s
    clock_worst = 0
    clock_wrong = tick_wrong = overtime_games = 0
    tick_errors_ns = []
    for _ in range(games):
        presses = random_game(rng)
        clock = GameClock(RULES)
        clock.new_game(0)
        for t, button in presses:
            clock.edge(button, True, t)
            clock.edge(button, False, t + PRESS_NS)
        end = presses[-1][0] + PRESS_NS
        runs = intervals(presses)
        exact = {side: sum(b - a for s, a, b in runs if s == side) for side in "AB"}
        ticked = ticking_used_s(runs, rng.randrange(NS_PER_S))
        penalty = {side: RULES.overtime_penalty(exact[side] // NS_PER_S - limit) for side in "AB"}
        tick_penalty = {side: RULES.overtime_penalty(ticked[side] - limit) for side in "AB"}
        clock_worst = max(clock_worst, *(abs(clock.used_ns(side, end) - exact[side]) for side in "AB"))
        tick_errors_ns.append(max(abs(ticked[side] * NS_PER_S - exact[side]) for side in "AB"))
        if any(penalty.values()) or any(tick_penalty.values()):
            overtime_games += 1
            clock_wrong += any(clock.penalty(side, end) != penalty[side] for side in "AB")
            tick_wrong += tick_penalty != penalty

    def share(count):
        return 100 * count / max(overtime_games, 1)

    return {
        "games": games,
        "overtime_games": overtime_games,
        "clock_max_error_ns": clock_worst,
        "clock_wrong_penalty_pct": share(clock_wrong),
        "tick_median_error_ms": statistics.median(tick_errors_ns) / NS_PER_MS,
        "tick_max_error_ms": max(tick_errors_ns) / NS_PER_MS,
        "tick_wrong_penalty_pct": share(tick_wrong),
    }
