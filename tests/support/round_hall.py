"""The hall under round control: school clocks on a real broker, each booted at its own instant
before 14:00 with a wall clock of its own, the director's feed, and the page with its round control."""

import datetime
import threading
from dataclasses import replace

import pytest

from support.hall_helpers import hall_config, wait_for
from support.halls import Clocks, director, settle
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.device.timesync import virtual_wall
from tileclock.director.hall.round_control import RoundControl
from tileclock.director.pages.web import HallPage
from tileclock.sim.simulator import Simulator

#: 2025-11-25 14:00:00 UTC, in ms since 1970
AT_14 = 1_764_079_200_000
UTC = datetime.UTC
S = NS_PER_S


def control(feed, now_ms=AT_14 - 60_000):
    return RoundControl(feed, now_ns=lambda: now_ms * 1_000_000, zone=UTC)


class WallClocks(Clocks):
    """Simulated clocks on the broker, each booted at its own instant before 14:00: clock `cN`'s
    wall clock reads 14:00 when its monotonic clock has run N minutes. Each at a fresh game."""

    def start(self, clock):
        config = replace(
            Config(clock_id=clock, board=clock, rules="school"), hall=hall_config(self.broker, clock)
        )
        minutes = int(clock[1:])
        virtual = VirtualTime(0)
        wall = virtual_wall(AT_14 - minutes * 60_000, virtual)
        return Simulator(
            config, state_dir=str(self.tmp_path / clock), refresh_on_ticks=False, time=virtual, wall=wall
        )


@pytest.fixture
def hall(broker, tmp_path):
    clocks = WallClocks(broker, tmp_path)
    for sim in clocks.sims.values():
        sim.run_to(10 * S)
    feed = director(broker, tmp_path / "records")
    wait_for(lambda: (clocks.pump(), feed.step(0.01), len(feed.boards) == 3)[-1], what="every board heard")
    settle(feed, clocks, "the first records")
    stop = threading.Event()
    stepper = threading.Thread(target=feed.run, args=(stop.is_set,), daemon=True)
    stepper.start()
    server = HallPage(feed, port=0)
    server.rounds = control(feed, AT_14 - 30_000)  # this laptop's time: 13:59:30
    server.start()
    yield clocks, feed, server
    stop.set()
    stepper.join(5)
    server.close()
    feed.close()
    clocks.close()


def records(clocks, clock, ev):
    clocks.pump()
    return [r for r in clocks.sims[clock].journal.records() if r["ev"] == ev]
