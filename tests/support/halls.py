"""The hall on a real broker: simulated clocks with their journals, the director's feed on it, and
stepping both until every record is in."""

import os
import time
from dataclasses import replace

from conftest import BROKER_USERS, tap
from support.hall_helpers import hall_config, wait_for
from tileclock.bench.hall import count_on_disk
from tileclock.device.config_schema import Config
from tileclock.director.hall.feed import HallFeed
from tileclock.director.records.history import iter_records
from tileclock.sim.simulator import Simulator

CLOCKS = ("c1", "c2", "c3")


class Clocks:
    """Simulated clocks on the broker, each with its journal and uplink state in `tmp_path/ID`."""

    def __init__(self, broker, tmp_path, ids=CLOCKS):
        self.broker, self.tmp_path, self.ids = broker, tmp_path, ids
        self.sims = {clock: self.start(clock) for clock in ids}
        self.t = {clock: 0 for clock in ids}

    def start(self, clock):
        config = replace(Config(clock_id=clock), hall=hall_config(self.broker, clock))
        return Simulator(config, state_dir=str(self.tmp_path / clock), refresh_on_ticks=False)

    def play(self, turns):
        """Each clock: `turns` presses, alternating sides, a few seconds of its game apart."""
        for clock, sim in self.sims.items():
            for _ in range(turns):
                self.t[clock] += 3
                tap(sim, "AB"[self.t[clock] % 2], self.t[clock])  # its release taken 5 ms after

    def end_game(self, clock):
        """End `clock`'s game as its players do: STOP, hold STOP and let go, STOP to confirm."""
        for after_s, hold_s in ((1, 0.1), (2, 3), (6, 0.1)):
            tap(self.sims[clock], "STOP", self.t[clock] + after_s, hold_s)
        self.t[clock] += 7

    def open_game(self, clock):
        """Open `clock`'s next game (hold STOP): its journal starts a segment for it."""
        tap(self.sims[clock], "STOP", self.t[clock] + 1, hold_s=3)
        self.t[clock] += 4

    def kill(self, clock):
        """A clock gone at once: no `offline`, no last save of what the broker acknowledged, no
        clean stop of its journal (its next start skips the seqs it had reserved ahead)."""
        sim = self.sims[clock]
        sim.uplink._closed = True
        sim.uplink.acked_file.cancel()
        sim.uplink.client.loop_stop()
        sim.uplink.client.socket().close()
        sim.uplink.close = lambda: None
        sim.journal.write_pending()  # what the loop wrote, as a kill leaves it on disk
        sim.journal.close = lambda: None
        sim.close()
        self.sims[clock] = self.start(clock)

    def pump(self):
        """What each clock's loop does when its uplink wakes it: commands answered, records handed on."""
        for sim in self.sims.values():
            sim.daemon.pump(sim.time())

    def journal(self, clock):
        """`clock`'s journal folder (its live clock's, which the test only reads)."""
        return str(self.tmp_path / clock / "journal")

    def journaled(self):
        """Every (clock id, seq) the clocks' journals hold, read from their segments as they are on
        disk (read-only: opening a `Journal` would be a clock's start-up, moving its seq marks)."""
        return {(c, r["seq"]) for c in self.ids for r in iter_records(self.journal(c))}

    def on_disk(self):
        """What the clocks' journals are on disk now, cheap to ask: each segment's name and size."""
        return tuple(
            (entry.name, entry.stat().st_size) for c in self.ids for entry in os.scandir(self.journal(c))
        )

    def close(self):
        for sim in self.sims.values():
            sim.close()


def director(broker, folder, **options):
    """The director's feed on `broker`, connected: over TLS where it has it."""
    port, options = broker.tls_port or broker.port, {"tls_ca": broker.ca_file, **options}
    feed = HallFeed("127.0.0.1", port, BROKER_USERS["director"], str(folder), **options).start()
    wait_for(feed.connection.connected.is_set, what="the director to connect")
    return feed


def kill_director(feed):
    """The director gone at once: no disconnect, nothing more acknowledged, its store as it was."""
    feed.connection.client.loop_stop()
    feed.connection.client.socket().close()
    feed.store.close()


def settle(feed, clocks, what, timeout_s=30.0):
    """Step the director and the clocks' uplinks until the store holds every journaled record.

    Each round waits on the director's inbox (`feed.step` returns as a message comes); the game
    files and journals are read again when something came, a journal changed on disk, or half a
    second went by (what came may reach its game file after the step that took it, on a loaded
    machine). The limit is for a hang: a loaded machine took over 10 s to bring a broker's bridge
    up."""
    deadline = time.monotonic() + timeout_s
    seen, next_look = None, 0.0
    while True:
        clocks.pump()
        came = feed.step(0.02)
        journals = clocks.on_disk()
        if came or journals != seen or time.monotonic() >= next_look:
            seen, next_look = journals, time.monotonic() + 0.5
            if set(count_on_disk(feed.store.outdir)) >= clocks.journaled():
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def every_record_once(feed, clocks):
    counts = count_on_disk(feed.store.outdir)
    assert set(counts) == clocks.journaled()
    assert max(counts.values()) == 1, [key for key, n in counts.items() if n > 1]


def adjusts(clocks, clock):
    return [r for r in iter_records(clocks.journal(clock)) if r["ev"] == "adjust"]
