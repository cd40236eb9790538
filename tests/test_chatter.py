"""A worn switch (CLOCK_RULES §10): chatter never changes what the clock records, nor when.

Any game (presses, holds, chords, stops, ends, late starts: `test_properties.games`), played clean
and played again with chatter added (bursts of open or closed pulses shorter than the 5 ms glitch
window, inside holds, on presses and releases, while idle), makes the very same records. The fast
run has a fixed seed and a bounded number of examples; `make test-slow` runs many more.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from support.games import games
from tileclock.clock.core import ButtonTiming, GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS

MS = NS_PER_MS
WINDOW = ButtonTiming().min_press_ms * MS
#: one level of a burst: shorter than the window (a worn switch's pulses are 2-4 ms)
PULSE = st.integers(MS // 2, WINDOW - 1)


def absolute(edges):
    """(t_ns, button, down) of a game's edges, given as (gap ms, button, down)."""
    t, out = 0, []
    for gap, button, down in edges:
        t += gap * MS
        out.append((t, button, down))
    return out


def marks(edges, button):
    """Each edge of `button` in `edges` (a repeated level too), with the raw level after it."""
    level, out = False, []
    for t, name, down in edges:
        if name == button:
            level = down
            out.append((t, level))
    return out


@st.composite
def burst(draw):
    """(button, where, near_edge, pulses): a chatter burst; `where` in [0, 1) places it in a quiet
    stretch of the button's contact, `near_edge` right after one of its edges (bounce)."""
    return (
        draw(st.sampled_from(["A", "B", "STOP"])),
        draw(st.floats(0, 1, exclude_max=True)),
        draw(st.booleans()),
        draw(st.lists(PULSE, min_size=1, max_size=6)),
    )


def with_chatter(edges, bursts, end_ns):
    """`edges` with each burst added where it changes nothing: after an edge of its button, ending
    a whole window before the button's next edge (or the game's last instant), back at the level the
    clean contact holds there. Bursts that do not fit are left out."""
    added = []
    for button, where, near_edge, pulses in bursts:
        length = sum(pulses)
        quiet = [(0, False), *marks(edges, button)]
        stretches = [
            (since + MS // 2, level, (quiet[i + 1][0] if i + 1 < len(quiet) else end_ns) - WINDOW - length)
            for i, (since, level) in enumerate(quiet)
        ]
        taken = [t for t, name, _ in added if name == button]
        room = [
            (lo, level, hi)
            for lo, level, hi in stretches
            if hi > lo and not any(lo <= t <= hi + length + WINDOW for t in taken)  # one burst a stretch
        ]
        if not room:
            continue
        lo, level, hi = room[int(where * len(room))]
        t = lo if near_edge else lo + int((hi - lo) * where)
        if t > hi:
            continue
        for pulse in pulses + ([pulses[-1]] if len(pulses) % 2 else []):  # an even count ends where it began
            level = not level
            added.append((t, button, level))
            t += pulse
    return sorted(
        edges + added, key=lambda edge: edge[0]
    )  # stable: a clean edge before chatter at its instant


def run(rules, times, edges, end_ns):
    clock = GameClock(PROFILES[rules], ButtonTiming(), times)
    records = clock.new_game(0)
    for t, button, down in edges:
        records += clock.edge(button, down, t)
    return records + clock.status(end_ns)


def check_chatter_changes_nothing(game, bursts):
    rules, start_a, start_b, edges, end_gap_ms = game
    edges = absolute(edges)
    end_ns = (edges[-1][0] if edges else 0) + end_gap_ms * MS
    times = {"A": start_a, "B": start_b}
    clean = run(rules, times, edges, end_ns)
    noisy = run(rules, times, with_chatter(edges, bursts, end_ns), end_ns)
    assert [r.as_dict() for r in noisy] == [r.as_dict() for r in clean]


@settings(max_examples=examples(150), deadline=None, derandomize=True)
@given(games(), st.lists(burst(), max_size=12))
def test_chatter_changes_no_record_nor_its_time(game, bursts):
    check_chatter_changes_nothing(game, bursts)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(games(), st.lists(burst(), max_size=24))
def test_chatter_changes_no_record_nor_its_time_many_games(game, bursts):
    check_chatter_changes_nothing(game, bursts)


def test_the_chatter_is_really_added():
    """The property is not empty: a burst inside a hold lands there, and it would be a release and a
    press if the window did not hold it back."""
    edges = [(0, "B", True), (1_000 * MS, "B", False)]
    noisy = with_chatter(edges, [("B", 0.25, False, [3 * MS])], 2_000 * MS)
    assert [edge[1:] for edge in noisy] == [("B", True), ("B", False), ("B", True), ("B", False)]
    assert 0 < noisy[1][0] < noisy[2][0] == noisy[1][0] + 3 * MS < 1_000 * MS - WINDOW
