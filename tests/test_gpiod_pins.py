"""The gpiod pin factory: kernel edge events with kernel timestamps, no polling, through gpiozero.

Off a Pi, against a fake chip at the `gpiod` API boundary (tests/fake_gpiod.py says why).
"""

import logging
import queue
import select

import pytest

gpiod = pytest.importorskip("gpiod")  # the bindings are Linux-only

from fake_gpiod import FakeChip
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.device.hardware import gpiod_pins
from tileclock.device.hardware.buttons import ButtonBoard
from tileclock.device.hardware.gpiod_pins import GpiodFactory
from tileclock.device.hardware.pins import choose_backend
from tileclock.device.loop import Daemon

PINS = {"A": 17, "STOP": 27, "B": 22}
PI_3B = 0xA02082


@pytest.fixture
def chip():
    return FakeChip()


@pytest.fixture
def board(chip):
    """The three buttons on a gpiod factory over the fake chip; edges land in `board.edges`."""
    edges = queue.Queue()
    factory = GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B)
    board = ButtonBoard(PINS, lambda *edge: edges.put(edge), pin_factory=factory)
    board.edges = edges
    yield board
    board.close()


def test_the_three_lines_are_one_request_with_pull_ups_and_both_edges(chip, board):
    request = chip.request
    assert sorted(request.offsets) == [17, 22, 27] and request.consumer == "tileclock"
    for offset in request.offsets:
        settings = request.settings(offset)
        assert settings.direction == gpiod.line.Direction.INPUT
        assert settings.bias == gpiod.line.Bias.PULL_UP
        assert settings.edge_detection == gpiod.line.Edge.BOTH
    assert not any(button.is_active for button in board.buttons.values())  # pulled up: released


def test_each_edge_carries_the_kernels_timestamp_to_the_nanosecond(chip, board):
    chip.press(17, t_ns=123_456_789_012_345)
    chip.release(17, t_ns=123_456_839_012_346)
    chip.press(22, t_ns=123_457_000_000_001)
    got = [board.edges.get(timeout=5) for _ in range(3)]
    assert got == [
        ("A", True, 123_456_789_012_345),
        ("A", False, 123_456_839_012_346),
        ("B", True, 123_457_000_000_001),
    ]
    assert board.buttons["B"].is_active


def test_a_press_is_charged_from_its_kernel_stamp_however_late_the_loop_takes_it(chip):
    clock = GameClock(PROFILES["naspa"])
    daemon = Daemon(clock)
    factory = GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B)
    board = ButtonBoard(PINS, daemon.post_edge, pin_factory=factory)
    try:
        daemon.boot(0)
        chip.press(22, t_ns=1_000_000_000)  # B starts A
        chip.release(22, t_ns=1_080_000_000)
        chip.press(17, t_ns=7_500_000_123)  # A ends its turn
        chip.release(17, t_ns=7_600_000_000)
        taken = [daemon.inputs.get(timeout=5) for _ in range(4)]
        for edge in taken:
            daemon.inputs.put(edge)
        daemon.pump(9_000_000_000)  # the loop gets round to them a second and a half later
    finally:
        board.close()
    assert clock.used_ns("A", 9_000_000_000) == 6_500_000_123


def test_the_reader_blocks_with_no_timeout(chip, monkeypatch):
    timeouts = []
    real_poll = select.poll

    class Poll:
        def __init__(self):
            self.inner = real_poll()
            self.register, self.unregister = self.inner.register, self.inner.unregister

        def poll(self, *timeout):
            timeouts.append(timeout)
            return self.inner.poll(*timeout)

    monkeypatch.setattr(gpiod_pins.select, "poll", Poll)
    edges = queue.Queue()
    factory = GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B)
    board = ButtonBoard(PINS, lambda *edge: edges.put(edge), pin_factory=factory)
    chip.press(27, t_ns=5)
    assert edges.get(timeout=5) == ("STOP", True, 5)
    board.close()
    assert timeouts and all(timeout == () for timeout in timeouts)


def test_a_chip_that_goes_away_stops_its_edges_once_and_is_reported(chip, board, caplog):
    caplog.set_level(logging.ERROR)
    factory = board.pin_factory
    failed = queue.Queue()
    factory.on_failure = failed.put
    request = chip.request
    chip.unplug()
    assert isinstance(failed.get(timeout=5), OSError) and "No such device" in caplog.text
    assert request.reads == 1  # it stopped watching the dead descriptor: no spinning on it
    assert board.edges.empty()


def test_closing_releases_the_lines_and_stops_the_reader(chip):
    factory = GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B)
    board = ButtonBoard(PINS, lambda *edge: None, pin_factory=factory)
    assert chip.request is not None
    board.close()
    assert chip.request is None and not factory._reader.is_alive()


def test_auto_prefers_gpiod_where_the_kernel_has_a_gpio_chip():
    chosen, why = choose_backend("auto", environ={}, chips=["/dev/gpiochip0"], gpiod_version="2.5.0")
    assert chosen == "gpiod" and "/dev/gpiochip0" in why and "2.5.0" in why
    chosen, why = choose_backend("auto", environ={}, chips=[], gpiod_version="2.5.0")
    assert chosen is None and "lgpio" in why
    chosen, why = choose_backend("auto", environ={}, chips=["/dev/gpiochip0"], gpiod_version="1.6.3")
    assert chosen is None and "not 2.x" in why
    chosen, why = choose_backend("auto", environ={"GPIOZERO_PIN_FACTORY": "lgpio"}, chips=["/dev/gpiochip0"])
    assert chosen is None and "GPIOZERO_PIN_FACTORY=lgpio" in why
    assert choose_backend("lgpio", environ={})[0] == "lgpio"
