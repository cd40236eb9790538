"""The hall through a bad network (bench/fault_proxy.py between the clocks and a real mosquitto):
stalls, loss and delay, an outage, a one-way fault; every record once, a command applied at most once.

The short version of `tileclock hall-bench --chaos` (docs/hall.md, "On bad Wi-Fi"): a few clocks in
virtual time, the director's real HallFeed, the faults in user space (this kernel has no netem)."""

import random
import time
from types import SimpleNamespace

import pytest

from conftest import tap
from support.hall_helpers import wait_for
from support.halls import Clocks, adjusts, director, every_record_once, settle
from tileclock.bench.fault_proxy import FaultProxy
from tileclock.device.links import hall as hall_link
from tileclock.device.links import hall_client


@pytest.fixture
def proxy(broker):
    """A fault proxy in front of `broker`: the clocks' access point."""
    relay = FaultProxy(("127.0.0.1", broker.port), seed=39).start()
    yield relay
    relay.close()


def test_stalls_loss_and_delay_lose_nothing_and_double_nothing(broker, proxy, tmp_path):
    clocks = Clocks(SimpleNamespace(port=proxy.port, tls_port=None, ca_file=None), tmp_path)
    feed = director(broker, tmp_path / "records")
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records")
        # loss as TCP sees it: pauses, then bursts, and a quarter of what is sent lost at random,
        # each loss waiting for TCP's retransmissions; with delay and jitter both ways
        proxy.set(delay_s=0.05, jitter_s=0.1, stall_every_s=0.7, stall_for_s=0.3, loss=0.25, rto_s=0.1)
        for _ in range(3):
            clocks.play(3)
            clocks.pump()
        clocks.t["c1"] += 1
        tap(clocks.sims["c1"], "STOP", clocks.t["c1"])  # stopped: the director may adjust it
        feed.command("adjust A -60000", "c1")  # a director's command into the fault
        settle(feed, clocks, "the records through the stalls")

        def adjusted():
            clocks.pump()
            return len(adjusts(clocks, "c1")) >= 1

        wait_for(adjusted, timeout_s=10, what="c1 to take the adjust sent through the stalls")
        proxy.clear()
        settle(feed, clocks, "the adjust's record")
        every_record_once(feed, clocks)
        assert len(adjusts(clocks, "c1")) == 1  # delayed, stalled, taken once
    finally:
        feed.close()
        clocks.close()


def test_an_outage_then_back_loses_nothing_and_a_command_into_it_acts_at_most_once(broker, proxy, tmp_path):
    clocks = Clocks(SimpleNamespace(port=proxy.port, tls_port=None, ca_file=None), tmp_path)
    feed = director(broker, tmp_path / "records")
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records")
        # one way first: the clocks' records go out, the broker's acks and commands do not arrive
        proxy.set(down={"hold": True})
        clocks.play(2)
        clocks.pump()
        feed.command("adjust A -60000", "c2")
        wait_for(
            lambda: proxy.waiting("down") > 0, what="the broker's answers and the command held on their way"
        )
        # then the access point reboots: every connection cut, none taken, then all back at once
        proxy.cut()
        proxy.clear()
        clocks.play(3)
        clocks.pump()
        feed.command("adjust B -30000", "c3")  # into the outage: at QoS 0 it is lost, never late
        cut_at = time.monotonic()
        wait_for(
            lambda: not any(sim.uplink._connected for sim in clocks.sims.values()),
            what="every clock off the broker",
        )
        proxy.restore()
        settle(feed, clocks, "the records made through the outage")
        every_record_once(feed, clocks)
        assert all(len(adjusts(clocks, c)) <= 1 for c in clocks.ids)
        assert len(adjusts(clocks, "c3")) == 0
        assert proxy.attempts_peak(since=cut_at) <= len(clocks.ids)
    finally:
        feed.close()
        clocks.close()


def test_clocks_cut_at_once_do_not_all_come_back_at_the_same_moment():
    """paho's back-off doubles a fixed first wait without jitter: 200 clocks that lost an access
    point at one moment would all try again at 1 s, 3 s, 7 s... A first wait drawn per clock."""
    rng = random.Random(39)
    firsts = [hall_client.reconnect_delays(rng)["min_delay"] for _ in range(200)]
    assert min(firsts) >= hall_client.BACKOFF_MIN_S
    assert max(firsts) - min(firsts) > 0.8 * hall_client.BACKOFF_SPREAD_S
    # in any 1 s, at most a third of them: no storm at the first retry
    assert max(sum(1 for f in firsts if t <= f < t + 1) for t in firsts) < 200 / 2.5


def attempts(delays, until_s):
    """paho's reconnect attempts (s after the loss) with `reconnect_delay_set(**delays)`, up to `until_s`."""
    at, delay, times = 0.0, delays["min_delay"], []
    while at <= until_s:
        at += delay
        times.append(at)
        delay = min(delay * 2, delays["max_delay"])
    return times


def test_a_clock_tries_again_soon_after_its_access_point_is_back():
    """After a 20 s reboot (or a 5 minute cut), each clock tries within the cap plus its draw; with a
    30 s cap, a board was back on the page up to 21 s after the access point."""
    rng = random.Random(39)
    for outage_s in (20, 300):
        for _ in range(200):
            first_after = min(
                t for t in attempts(hall_client.reconnect_delays(rng), outage_s) if t >= outage_s
            )
            assert first_after - outage_s <= 13, (outage_s, first_after)


def test_each_clocks_paho_client_takes_its_own_back_off(broker, tmp_path):
    clocks = Clocks(broker, tmp_path, ids=("c1", "c2", "c3"))
    try:
        delays = {sim.uplink.client._reconnect_min_delay for sim in clocks.sims.values()}
        assert len(delays) == 3  # before: 1 s each, the same for every clock
    finally:
        clocks.close()


def held_by_paho(sim):
    """What a clock's uplink holds in memory for the broker: the messages in paho's hands (records,
    states) not yet acknowledged, and the packets paho has not written yet."""
    client = sim.uplink.client
    return len(sim.uplink._seq_of), len(client._out_messages), len(client._out_packet)


@pytest.mark.parametrize("minutes", [5, pytest.param(30, marks=pytest.mark.slow)])
def test_a_clocks_memory_stays_bounded_through_an_outage(broker, proxy, tmp_path, minutes):
    """Away from the broker, a clock hands paho nothing: what it makes waits in its journal, so an
    outage of any length (30 minutes under `make test-slow`) costs its memory nothing, and every
    record arrives once when it is back."""
    clocks = Clocks(SimpleNamespace(port=proxy.port, tls_port=None, ca_file=None), tmp_path, ids=("c1",))
    feed = director(broker, tmp_path / "records")
    sim = clocks.sims["c1"]
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records")
        proxy.cut()  # the access point gone: its connection closed, no new one taken
        wait_for(lambda: not sim.uplink._connected, what="the clock off the broker")
        before, away_from = held_by_paho(sim), len(clocks.journaled())
        for minute in range(minutes):  # its game goes on: a move every 15 s
            for move in range(4):
                clocks.t["c1"] += 15
                tap(sim, "AB"[(minute * 4 + move) % 2], clocks.t["c1"])
            clocks.pump()
            messages, in_hands, packets = held_by_paho(sim)
            assert (messages, in_hands) == before[:2] and packets <= before[2] + 1  # paho's CONNECT
        assert len(clocks.journaled()) - away_from >= 4 * minutes  # in its journal, not in memory
        proxy.restore()
        settle(feed, clocks, f"the records of the {minutes} minutes away", timeout_s=60)
        every_record_once(feed, clocks)
        assert held_by_paho(sim)[0] <= hall_link.WINDOW
    finally:
        feed.close()
        clocks.close()


def test_a_link_that_passes_nothing_holds_few_states_in_paho(broker, proxy, tmp_path):
    """The link still up as the clock sees it, nothing passing either way (a one-way fault both
    ways, before the keep-alive finds it out): the records wait in the window, and the states the
    clock would publish meanwhile must not pile up beside them, one or two a record."""
    clocks = Clocks(SimpleNamespace(port=proxy.port, tls_port=None, ca_file=None), tmp_path, ids=("c1",))
    feed = director(broker, tmp_path / "records")
    sim = clocks.sims["c1"]
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records")
        proxy.set(hold=True)
        for _ in range(20):  # 20 moves, each a record, the clock's loop woken after each
            clocks.play(1)
            clocks.pump()
        assert sim.uplink._connected  # paho has not noticed yet
        in_hands = list(sim.uplink._seq_of.values())
        records = [seq for seq in in_hands if seq is not None]
        assert len(records) == 20
        # one state and one public state in flight, the newest of each waiting behind them, and the
        # status: before, 42 (a state and a public state for each record)
        assert len(in_hands) - len(records) <= 4
        proxy.clear()  # the link passes again: the newest state, waiting, goes at the ack before it
        newest = sim.journal.settled_seq - 1

        def newest_state():  # no pump: the acknowledgement alone sends it, the clock's loop asleep
            feed.step(0.02)
            return feed.boards.board("c1").state.get("seq") == newest

        wait_for(newest_state, timeout_s=20, what="c1's newest state at the hall")
        settle(feed, clocks, "the records held on the link")
        every_record_once(feed, clocks)
    finally:
        proxy.clear()
        feed.close()
        clocks.close()
