"""The hall through a bad network (bench/fault_proxy.py between the clocks and a real mosquitto):
stalls and delay, an outage, a one-way fault; every record once, a command applied at most once.

The short version of `tileclock hall-bench --chaos` (docs/hall.md, "On bad Wi-Fi"): a few clocks in
virtual time, the director's real HallFeed, the faults in user space (this kernel has no netem)."""

import time
from types import SimpleNamespace

import pytest

from test_hall import Clocks, director, settle
from tileclock.bench.fault_proxy import FaultProxy
from tileclock.bench.hall import count_on_disk
from tileclock.director.records.history import iter_records


@pytest.fixture
def proxy(broker):
    """A fault proxy in front of `broker`: the clocks' access point."""
    relay = FaultProxy(("127.0.0.1", broker.port), seed=39).start()
    yield relay
    relay.close()


def every_record_once(feed, clocks):
    counts = count_on_disk(feed.store.outdir)
    assert set(counts) == clocks.journaled()
    assert max(counts.values()) == 1, [key for key, n in counts.items() if n > 1]


def adjusts(clocks, clock):
    return [r for r in iter_records(clocks.journal(clock)) if r["ev"] == "adjust"]


def test_stalls_and_delay_lose_nothing_and_double_nothing(broker, proxy, tmp_path):
    clocks = Clocks(SimpleNamespace(port=proxy.port), tmp_path)
    feed = director(broker, tmp_path / "records")
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records")
        # loss as TCP sees it: pauses, then bursts; with delay and jitter both ways
        proxy.set(delay_s=0.05, jitter_s=0.1, stall_every_s=0.7, stall_for_s=0.3)
        for _ in range(3):
            clocks.play(3)
            clocks.pump()
        feed.command("adjust A -60000", "c1")  # a director's command into the fault
        settle(feed, clocks, "the records through the stalls")
        every_record_once(feed, clocks)
        proxy.clear()
        settle(feed, clocks, "the adjust's record")
        assert len(adjusts(clocks, "c1")) <= 1
    finally:
        feed.close()
        clocks.close()


def test_an_outage_then_back_loses_nothing_and_a_command_into_it_acts_at_most_once(broker, proxy, tmp_path):
    clocks = Clocks(SimpleNamespace(port=proxy.port), tmp_path)
    feed = director(broker, tmp_path / "records")
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records")
        # one way first: the clocks' records go out, the broker's acks and commands do not arrive
        proxy.set(down={"hold": True})
        clocks.play(2)
        clocks.pump()
        feed.command("adjust A -60000", "c2")
        time.sleep(0.2)
        # then the access point reboots: every connection cut, none taken, then all back at once
        proxy.cut()
        proxy.clear()
        clocks.play(3)
        clocks.pump()
        feed.command("adjust B -30000", "c3")  # into the outage: at QoS 0 it is lost, never late
        cut_at = time.monotonic()
        time.sleep(0.3)
        proxy.restore()
        settle(feed, clocks, "the records made through the outage")
        every_record_once(feed, clocks)
        assert all(len(adjusts(clocks, c)) <= 1 for c in clocks.ids)
        assert len(adjusts(clocks, "c3")) == 0
        assert proxy.attempts_peak(since=cut_at) <= len(clocks.ids)
    finally:
        feed.close()
        clocks.close()
