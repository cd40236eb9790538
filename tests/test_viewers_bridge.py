"""The spectators' view when the bridge between the hall's broker and the spectators' broker dies
(issue 39, point 2f): the bridge through a fault proxy of its own (bench/fault_proxy.py), cut and
restored. The spectators' broker says its bridge is down (`tileclock/viewers/bridge` `0`: the pages
say STALE, tests/test_viewers_pages.py) and, once the link is back, up again, and every board's
newest state reaches the spectator, the states made meanwhile included; the clocks and the hall
never notice. How long that takes is printed (docs/hall.md, "On bad Wi-Fi": the figures)."""

import time

import pytest

from conftest import BROKER_USERS, started
from support.hall_helpers import Spectator, wait_for
from support.halls import Clocks
from tileclock.bench.fault_proxy import FaultProxy
from tileclock.director.hall.viewers_broker import ViewersBroker


@pytest.fixture
def bridge(broker, tmp_path):
    """The link between the two brokers: a fault proxy in front of `broker`, the spectators' broker
    bridged through it; (proxy, spectators' broker)."""
    proxy = FaultProxy(("127.0.0.1", broker.port), seed=39).start()
    viewers = started(lambda: ViewersBroker(tmp_path / "viewers", proxy.port, BROKER_USERS["viewers"]))
    yield proxy, viewers
    viewers.stop()
    proxy.close()


def newest(clocks):
    """Each clock's newest record's seq (the public state it publishes names it)."""
    clocks.pump()
    return {clock: sim.journal.settled_seq - 1 for clock, sim in clocks.sims.items()}


def seen(spectator):
    """The seq of the newest public state the spectator has of each clock."""
    return {clock: states[-1]["seq"] for clock, states in spectator.public().items()}


def caught_up(spectator, clocks):
    return spectator.bridged()[-1:] == [b"1"] and seen(spectator) == newest(clocks)


def stale_then_back(proxy, spectator, clocks, fault, end, retried=False):
    """`fault()` on the bridge's link; s until the spectator heard the bridge down, then, with the
    clocks playing on meanwhile (and, `retried`, once the bridge has tried again into the fault),
    `end()` and s until it had every board's newest state."""
    wait_for(lambda: caught_up(spectator, clocks), what="every board's state through the bridge")
    downs = spectator.bridged().count(b"0")
    began = time.monotonic()
    fault()
    wait_for(lambda: spectator.bridged().count(b"0") > downs, timeout_s=60, what="the bridge said down")
    stale_s = time.monotonic() - began
    clocks.play(3)  # the games go on: new states on the hall's broker, none through the bridge
    before = newest(clocks)
    tries = len(proxy.accepts)
    if retried:
        wait_for(lambda: len(proxy.accepts) > tries, timeout_s=60, what="the bridge trying again")
    assert all(seen(spectator)[c] < seq for c, seq in before.items())  # frozen: the page says STALE
    ended = time.monotonic()
    end()
    wait_for(lambda: caught_up(spectator, clocks), timeout_s=60, what="the spectator caught up")
    return stale_s, time.monotonic() - ended


def test_the_spectators_catch_up_after_the_bridge_is_cut_and_restored(broker, bridge, tmp_path):
    proxy, viewers = bridge
    spectator = Spectator(viewers, "viewer-1")
    clocks = Clocks(broker, tmp_path)
    try:
        clocks.play(2)
        # the link closed (the proxy's cut: its connection ends, new ones are refused), then back
        stale_s, back_s = stale_then_back(proxy, spectator, clocks, proxy.cut, proxy.restore)
        assert seen(spectator) == newest(clocks)
        assert all(sim.uplink._connected for sim in clocks.sims.values())  # the clocks never noticed
        print(
            f"bridge cut: said down after {stale_s:.1f} s, every board fresh {back_s:.1f} s after it was back"
        )
    finally:
        spectator.close()
        clocks.close()


@pytest.mark.slow  # about 20 s of wall time, the bridge's own keep-alive finding out
@pytest.mark.timeout(120)
def test_the_spectators_catch_up_after_the_bridges_link_just_dies(broker, bridge, tmp_path):
    proxy, viewers = bridge
    spectator = Spectator(viewers, "viewer-1")
    clocks = Clocks(broker, tmp_path)
    try:
        clocks.play(2)
        # the link stops passing bytes, nothing closed: the bridge's keep-alive (10 s) finds out
        dead = lambda: proxy.set(hold=True)  # noqa: E731  (one line, named for what it does)
        stale_s, back_s = stale_then_back(proxy, spectator, clocks, dead, proxy.clear, retried=True)
        # (back at once: the bridge's retry was held in the proxy, not lost as a dead link loses
        # its SYN; on a real link the bridge tries again within restart_timeout's 10 s)
        assert seen(spectator) == newest(clocks)
        print(f"bridge's link dead: said down after {stale_s:.1f} s, every board fresh {back_s:.1f} s after")
    finally:
        spectator.close()
        clocks.close()
