"""The buttons and panels go through gpiozero's and luma's public interfaces only (issue 26, point 6).

gpiozero's own `MockFactory` stands in for the Pi's pins, luma's drivers talk to a serial interface
that counts bytes: an upgrade of either library that keeps its public API keeps the clock working.
"""

import ast
import errno
import inspect

import gpiozero
import pytest
from gpiozero.pins.mock import MockFactory
from luma.core.error import DeviceNotFoundError

from tileclock.device.hardware import buttons, oled, virtual
from tileclock.device.hardware.buttons import ButtonBoard, StampedButton
from tileclock.device.hardware.oled import PagedSSD1306, RecordingBus, pi_i2c
from tileclock.device.hardware.virtual import VirtualFactory, VirtualTime

PINS = {"A": 17, "STOP": 27, "B": 22}


def test_on_gpiozero_s_own_mock_factory_a_press_and_release_reach_the_clock_with_their_times():
    factory = MockFactory()
    edges = []
    board = ButtonBoard(PINS, lambda *edge: edges.append(edge), pin_factory=factory)
    try:
        pin = factory.pin(17)
        pin.drive_low()
        assert board.buttons["A"].is_active and not board.buttons["B"].is_active
        pin.drive_high()
        assert not board.buttons["A"].is_active
    finally:
        board.close()
    assert [(name, down) for name, down, _ in edges] == [("A", True), ("A", False)]
    # gpiozero's mock pins tick in float seconds of time.monotonic(): the clock gets integer ns
    [(_, _, down_ns), (_, _, up_ns)] = edges
    assert isinstance(down_ns, int) and 0 <= up_ns - down_ns < 10**9


def test_a_closed_board_lets_go_of_its_pins_and_a_pin_taken_twice_is_refused():
    factory = MockFactory()
    board = ButtonBoard(PINS, lambda *edge: None, pin_factory=factory)
    with pytest.raises(gpiozero.GPIOPinInUse):
        StampedButton(27, when_edge=print, pin_factory=factory)
    board.close()
    again = ButtonBoard(PINS, lambda *edge: None, pin_factory=factory)  # would raise if still reserved
    again.close()


def test_a_simulated_press_is_stamped_with_the_virtual_instant_it_happens_at():
    time = VirtualTime(0)
    factory = VirtualFactory(time)
    edges = []
    board = ButtonBoard(PINS, lambda *edge: edges.append(edge), pin_factory=factory)
    time.set(1_234_567_891)
    factory.drive(board.buttons["B"].pin, True)
    time.set(1_300_000_000)
    factory.drive(board.buttons["B"].pin, False)
    board.close()
    assert edges == [("B", True, 1_234_567_891), ("B", False, 1_300_000_000)]


def _private_names(classes):
    return {name for cls in classes for klass in cls.__mro__ for name in vars(klass) if name.startswith("_")}


@pytest.mark.parametrize("module", [buttons, virtual])
def test_no_class_of_ours_overrides_a_private_gpiozero_hook(module):
    """A subclass of a gpiozero class defines none of gpiozero's underscored names (`_pin_changed`,
    `_change_state`, ...) but the constructor: those are what an upgrade may change silently."""
    for _, cls in inspect.getmembers(module, inspect.isclass):
        bases = [base for base in cls.__mro__[1:] if base.__module__.startswith("gpiozero")]
        if cls.__module__ != module.__name__ or not bases:
            continue
        hooks = _private_names(bases) - {"__init__", "__doc__", "__module__", "__qualname__", "__dict__"}
        assert not (set(vars(cls)) & hooks), (cls, set(vars(cls)) & hooks)


@pytest.mark.parametrize("module", [buttons, virtual, oled])
def test_no_private_attribute_of_another_object_is_touched(module):
    """`x._name` only on `self` (or `cls`): never on a library's object."""
    touched = [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(ast.parse(inspect.getsource(module)))
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    ]
    assert touched == []


def test_the_i2c_interface_sends_a_frame_as_luma_does_on_a_pi():
    """Commands as SMBus block writes with control byte 0x00, a frame's data as one combined
    transfer with control byte 0x40 (luma's own i2c, on a bus it opened itself)."""
    bus = RecordingBus()
    device = PagedSSD1306(pi_i2c(bus, 0x3C))
    assert bus.writes and all(address == 0x3C for address, _, _ in bus.writes)
    assert {control for _, control, _ in bus.writes} == {0x00, 0x40}
    bus.writes.clear()
    before = bus.bytes_on_wire()
    interface = pi_i2c(bus, 0x3D)
    interface.data(list(range(256)) * 20)  # 5120 bytes: two transfers, 4096 and 1024
    assert [(address, control, len(payload)) for address, control, payload in bus.writes] == [
        (0x3D, 0x40, 4096),
        (0x3D, 0x40, 1024),
    ]
    assert bus.bytes_on_wire() - before == 5120 + 2 * 2  # and an address and a control byte each
    device.cleanup()


def test_a_panel_that_does_not_answer_is_luma_s_device_not_found():
    bus = RecordingBus()
    bus.fail = OSError(errno.EREMOTEIO, "Remote I/O error")
    with pytest.raises(DeviceNotFoundError, match="0x3C"):
        pi_i2c(bus, 0x3C).command(0xAE)


def test_a_simulated_pin_changed_behind_the_factory_s_back_is_refused_not_taken_late():
    """A real backend's every edge is covered by `flush_edges`; a virtual pin driven directly would
    be stamped and posted outside the factory's edge lock, where the loop can miss it and take it a
    wake late. The fake is as strict: only `drive` may change a pin, and nothing reaches the clock."""
    time = VirtualTime(0)
    factory = VirtualFactory(time)
    edges = []
    board = ButtonBoard(PINS, lambda *edge: edges.append(edge), pin_factory=factory)
    try:
        time.set(5_000_000)
        with pytest.raises(RuntimeError, match="outside VirtualFactory.drive"):
            board.buttons["A"].pin.drive_low()
        assert edges == []
        factory.drive(board.buttons["A"].pin, False)  # back up through the factory: a real edge
    finally:
        board.close()
    assert edges == [("A", False, 5_000_000)]
