"""The loop takes every edge stamped before it wakes, at its own stamp, with no grace after a deadline.

A pin backend that can hand over its edges on demand (`flush_edges`: the gpiod
factory reads the kernel's queue, the simulated one waits for a press being
posted) lets the loop wake exactly at a deadline. gpiozero's own factories
cannot, so behind them the loop still wakes 2 ms after a deadline, for an edge
still on its way from their thread. The gpiod backend is driven through the
fake chip at the `gpiod` API boundary (tests/support/fake_gpiod.py).
"""

import queue
import threading

import pytest
from gpiozero.pins.mock import MockFactory

from tileclock.clock.timecode import NS_PER_MS, NS_PER_S
from tileclock.device.assembly import RunningClock, simulated_parts
from tileclock.device.config_schema import Config
from tileclock.device.hardware.buttons import ButtonBoard
from tileclock.device.hardware.virtual import VirtualFactory, VirtualTime
from tileclock.device.reactor import DEADLINE_GRACE_NS
from tileclock.wire.protocol import unframe

S, MS = NS_PER_S, NS_PER_MS
PINS = {"A": 17, "STOP": 27, "B": 22}
PI_3B = 0xA02082


def clock_on(open_pins):
    """A clock built as the service builds it, in virtual time, on the pin factory `open_pins()` makes."""
    parts = simulated_parts(VirtualTime(0))
    parts.open_pins = open_pins
    return RunningClock(Config(), parts, checkpoints=False).boot()


def made(clock, ev):
    """The records of kind `ev` the clock has journaled."""
    return [record for record in map(unframe, clock.journal.lines) if record["ev"] == ev]


@pytest.fixture
def chip():
    pytest.importorskip("gpiod")  # the bindings are Linux-only
    from support.fake_gpiod import FakeChip

    return FakeChip()


@pytest.fixture
def behind(chip, monkeypatch):
    """A clock on the gpiod factory over the fake chip, whose reader thread has not got round to
    anything yet: every edge is still in the chip's queue when the loop wakes."""
    from tileclock.device.hardware.gpiod_pins import GpiodFactory

    monkeypatch.setattr(GpiodFactory, "_read_edges", lambda factory: None)
    clock = clock_on(lambda: GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B))
    try:
        clock.daemon.inbox.post_edge("B", True, 1 * S)  # B starts A
        clock.daemon.inbox.post_edge("B", False, 1 * S + 80 * MS)
        clock.daemon.pump(1 * S + 100 * MS)
        yield clock
    finally:
        clock.close()


def test_an_edge_still_in_the_chip_when_the_loop_wakes_at_a_deadline_counts_from_its_kernel_stamp(
    chip, behind
):
    daemon = behind.daemon
    deadline = daemon.reactor.next_deadline()  # A's next displayed second
    assert deadline == 2 * S and daemon.reactor.deadline_grace_ns == 0 and behind.clock.game.run == "A"
    chip.press(17, t_ns=deadline - 1 * MS)  # A ends its turn a millisecond before the loop wakes
    daemon.pump(deadline)
    chip.release(17, t_ns=deadline + 80 * MS)
    daemon.pump(deadline + 100 * MS)
    switch = made(behind, "switch")[0]
    assert behind.clock.used_ns("A", 3 * S) == deadline - 1 * MS - 1 * S  # not clamped to the wake
    assert switch["run"] == "B" and switch["A"]["used_ms"] == 999


def test_a_release_4_9_ms_after_a_press_still_in_the_chip_at_the_5_ms_deadline_is_a_glitch(chip, behind):
    daemon = behind.daemon
    chip.press(17, t_ns=int(2.5 * S))
    daemon.pump(int(2.5 * S) + 1 * MS)  # the loop has the press; the clock waits 5 ms to tell a glitch
    deadline = daemon.reactor.next_deadline()
    assert deadline == int(2.5 * S) + 5 * MS  # buttons.min_press_ms
    chip.release(17, t_ns=int(2.5 * S) + int(4.9 * MS))  # let go, still in the chip at the deadline
    daemon.pump(deadline)
    daemon.pump(3 * S + 100 * MS)
    assert made(behind, "switch") == [] and behind.clock.game.run == "A"


class Sleeps:
    """The loop's input queue, noting each timeout the loop sleeps with (nothing ever arrives)."""

    def __init__(self, inner):
        self.inner = inner
        self.timeouts = []

    def get(self, timeout=None):
        self.timeouts.append(timeout)
        raise queue.Empty

    def get_nowait(self):
        return self.inner.get_nowait()

    def put(self, item):
        self.inner.put(item)


@pytest.mark.parametrize(
    ("factory", "grace_ns"),
    [
        (lambda: VirtualFactory(VirtualTime(0)), 0),  # flushes: the loop wakes at the deadline
        (MockFactory, DEADLINE_GRACE_NS),  # gpiozero's own kind (lgpio, RPi.GPIO): no way to flush
    ],
    ids=["flushing", "not-flushing"],
)
def test_after_a_deadline_the_loop_waits_for_late_edges_only_behind_pins_that_cannot_flush(factory, grace_ns):
    clock = clock_on(factory)
    try:
        daemon = clock.daemon
        daemon.inbox.post_edge("B", True, 1 * S)  # B starts A: A's next second is a deadline
        daemon.inbox.post_edge("B", False, 1 * S + 80 * MS)
        daemon.pump(1 * S + 100 * MS)
        deadline = daemon.reactor.next_deadline()
        daemon.reactor.inputs = Sleeps(daemon.reactor.inputs)
        turns = iter((False, True))
        daemon.run_forever(now_ns=lambda: deadline - 3 * MS, should_stop=lambda: next(turns), boot=False)
    finally:
        clock.close()
    assert daemon.reactor.inputs.timeouts == [pytest.approx((3 * MS + grace_ns) / S, abs=1e-9)]


def flush_waits_for_a_post_in_flight(press, flush, pressing_thread, board_posts):
    """`press()` starts an edge that `pressing_thread` stamps and then posts; while that thread is held
    just before its post, a `flush()` on another thread must not return until the edge is posted."""
    in_flight, go = threading.Event(), threading.Event()
    posted = queue.SimpleQueue()

    def post(*edge):
        if threading.current_thread().name == pressing_thread:
            in_flight.set()
            go.wait(timeout=10)
        posted.put(edge)

    board_posts.append(post)
    seen = queue.SimpleQueue()
    try:
        press()
        assert in_flight.wait(timeout=10)  # stamped, not yet posted
        flusher = threading.Thread(target=lambda: (flush(), seen.put(posted.qsize())))
        flusher.start()
        flusher.join(timeout=0.2)  # a flush that did not wait for the post would have returned by now
    finally:
        go.set()
    flusher.join(timeout=10)
    return seen.get(timeout=10)


def board_with(factory):
    """Buttons on `factory` whose edges go to whatever post the caller appends to the list returned."""
    posts = []
    board = ButtonBoard(PINS, lambda *edge: posts[-1](*edge), pin_factory=factory)
    return board, posts


def test_a_gpiod_flush_returns_only_once_the_reader_has_posted_what_it_read(chip):
    from tileclock.device.hardware.gpiod_pins import GpiodFactory

    factory = GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B)
    board, posts = board_with(factory)
    try:
        seen = flush_waits_for_a_post_in_flight(
            lambda: chip.press(17, t_ns=42), factory.flush_edges, "gpiod-edges", posts
        )
    finally:
        board.close()
    assert seen == 1


def test_a_simulated_flush_returns_only_once_an_edge_stamped_before_it_is_posted():
    factory = VirtualFactory(VirtualTime(0))
    board, posts = board_with(factory)
    pin = board.buttons["A"].pin
    try:
        seen = flush_waits_for_a_post_in_flight(
            lambda: threading.Thread(target=factory.drive, args=(pin, True), name="presser").start(),
            factory.flush_edges,
            "presser",
            posts,
        )
    finally:
        board.close()
    assert seen == 1
