"""The loop's parts meet it at small interfaces (device/parts.py): links and panels are `Protocol`s the
real ones satisfy, and anything that may need the loop awake registers a wake source with it."""

import pytest

from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config import Config
from tileclock.device.hardware.hall_link import HallLink
from tileclock.device.hardware.serial_link import SerialLink
from tileclock.device.journal import Journal
from tileclock.device.parts import Link, Screen
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
    assert isinstance(sim.daemon.link, Link)


def test_the_hall_uplink_offers_every_method_of_a_link():
    wanted = {"pump", "read_lines", "resend", "take_missing", "answer", "close", "pending", "streaming"}
    assert wanted <= set(dir(HallLink)) and HallLink.part == "hall"


def test_a_registered_wake_source_wakes_the_loop_and_can_move_or_go_away(sim):
    sim.catch_up(NS_PER_S)
    before = sim.daemon.next_deadline()
    when = [sim.time() + 1000]
    sim.daemon.register_wake(lambda: when[0])
    assert sim.daemon.next_deadline() == sim.time() + 1000 and (before is None or before > when[0])
    when[0] = None  # nothing to wake for any more: the loop's own deadline again
    assert sim.daemon.next_deadline() == before
