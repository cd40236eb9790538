"""The hall through a group's own network namespace (bench/netns.py): clocks whose sockets live in
it reach a real mosquitto through a veth link and the fault proxy; delay and stalls, then the link
set down (an outage, an access point gone) and up again: every record on file once, a command sent
into the outage applied at most once, a round's start sent into it taken once on each board. And the namespaces themselves: private, removed however the
run ends, the leftovers of a dead run swept.

The short version of `tileclock hall-bench --chaos`'s namespaced cases (docs/hall.md, "On bad
Wi-Fi"). Root and iproute2 are needed: skipped with the reason elsewhere, failing in CI."""

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest

from conftest import BROKER_USERS, tap
from support.hall_helpers import wait_for
from support.halls import Clocks, adjusts, director, every_record_once, settle
from tileclock.bench import netns as netns_module
from tileclock.bench.fault_proxy import FaultProxy
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.config_schema import Config, HallConfig
from tileclock.director.hall import audit_read
from tileclock.director.hall.answers import answered
from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.round_control import RoundControl
from tileclock.director.pages.board_routes import act_as, board_of, round_step_as
from tileclock.sim.simulator import Simulator


def mine(pid):
    """The namespaces `ip netns list` shows for run `pid`."""
    return [name for name in netns_module.namespaces() if name.startswith(f"tcnet-{pid}-")]


@pytest.fixture
def netns():
    """One group's namespace and link for this test, removed after it (asserted)."""
    reason = netns_module.unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the namespaced hall checks: {reason}")
        pytest.skip(reason)
    with netns_module.Links(1) as links:
        yield links
    assert mine(os.getpid()) == []


@pytest.fixture
def link(netns, broker):
    """The group's fault proxy on the root side of its link, in front of `broker` (in the clear)."""
    group = netns.groups[0]
    relay = FaultProxy(("127.0.0.1", broker.port), seed=39, host=group.root_addr).start()
    yield netns, group, relay
    relay.close()


class GroupClocks(Clocks):
    """`Clocks` whose paho clients were made in the group's namespace: they reach the broker only
    through the group's link and its proxy (the real clock's least keep-alive, 5 s)."""

    def __init__(self, links, group, proxy, tmp_path):
        self.group, self.proxy = group, proxy
        with links.enter(group):  # paho's thread, started meanwhile, stays in the namespace
            super().__init__(None, tmp_path)

    def start(self, clock):
        hall = HallConfig(broker=self.group.root_addr, port=self.proxy.port, password=BROKER_USERS[clock])
        config = replace(Config(clock_id=clock), hall=replace(hall, keepalive_s=5))
        return Simulator(config, state_dir=str(self.tmp_path / clock), refresh_on_ticks=False)


def test_a_namespace_reaches_its_link_and_nothing_else(netns, broker):
    group = netns.groups[0]
    assert group.name == f"tcnet-{os.getpid()}-0" and group.root_addr.startswith("10.251.")
    with netns.enter(group):
        for where in (("127.0.0.1", broker.port), ("192.0.2.1", 1883)):  # the root's loopback, outside
            with pytest.raises(OSError):
                socket.create_connection(where, timeout=1).close()
    assert "default" not in netns_module.ip("-n", group.name, "route", "show")


def test_the_clocks_in_a_namespace_lose_nothing_through_stalls_and_delay(link, broker, tmp_path):
    links, group, proxy = link
    feed = director(broker, tmp_path / "records")
    clocks = GroupClocks(links, group, proxy, tmp_path)
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records through the link")
        assert proxy.connections() == len(clocks.ids)
        assert {address for address, _ in proxy.peers} == {group.ns_addr}  # from the namespace
        proxy.set(delay_s=0.05, jitter_s=0.1, stall_every_s=0.7, stall_for_s=0.3)
        for _ in range(3):
            clocks.play(3)
            clocks.pump()
        clocks.t["c1"] += 1
        tap(clocks.sims["c1"], "STOP", clocks.t["c1"])
        feed.command("adjust A -60000", "c1")  # a director's command through the stalls

        def adjusted():
            clocks.pump()
            return len(adjusts(clocks, "c1")) >= 1

        wait_for(adjusted, timeout_s=10, what="c1 to take the adjust sent through the stalls")
        settle(feed, clocks, "the records through the stalls")
        proxy.clear()
        every_record_once(feed, clocks)
        assert len(adjusts(clocks, "c1")) == 1
    finally:
        clocks.close()
        feed.close()


def test_a_link_down_then_up_loses_nothing_and_a_command_into_it_acts_at_most_once(link, broker, tmp_path):
    links, group, proxy = link
    feed = director(broker, tmp_path / "records")
    clocks = GroupClocks(links, group, proxy, tmp_path)
    try:
        clocks.play(2)
        settle(feed, clocks, "the first records through the link")
        before = feed_count = len(clocks.journaled())
        links.down(group)  # the access point is gone: nothing passes, nothing is closed
        wait_for(lambda: not links.is_up(group), what="the group's carrier to drop")
        down_at = time.monotonic()
        clocks.play(3)  # the clocks keep playing and journaling
        clocks.pump()
        clocks.t["c2"] += 1
        tap(clocks.sims["c2"], "STOP", clocks.t["c2"])
        feed.command("adjust B -30000", "c2")  # into the outage
        assert len(clocks.journaled()) > before
        time.sleep(max(0.0, 3.0 - (time.monotonic() - down_at)))  # the outage itself: 3 s
        links.up(group)
        wait_for(lambda: links.is_up(group), what="the group's carrier back")
        settle(feed, clocks, "the records made through the outage", timeout_s=40)
        every_record_once(feed, clocks)
        assert feed_count < len(clocks.journaled())
        for _ in range(20):  # the command, if it did arrive late, is taken once at most
            clocks.pump()
            feed.step(0.02)
        assert all(len(adjusts(clocks, clock)) <= 1 for clock in clocks.ids)
    finally:
        clocks.close()
        feed.close()


_RUN = """
import os, signal, sys, time
from tileclock.bench.netns import Links
links = Links(2)
with links:
    print(" ".join(g.name for g in links.groups), flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_run_killed_leaves_no_namespace(netns, sig):
    run = subprocess.Popen([sys.executable, "-c", _RUN], stdout=subprocess.PIPE, text=True)
    try:
        names = run.stdout.readline().split()
        assert len(names) == 2 and set(names) <= set(netns_module.namespaces())
        run.send_signal(sig)
        run.wait(10)
        wait_for(lambda: not set(names) & set(netns_module.namespaces()), what=f"{names} gone")
    finally:
        run.kill()
        run.wait()


def test_the_sweep_removes_a_dead_runs_namespaces_only(netns):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = f"tcnet-{dead.pid}-0"
    netns_module.ip("netns", "add", stale)
    netns.one_way(netns.groups[0], True)  # a live run's own
    with open(netns_module.LOCK, "a") as lock:  # no other run takes the spare /30 meanwhile
        fcntl.flock(lock, fcntl.LOCK_EX)
        spare = next(k for k in range(255, 0, -1) if k not in netns_module._taken_subnets())
        route = f"10.251.{spare}.2"
        netns_module.ip("route", "add", "blackhole", f"{route}/32")  # a run killed in a one-way fault
        try:
            removed = netns_module.sweep()
            assert stale in removed and f"blackhole {route}" in removed
            assert netns.groups[0].name in netns_module.namespaces()  # a live run's stays
            assert netns.groups[0].ns_addr in netns_module.ip("route", "show", "type", "blackhole")
        finally:
            netns.one_way(netns.groups[0], False)
            netns_module.ip("netns", "del", stale, check=False)
            netns_module.ip("route", "del", "blackhole", f"{route}/32", check=False)


def test_a_one_way_fault_lets_the_group_send_and_nothing_come_back(netns):
    group = netns.groups[0]
    server = socket.create_server((group.root_addr, 0))
    with netns.enter(group):
        client = socket.create_connection((group.root_addr, server.getsockname()[1]), timeout=2)
    peer, _ = server.accept()
    try:
        netns.one_way(group, True)
        client.sendall(b"record")
        peer.settimeout(5)
        assert peer.recv(16) == b"record"  # the group's bytes arrive
        peer.sendall(b"ack")
        client.settimeout(0.5)
        with pytest.raises(TimeoutError):
            client.recv(16)  # and nothing comes back
        netns.one_way(group, False)
        client.settimeout(10)
        assert client.recv(16) == b"ack"  # TCP's retransmission brings it once the fault ends
    finally:
        for sock in (client, peer, server):
            sock.close()


#: the page marks a board silent within this of its link going down: the broker's will, sent at
#: 1.5 keep-alives without a word (the clocks here: 5 s, the real clock's least), and one more
#: keep-alive for mosquitto's own check and a loaded machine (seen: 10.9 s)
SILENT_WITHIN_S = 2.5 * 5
#: and clears it within this of the link's return (the clock's reconnect back-off, then its status)
CLEARED_WITHIN_S = 10


def outcomes(folder, action_id):
    """{clock: outcome} of the action `action_id` on the audit trail in `folder` ({}: no answer yet)."""
    entry = next(e for e in audit_read.read(str(folder)) if e.get("id") == action_id)
    return {clock: line["outcome"] for clock, line in entry["outcomes"].items()}


def test_commands_into_a_link_down_are_applied_at_most_once_and_the_page_marks_it_silent(
    link, broker, tmp_path
):
    links, group, proxy = link
    folder = tmp_path / "records"
    feed = director(broker, folder)
    trail = AuditLog(str(folder))
    feed.subscribe(lambda clock, record, _log: trail.answered(clock, record))
    hall = SimpleNamespace(feed=feed, audit=trail)
    clocks = GroupClocks(links, group, proxy, tmp_path)

    def online(clock):
        return board_of(hall, clock)["online"]

    def stepping(predicate):
        def step():
            clocks.pump()
            feed.step(0.02)
            return predicate()

        return step

    try:
        clocks.play(2)
        for clock in ("c1", "c2"):
            clocks.t[clock] += 1
            tap(clocks.sims[clock], "STOP", clocks.t[clock])  # stopped: the director may adjust it
        settle(feed, clocks, "the first records through the link")
        assert online("c1") and online("c2")
        links.down(group)
        down_at = time.monotonic()
        # at once, the board still online on the page: sent, no answer yet
        early = act_as(hall, "page-t", None, "adjust", "adjust A -60000", "c1", {"side": "A"})
        assert outcomes(folder, early["id"]) == {}
        wait_for(stepping(lambda: not online("c2")), timeout_s=SILENT_WITHIN_S + 5, what="c2 silent")
        marked_s = time.monotonic() - down_at
        assert marked_s <= SILENT_WITHIN_S, marked_s
        # a command to a clock the page shows silent: not delivered, on the trail with its line
        away = act_as(hall, "page-t", None, "adjust", "adjust B -30000", "c2", {"side": "B"})
        assert outcomes(folder, away["id"]) == {"c2": "not_delivered"}
        links.up(group)
        up_at = time.monotonic()
        wait_for(stepping(lambda: online("c1") and online("c2")), timeout_s=CLEARED_WITHIN_S + 5, what="back")
        cleared_s = time.monotonic() - up_at
        assert cleared_s <= CLEARED_WITHIN_S, cleared_s
        # a command after it is back: applied, once
        after = act_as(hall, "page-t", None, "adjust", "adjust A -30000", "c2", {"side": "A"})
        wait_for(stepping(lambda: trail.flush(0) and outcomes(folder, after["id"])), what="c2's answer")
        settle(feed, clocks, "the records made through the outage", timeout_s=20)
        trail.flush(5)
        every_record_once(feed, clocks)
        assert outcomes(folder, after["id"]) == {"c2": "applied"}
        assert outcomes(folder, away["id"]) == {"c2": "not_delivered"}  # never applied after all
        assert outcomes(folder, early["id"]) in ({}, {"c1": "applied"}, {"c1": "not_delivered"})
        assert len(adjusts(clocks, "c1")) == (outcomes(folder, early["id"]) == {"c1": "applied"})
        assert len(adjusts(clocks, "c2")) == 1  # the one sent after, not the one into the outage
        print(f"silent marked after {marked_s:.1f} s, cleared {cleared_s:.1f} s after the link's return")
    finally:
        clocks.close()
        feed.close()


def test_a_round_start_sent_into_a_link_down_is_applied_once_on_each_board_when_it_is_back(
    link, broker, tmp_path
):
    """The director starts a round as the clocks' access point goes: the command leaves into a
    dead link (nothing closed: the board still online on the page), the kernel's TCP resends it
    once the link is back, and each clock takes it once; the round panel says so board by board.
    (Held past the seal's 10 s it is refused as stale: tests/test_hall_fault_commands.py.)"""
    links, group, proxy = link
    folder = tmp_path / "records"
    feed = director(broker, folder)
    trail = AuditLog(str(folder))
    feed.subscribe(lambda clock, record, _log: trail.answered(clock, record))
    clocks = GroupClocks(links, group, proxy, tmp_path)
    laptop_ms = SIM_EPOCH_NS // 1_000_000  # the laptop's time of day: the clocks' wall clocks' start
    hall = SimpleNamespace(feed=feed, audit=trail, rounds=RoundControl(feed, lambda: laptop_ms * 1_000_000))

    def panel():
        clocks.pump()
        feed.step(0.02)
        line = trail.to_several
        said = answered(line, trail.answers_to(line["id"]), feed.snapshot()["boards"])
        return [board["state"] for board in said["boards"]]

    try:
        wait_for(lambda: (clocks.pump(), feed.step(0.02), len(feed.boards) == 3)[-1], what="every board")
        links.down(group)
        wait_for(lambda: not links.is_up(group), what="the group's carrier to drop")
        down_at = time.monotonic()
        round_step_as(hall, "page-t", None, "start", 5, "", "")  # 10 s ahead, to every board
        assert panel() == ["no answer yet"] * 3  # sent; the page still shows every board online
        time.sleep(max(0.0, 3.0 - (time.monotonic() - down_at)))  # the outage itself: 3 s
        links.up(group)
        wait_for(lambda: panel() == ["applied"] * 3, timeout_s=30, what="every board's answer")
        for sim in clocks.sims.values():
            sim.catch_up(sim.time() + 11 * 10**9)  # past the start
        for _ in range(20):  # anything more on its way would be taken by now
            clocks.pump()
            feed.step(0.02)
        for clock, sim in clocks.sims.items():
            records = sim.journal.records()
            assert len([r for r in records if r["ev"] == "set" and r.get("round") == 5]) == 1, clock
            assert len([r for r in records if r["ev"] == "round_start"]) == 1, clock
        assert panel() == ["applied"] * 3
    finally:
        clocks.close()
        feed.close()
