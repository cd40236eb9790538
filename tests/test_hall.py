"""The director's side of the hall: every record once, in collect's files, through cuts of every kind."""

import json
from dataclasses import replace

import paho.mqtt.client as mqtt

from conftest import BROKER_USERS
from hall_helpers import hall_config, wait_for
from tileclock.clock.protocol import frame
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config import Config
from tileclock.device.journal import Journal
from tileclock.director.hall import HallFeed
from tileclock.director.store import count_on_disk
from tileclock.sim.simulator import Simulator

S = NS_PER_S
CLOCKS = ("c1", "c2", "c3")


class Clocks:
    """Simulated clocks on the broker, each with its journal and uplink state in `tmp_path/ID`."""

    def __init__(self, broker, tmp_path):
        self.broker, self.tmp_path = broker, tmp_path
        self.sims = {clock: self.start(clock) for clock in CLOCKS}
        self.t = {clock: 0 for clock in CLOCKS}

    def start(self, clock):
        config = replace(Config(clock_id=clock), hall=hall_config(self.broker, clock))
        return Simulator(config, state_dir=str(self.tmp_path / clock), refresh_on_ticks=False)

    def play(self, turns):
        """Each clock: `turns` presses, alternating sides, a few seconds of its game apart."""
        for clock, sim in self.sims.items():
            for _ in range(turns):
                self.t[clock] += 3
                button = "AB"[self.t[clock] % 2]
                sim.set_button(button, True, self.t[clock] * S)
                sim.set_button(button, False, self.t[clock] * S + S // 10)

    def kill(self, clock):
        """A clock gone at once: no `offline`, no last save of what the broker acknowledged, no
        clean stop of its journal (its next start skips the seqs it had reserved ahead)."""
        sim = self.sims[clock]
        sim.uplink._closed = True
        if sim.uplink._save_timer:
            sim.uplink._save_timer.cancel()
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

    def journaled(self):
        """Every (clock id, seq) the clocks' journals hold."""
        return {(c, r["seq"]) for c in CLOCKS for r in Journal(str(self.tmp_path / c / "journal")).records()}

    def close(self):
        for sim in self.sims.values():
            sim.close()


def director(broker, folder):
    feed = HallFeed("127.0.0.1", broker.port, BROKER_USERS["director"], str(folder)).start()
    wait_for(feed.connected.is_set, what="the director to connect")
    return feed


def settle(feed, clocks, what):
    """Step the director and the clocks' uplinks until the store holds every journaled record."""

    def done():
        clocks.pump()
        feed.step(0.01)
        return set(count_on_disk(feed.store.outdir)) >= clocks.journaled()

    wait_for(done, 30, what)


def test_every_record_once_across_a_broker_restart_a_director_restart_and_a_clock_kill(broker, tmp_path):
    out = tmp_path / "records"
    clocks = Clocks(broker, tmp_path)
    feed = director(broker, out)
    clocks.play(4)
    settle(feed, clocks, "the first records")

    broker.stop()  # the broker restarts (it saves its sessions and queues on the way down)
    clocks.play(3)
    broker.start()
    settle(feed, clocks, "the records made while the broker was down")

    feed.close()  # the director restarts: the broker keeps its queue meanwhile
    clocks.play(3)
    feed = director(broker, out)
    settle(feed, clocks, "the records made while the director was away")

    clocks.play(2)
    clocks.kill("c2")  # mid-game: it resends from its last saved acknowledgement
    clocks.play(2)
    settle(feed, clocks, "the records after the kill")

    counts = count_on_disk(out)
    assert set(counts) == clocks.journaled()
    assert max(counts.values()) == 1, [key for key, n in counts.items() if n > 1]
    c2 = Journal(str(tmp_path / "c2" / "journal")).records()
    assert {"recovered"} <= {r["ev"] for r in c2}
    # its start after the kill skipped the seqs it had reserved: the director stepped over them
    assert [r["skipped"] for r in c2 if r["ev"] == "fault" and "skipped" in r]
    feed.close()
    clocks.close()


def test_a_game_the_director_ends_with_round_over_is_in_results_csv(broker, tmp_path):
    out = tmp_path / "records"
    clocks = Clocks(broker, tmp_path)
    feed = director(broker, out)
    clocks.play(3)
    settle(feed, clocks, "the games under way")
    feed.command("round over")  # to every clock, on tileclock/all/cmd

    def ended():
        for sim in clocks.sims.values():
            sim.daemon.pump(sim.time())  # each clock's loop wakes for the command
        settle(feed, clocks, "the end records")
        return all(sim.journal.records()[-1]["ev"] == "end" for sim in clocks.sims.values())

    wait_for(ended, what="every clock to end its game")
    with open(out / "results.csv", encoding="utf-8") as file:
        rows = file.read().splitlines()
    assert len(rows) == 1 + len(CLOCKS)
    assert all("round_over" in row for row in rows[1:])
    # a command without its CRC, or from a clock, changes nothing
    feed.command("round over", crc=False)
    for sim in clocks.sims.values():
        sim.daemon.pump(sim.time())
    feed.close()
    clocks.close()


def test_a_record_on_another_clocks_topic_is_kept_aside(broker, tmp_path):
    # the ACL lets a clock publish only under its own id; the director checks it all the same
    feed = director(broker, tmp_path / "records")
    message = mqtt.MQTTMessage(topic=b"tileclock/c1/records")
    message.payload = Simulator(Config(clock_id="c2")).journal.line(0).encode()
    feed.inbox.put(message)
    feed.step(0)
    assert feed.store.rejects == 1 and not feed.store.clocks
    feed.close()


def test_a_damaged_record_forged_for_another_clock_cannot_hide_its_real_one(broker, tmp_path):
    # integrity-valid but missing a field, claiming to be c1's record 0, on c2's topic
    feed = director(broker, tmp_path / "records")
    real = Simulator(Config(clock_id="c1")).journal.line(0)
    forged = json.loads(real[: real.rindex(',"crc"')] + "}")
    del forged["ev"]
    message = mqtt.MQTTMessage(topic=b"tileclock/c2/records")
    message.payload = frame(json.dumps(forged, separators=(",", ":"))).encode()
    feed.inbox.put(message)
    feed.step(0)
    genuine = mqtt.MQTTMessage(topic=b"tileclock/c1/records")
    genuine.payload = real.encode()
    feed.inbox.put(genuine)
    feed.step(0)
    c1 = feed.store.clocks["c1"]
    assert feed.store.rejects == 1 and (c1.written, c1.duplicates) == (1, 0)  # c1's record 0 kept
    feed.close()
