"""The loop's parts meet it at small interfaces (device/parts.py): links and panels are `Protocol`s the
real ones satisfy, and anything that may need the loop awake registers a wake source with it."""

import os
import queue
import select
import signal
import threading
from types import SimpleNamespace

import pytest

from conftest import tap
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config, HallConfig
from tileclock.device.journal import Journal
from tileclock.device.links.hall import HallLink
from tileclock.device.links.hall_grace import DOWN_GRACE_S, GRACE_MARGIN_S
from tileclock.device.links.resends import STREAM_NS
from tileclock.device.links.serial import SerialLink
from tileclock.device.loop import Daemon
from tileclock.device.parts import EdgeSource, Link, Readable, Screen
from tileclock.sim.simulator import Simulator


@pytest.fixture
def sim():
    sim = Simulator(Config())
    yield sim
    sim.close()


def test_the_serial_link_and_the_panels_are_the_parts_the_loop_expects(sim):
    link = SerialLink(Journal(), "loop://")
    try:
        assert isinstance(link, Link)
    finally:
        link.close()
    assert sim.daemon.panels and all(isinstance(output, Screen) for output in sim.daemon.panels)
    assert all(isinstance(link, Link) for link in sim.daemon.links) and sim.daemon.links[0] is sim.link


def test_the_hall_uplink_offers_every_method_of_a_link():
    wanted = {"pump", "read_lines", "resend", "take_missing", "answer", "close", "pending", "next_wake_ns"}
    assert wanted <= set(dir(HallLink)) and HallLink.part == "hall"


def test_a_registered_wake_source_wakes_the_loop_and_can_move_or_go_away(sim):
    sim.catch_up(NS_PER_S)
    before = sim.daemon.reactor.next_deadline()
    when = [sim.time() + 1000]
    sim.daemon.reactor.register_wake(lambda: when[0])
    assert sim.daemon.reactor.next_deadline() == sim.time() + 1000 and (before is None or before > when[0])
    when[0] = None  # nothing to wake for any more: the loop's own deadline again
    assert sim.daemon.reactor.next_deadline() == before


class WakingLink:
    """A link that sends nothing and only asks for a wake, a while after the loop's last."""

    part = "waking"
    seal = None
    failing = None
    pending = False

    def __init__(self):
        self.asked = []

    def next_wake_ns(self, woke_ns):
        self.asked.append(woke_ns)
        return woke_ns + 7

    def pump(self):
        raise AssertionError("nothing pending: never pumped")

    def read_lines(self):
        return []

    def resend(self, first, last):
        pass

    def take_missing(self):
        return None

    def answer(self, line):
        pass

    def close(self):
        pass


def test_the_loop_asks_each_of_its_links_when_to_wake_and_looks_no_further():
    link = WakingLink()
    assert isinstance(link, Link)
    clock = GameClock(PROFILES["naspa"])
    daemon = Daemon(clock, links=[link])
    daemon.boot(100)
    deadlines = [when for when in (clock.next_deadline(), 107) if when is not None]
    assert daemon.reactor.next_deadline() == min(deadlines) and link.asked[-1] == 100
    daemon.pump(200)
    assert daemon.reactor.next_deadline() <= 207 and link.asked[-1] == 200


def test_the_serial_link_asks_for_a_wake_soon_while_a_resend_streams_and_later_while_lines_wait(sim):
    tap(sim, "B", 1)
    now = sim.time()
    assert not sim.link.pending and sim.link.next_wake_ns(now) is None
    sim.link.answer('{"ev":"status"}')  # waits for the port, with no resend
    assert sim.link.next_wake_ns(now) == now + SerialLink.RETRY_NS
    sim.link.resend(0, 2)
    assert sim.link.next_wake_ns(now) == now + STREAM_NS


def test_the_hall_link_asks_for_its_grace_wake_as_any_part_does_with_no_timer_of_its_own():
    now, woken = [1000], []
    link = HallLink(
        Journal(),
        "c1",
        HallConfig(broker="127.0.0.1", port=9),
        wake=lambda: woken.append(now[0]),
        now_ns=lambda: now[0],
    )
    grace = int((DOWN_GRACE_S + GRACE_MARGIN_S) * NS_PER_S)
    try:
        link.start()  # paho's thread tries to connect in the background
        assert not any(isinstance(thread, threading.Timer) for thread in threading.enumerate())
        assert link.next_wake_ns(1000) == 1000 + grace  # "not connected yet": a fault once it lasts
        assert link.next_wake_ns(1000 + grace) is None  # the loop has woken since, and asked `failing`
        # paho's thread says the connection came, then went (as it would, on its own thread)
        link._on_connect(link.client, None, None, SimpleNamespace(is_failure=False), None)
        now[0] = 50_000
        link._on_disconnect(link.client, None, None, "lost", None)
        assert woken[-1] == 50_000  # the loop wakes now, to take the new deadline
        now[0] = 60_000
        link._on_disconnect(link.client, None, None, "lost", None)  # still down: the grace runs on
        assert link.next_wake_ns(55_000) == 50_000 + grace
        link._on_connect(link.client, None, None, SimpleNamespace(is_failure=False), None)
        assert link.next_wake_ns(61_000) is None  # back within the grace: no fault to show
    finally:
        link.close(timeout_s=0)


def test_the_buttons_and_the_serial_port_are_the_edge_source_and_the_descriptor_the_loop_expects(sim):
    assert isinstance(sim.board, EdgeSource) and sim.daemon.reactor.flush_edges == sim.board.flush_edges
    assert isinstance(sim.link, Readable) and sim.link.seal is None  # the cable takes unsealed commands


def test_data_on_a_registered_descriptor_wakes_the_running_loop():
    daemon = Daemon(GameClock(PROFILES["naspa"]))
    read_end, write_end = os.pipe()

    class Port:
        def fileno(self):
            return read_end

    daemon.reactor.register_fd(Port())
    read, stop = queue.SimpleQueue(), threading.Event()

    def on_wake():  # the loop's wake reads what came, as the serial link's pump would
        if select.select([read_end], [], [], 0)[0]:
            read.put(os.read(read_end, 64))

    loop = threading.Thread(
        target=daemon.run_forever, kwargs={"should_stop": stop.is_set, "on_wake": on_wake}
    )
    loop.start()
    try:
        os.write(write_end, b"status\n")  # the loop sleeps with no deadline: only the descriptor wakes it
        assert read.get(timeout=5) == b"status\n"
    finally:
        stop.set()
        daemon.inbox.wake(0)
        loop.join(timeout=5)
        os.close(read_end)
        os.close(write_end)
    assert not loop.is_alive()


def test_a_registered_signal_does_its_action_and_wakes_the_loop():
    daemon = Daemon(GameClock(PROFILES["naspa"]))
    done = []
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        daemon.reactor.register_signal(signal.SIGUSR1, lambda: done.append(True))
        os.kill(os.getpid(), signal.SIGUSR1)
        assert done == [True]
        _, button, _ = daemon.reactor.inputs.get(timeout=5)
        assert button is None  # a bare wake-up: the loop goes round and sees what the action did
    finally:
        signal.signal(signal.SIGUSR1, previous)
