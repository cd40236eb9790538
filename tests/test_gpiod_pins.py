"""The gpiod pin factory: kernel edge events with kernel timestamps, no polling, through gpiozero.

Off a Pi, against a fake chip at the `gpiod` API boundary (tests/support/fake_gpiod.py says why).
"""

import errno
import logging
import os
import platform
import queue
import select
import threading
import time
import types

import pytest

gpiod = pytest.importorskip("gpiod")  # the bindings are Linux-only

from support.fake_gpiod import FakeChip
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
    board = ButtonBoard(PINS, daemon.inbox.post_edge, pin_factory=factory)
    try:
        daemon.boot(0)
        chip.press(22, t_ns=1_000_000_000)  # B starts A
        chip.release(22, t_ns=1_080_000_000)
        chip.press(17, t_ns=7_500_000_123)  # A ends its turn
        chip.release(17, t_ns=7_600_000_000)
        taken = [daemon.reactor.inputs.get(timeout=5) for _ in range(4)]
        for edge in taken:
            daemon.reactor.inputs.put(edge)
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


# -- letting go of the lines and taking them again (issue 24: EBUSY on a real kernel) -----------

#: The poll syscalls by machine (x86_64: poll, ppoll; aarch64 has only ppoll), as /proc/.../syscall numbers them.
POLL_SYSCALLS = {"x86_64": {"7", "271"}, "aarch64": {"73"}}.get(platform.machine(), set())


def blocked_in_poll(thread):
    """Whether `thread` sleeps in a poll syscall, as /proc shows it."""
    base = f"/proc/self/task/{thread.native_id}"
    with open(f"{base}/stat") as stat, open(f"{base}/syscall") as syscall:
        state = stat.read().rsplit(")", 1)[1].split()[0]
        return state == "S" and syscall.read().split()[0] in POLL_SYSCALLS


def until_the_reader_waits(factory):
    """Return once the edge reader is blocked in poll() on its descriptors (within 5 s)."""
    deadline = time.monotonic() + 5
    while not blocked_in_poll(factory._reader):
        assert time.monotonic() < deadline, "the edge reader never went back to poll()"
        os.sched_yield()


@pytest.mark.skipif(not POLL_SYSCALLS, reason="poll syscall numbers known for x86_64 and aarch64 only")
def test_the_lines_are_let_go_and_taken_again_50_times_without_ebusy(chip):
    """A restart, a reload, the service stopped and started: each lets go of the lines while the
    reader sits in poll() on the request's descriptor. The kernel keeps a request whose file a
    poll holds, and refuses its lines to the next request (EBUSY): the reader must be out first."""
    for round_ in range(50):
        edges = queue.Queue()
        factory = GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B)
        board = ButtonBoard(PINS, lambda *edge, edges=edges: edges.put(edge), pin_factory=factory)
        until_the_reader_waits(factory)
        board.buttons["STOP"].close()  # one line let go: A and B requested again under the reader
        until_the_reader_waits(factory)
        chip.press(17, t_ns=1_000 + round_)
        assert edges.get(timeout=5) == ("A", True, 1_000 + round_)
        board.close()
        assert [chip.holder(offset) for offset in PINS.values()] == [None, None, None]
        assert not factory._reader.is_alive()
    assert chip.refused == []
    assert len(chip.requests) == 50 * 5  # a round: 1, 2 and 3 lines, then A and B, then B alone


def test_the_fake_chip_refuses_what_the_kernel_refuses(chip):
    """The fake is as strict as gpio-sim: a held line is EBUSY (errno 16) whoever holds it, a request
    closed under a blocked poll() is held until that poll returns, a released descriptor gets
    nothing more, and a released request refuses every call."""
    both = gpiod.LineSettings(edge_detection=gpiod.line.Edge.BOTH)
    other = chip.hold([27], consumer="gpiomon")
    with pytest.raises(OSError) as refused:
        chip.request_lines(chip.path, {17: both, 27: both}, consumer="tileclock")
    assert refused.value.errno == errno.EBUSY == 16
    with chip.open(chip.path) as handle:
        info = handle.get_line_info(27)
        assert info.used and info.consumer == "gpiomon" and not handle.get_line_info(17).used
    other.release()
    request = chip.request_lines(chip.path, {17: both, 27: both}, consumer="tileclock")

    woke = queue.Queue()
    fd = request.fd

    def reader():
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        woke.put(poller.poll())

    thread = threading.Thread(target=reader)
    thread.start()
    until_the_reader_waits(types.SimpleNamespace(_reader=thread))
    request.release()
    request.release()  # a second release does nothing, as gpiod's own
    with pytest.raises(OSError) as refused:
        chip.request_lines(chip.path, {17: both}, consumer="tileclock")
    assert refused.value.errno == errno.EBUSY  # the poll still holds the file
    chip.press(17, t_ns=5)  # the kernel still delivers to it: the poll returns, the file goes
    thread.join(timeout=5)
    assert woke.get_nowait() and chip.holder(17) is None
    for call in (lambda: request.fd, lambda: request.read_edge_events(), lambda: request.wait_edge_events(0)):
        with pytest.raises(gpiod.RequestReleasedError):
            call()
    again = chip.request_lines(chip.path, {17: both}, consumer="tileclock")
    chip.release(17, t_ns=6)
    assert again.wait_edge_events(0) and [event.timestamp_ns for event in again.read_edge_events()] == [6]
    assert not request.held


@pytest.mark.skipif(not POLL_SYSCALLS, reason="poll syscall numbers known for x86_64 and aarch64 only")
def test_the_edge_reader_is_named_in_proc_so_its_wake_ups_can_be_counted(chip, board):
    until_the_reader_waits(board.pin_factory)  # it names itself first thing, before its first poll()
    tid = board.pin_factory._reader.native_id
    with open(f"/proc/self/task/{tid}/comm") as comm:
        assert comm.read().strip() == "gpiod-edges"


def test_doctor_names_the_program_that_holds_a_buttons_line(chip, tmp_path):
    """Another program holds STOP's line: the clock cannot start, and doctor says which program,
    from the consumer label of its request and the processes with a line request open."""
    from tileclock.device.config_schema import Config
    from tileclock.device.doctor import FAIL, WARN, check_buttons
    from tileclock.device.hardware.gpio_holders import line_holders

    proc = tmp_path / "proc"
    for pid, name, link in ((4242, "gpiomon", "anon_inode:gpio-line"), (77, "bash", "/dev/pts/0")):
        (proc / str(pid) / "fd").mkdir(parents=True)
        (proc / str(pid) / "fd" / "3").symlink_to(link)
        (proc / str(pid) / "comm").write_text(name + "\n")
    config = Config(pin_backend="gpiod")

    def doctor():
        return check_buttons(
            config,
            environ={},
            open_pins=lambda: GpiodFactory(chip=chip.path, gpiod=chip.module, revision=PI_3B),
            holders=lambda offsets: line_holders(offsets, chip.path, chip.module, proc=str(proc)),
        )

    other = chip.hold([27], consumer="gpiomon")
    [found] = doctor()
    assert found.status == FAIL
    assert found.seen == "GPIO27 (STOP) is held by 'gpiomon' (pid 4242 gpiomon)"
    assert chip.request is other  # doctor let go of what it had taken
    other.release()
    service = chip.hold(PINS.values(), consumer="tileclock")
    [found] = doctor()
    assert found.status == WARN and "the service has them" in found.seen, found
    service.release()
    assert [check.status for check in doctor()] == ["ok"] * 4, [
        (o, chip.holder(o) and chip.holder(o).consumer) for o in PINS.values()
    ]
