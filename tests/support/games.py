"""Random games for the clock core: raw edges as hypothesis strategies (gestures, with raw edges
mixed in to break them), and a clock run through them."""

from hypothesis import strategies as st

from tileclock.clock.core import ButtonTiming, GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS
from tileclock.wire.records import SIDES

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
#: End the game: hold STOP 2-3 s on a stopped clock, let go, and press STOP again to confirm (on an
#: ended game the hold alone starts the next one, and the press is an ignored short STOP).
END_HOLD = st.builds(
    lambda gap, hold, confirm: pressed(gap, "STOP", hold) + pressed(confirm, "STOP"),
    THINK_MS,
    st.integers(2_000, 3_000),
    st.integers(100, 4_500),
)


@st.composite
def correction(draw):
    """Stop the clock, make one or two corrections (STOP held 0.5 s first, then a tap adds a minute,
    a hold takes one), play on."""
    edges = pressed(draw(THINK_MS), "STOP") + [(draw(st.integers(300, 5_000)), "STOP", True)]
    for _ in range(draw(st.integers(1, 2))):
        edges += pressed(600, draw(SIDE), draw(st.sampled_from([100, 600, 1_200, 1_800])))
    return edges + [(300, "STOP", False)] + pressed(draw(st.integers(300, 5_000)), draw(SIDE))


#: A fresh game opens with a side's press, or with a late start (STOP held, the present side pressed)
#: after which the late side stays away a while (long enough for a late penalty in some runs).
OPENING = st.one_of(
    st.builds(pressed, st.integers(0, 5_000), SIDE),
    st.builds(
        lambda present, away_ms: [
            (0, "STOP", True),
            *pressed(600, present),
            (100, "STOP", False),
            (away_ms, present, False),
        ],
        SIDE,
        st.sampled_from([0, 60_000, 190_000, 370_000, 730_000, 1_000_000]),
    ),
    # both players late: STOP held, both sides pressed together, then both away a while (the wait is
    # a release of the free A, which is no edge)
    st.builds(
        lambda away_ms: [
            *[(0, "STOP", True), (600, "A", True), (50, "B", True), (100, "A", False), (50, "B", False)],
            *[(100, "STOP", False), (away_ms, "A", False)],
        ],
        st.sampled_from([0, 60_000, 190_000, 370_000, 730_000]),
    ),
)
MOVES = st.lists(st.one_of(TURN, TURN, STOP_PRESS, RAW_EDGE, END_HOLD, correction()), max_size=12)
# the last wait: mostly long enough for a side to run past its time and the 10 minutes after it
END_GAP_MS = st.sampled_from(["any"] + ["long"] * 9).flatmap(
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
    end_gap_ms = draw(END_GAP_MS)
    if rules == "school" and draw(st.booleans()):
        end_gap_ms = 3_100_000  # past the school round's 50 minutes
    return rules, start_a, start_b, edges, end_gap_ms


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
        used = {side: clock.used_ns(side, t) for side in SIDES}
        samples.append((t, used, clock.stopped_ns(t) - clock.shared_ns(t), clock.t0_ns, clock.balanced(t)))
    t += end_gap_ms * NS_PER_MS
    records += clock.status(t)
    return clock, records, samples
