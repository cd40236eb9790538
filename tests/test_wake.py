"""One wake of the loop: the panels first, then one fsync for the wake's records, then the links.

A screen is no promise, so the panels never wait for the card; the record line
and the hall still carry only records that have been through the journal's write.
"""

import os
import queue
import resource
import select
from dataclasses import replace

import pytest

from tileclock.clock.timecode import NS_PER_MS, NS_PER_S
from tileclock.device import wakers
from tileclock.device.config_schema import Config
from tileclock.device.journal import Journal
from tileclock.device.wakers import FdWaker
from tileclock.director.records.history import iter_records
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe

S = NS_PER_S


@pytest.fixture
def sim(tmp_path):
    sim = Simulator(Config(), journal=Journal.open(str(tmp_path / "journal")))
    yield sim
    sim.close()


def watch_fsyncs(sim, monkeypatch):
    """At every fsync of the journal: the bytes the panels' buses had carried, and the next seq the
    serial link would send."""
    seen = []
    fdatasync = os.fdatasync  # the journal syncs a segment's data (its size with it) this way

    def noting(fd):
        seen.append((sum(bus.bytes_on_wire() for bus in sim.buses.values()), sim.link.next_seq))
        fdatasync(fd)

    monkeypatch.setattr("tileclock.device.journal.os.fdatasync", noting)
    return seen


def test_a_press_reaches_the_panels_before_the_card_and_the_line_after_it(sim, monkeypatch):
    sim.set_button("B", True, 1 * S)
    sim.set_button("B", False, 1 * S + 100 * NS_PER_MS)
    sim.run_to(5 * S)
    sim.serial_lines()
    seen = watch_fsyncs(sim, monkeypatch)
    before = sum(bus.bytes_on_wire() for bus in sim.buses.values())
    written = len(sim.journal.lines)
    sim.set_button("A", True, int(5.5 * S))  # A ends its turn: a switch, taken once the contact
    sim.run_to(int(5.51 * S))  # has stayed closed 5 ms (a shorter one is a glitch)
    switch = unframe(sim.journal.lines[written])
    assert switch["ev"] == "switch"
    assert len(seen) == 1  # one fsync for the wake
    panels_at_fsync, link_next_at_fsync = seen[0]
    assert panels_at_fsync > before  # the panels had the switch when the card was asked for it
    assert link_next_at_fsync <= switch["seq"]  # and the line had not sent it
    assert switch["seq"] in [unframe(line)["seq"] for line in sim.serial_lines()]  # it has it now


def test_a_wake_with_several_records_writes_them_with_one_fsync(tmp_path, monkeypatch):
    sim = Simulator(replace(Config(), times_s={"A": 5}), journal=Journal.open(str(tmp_path / "journal")))
    sim.set_button("B", True, 1 * S)
    sim.set_button("B", False, 1 * S + 100 * NS_PER_MS)
    seen = watch_fsyncs(sim, monkeypatch)
    written = len(sim.journal.lines)
    sim.run_to(9 * S)  # A shows -0:01 at 7 s: overtime and its first penalty, at one instant
    made = [unframe(line)["ev"] for line in sim.journal.lines[written:]]
    sim.close()
    assert made == ["overtime", "penalty"] and len(seen) == 1


def test_the_line_never_carries_a_record_the_journal_has_not_written(sim, monkeypatch):
    sent = []
    port_write = sim.link.port.write

    def sending(data):
        on_disk = [record["seq"] for record in iter_records(sim.journal.directory)]
        for line in bytes(data).decode("ascii").splitlines():
            assert unframe(line)["seq"] in on_disk
            sent.append(line)
        return port_write(data)

    monkeypatch.setattr(sim.link.port, "write", sending)
    for t in range(1, 40, 3):
        sim.set_button("A" if t % 2 else "B", True, t * S)
        sim.set_button("A" if t % 2 else "B", False, t * S + 100 * NS_PER_MS)
    sim.run_to(45 * S)
    assert sent == sim.journal.lines[-len(sent) :] and len(sent) > 10


class Port:
    """A serial port stand-in over a real pipe: the waker selects on `fileno()`."""

    def __init__(self):
        self.read_end, self.write_end = os.pipe()

    def fileno(self):
        return self.read_end

    def reopen(self):
        os.close(self.read_end)
        os.close(self.write_end)
        self.read_end, self.write_end = os.pipe()


@pytest.fixture
def waker(monkeypatch):
    """An FdWaker on a pipe 'port'; `waker.woken` gets an item each time it wakes the loop, and
    `waker.timeouts` every timeout it ever passed to poll."""
    timeouts = []
    real_poll = select.poll

    class Recording:
        def __init__(self):
            self.poller = real_poll()
            self.register = self.poller.register

        def poll(self, *args):
            timeouts.append(args)
            return self.poller.poll(*args)

    monkeypatch.setattr(wakers.select, "poll", Recording)
    port = Port()
    woken = queue.Queue()
    waker = FdWaker(port, woken.put)
    waker.port, waker.woken, waker.timeouts = port, woken, timeouts
    yield waker
    waker.stop()


def test_the_serial_waker_wakes_the_loop_once_per_arrival_and_never_by_timeout(waker):
    os.write(waker.port.write_end, b"status\n")
    waker.woken.get(timeout=5)
    # the data is still unread: the waker leaves the port alone until the loop says it has read
    os.read(waker.port.read_end, 64)
    waker.loop_woke()
    os.write(waker.port.write_end, b"status\n")
    waker.woken.get(timeout=5)
    assert waker.woken.empty()
    assert waker.timeouts and all(timeout in ((), (None,)) for timeout in waker.timeouts)  # no timeout


def test_the_serial_waker_watches_a_port_reopened_before_it_found_the_old_one_closed(monkeypatch):
    """The loop reopened the port and said so (`loop_woke`) while the waker still waited on the old
    descriptor, and only then did its wait find that one closed: it must watch the new one, not
    wait for a word the loop already gave (the race that made the test below fail one run in two)."""
    port = Port()
    closed = os.dup2(port.read_end, 900)  # a number the table has room for, so poll checks it ...
    os.close(closed)  # ... and finds it closed; new descriptors take lower numbers
    numbers = iter([closed])  # its first look finds the old, closed descriptor
    monkeypatch.setattr(port, "fileno", lambda: next(numbers, port.read_end))
    woken = queue.Queue()
    waker = FdWaker(port, woken.put)
    try:
        os.write(port.write_end, b"status\n")
        woken.get(timeout=5)
    finally:
        waker.stop()


def test_the_serial_waker_wakes_the_loop_for_a_port_numbered_past_1023(monkeypatch):
    """A service with many files open (or a raised RLIMIT_NOFILE) gets descriptors of 1024 and more,
    which select() cannot take: the waker must still wake the loop when the port has data."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2048
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"the hard limit on open files ({hard}) is under {want}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    port = Port()
    high = os.dup2(port.read_end, 1500)
    os.close(port.read_end)
    port.read_end = high
    woken = queue.Queue()
    waker = FdWaker(port, woken.put)
    try:
        os.write(port.write_end, b"status\n")
        woken.get(timeout=5)  # queue.Empty here: the port's data never woke the loop
    finally:
        waker.stop()
        os.close(port.read_end)
        os.close(port.write_end)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_serial_waker_follows_a_reopened_port(waker):
    waker.port.reopen()
    waker.loop_woke()  # the loop reopened the port: a new descriptor
    os.write(waker.port.write_end, b"status\n")
    waker.woken.get(timeout=5)
