"""The director's side of the hall: every record once, in collect's files, through cuts of every kind."""

import json
import os
import time
from dataclasses import replace

import paho.mqtt.client as mqtt

from conftest import BROKER_USERS, tap
from hall_helpers import hall_config, wait_for
from tileclock.bench.hall import count_on_disk
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.director.hall.feed import HallFeed
from tileclock.director.records.history import iter_records, read_records
from tileclock.sim.simulator import Simulator
from tileclock.wire import segments
from tileclock.wire.protocol import frame, with_crc

S = NS_PER_S
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


def test_every_record_once_across_a_broker_restart_a_director_restart_and_a_clock_kill(broker, tmp_path):
    out = tmp_path / "records"
    clocks = Clocks(broker, tmp_path)
    feed = director(broker, out)
    clocks.play(4)
    settle(feed, clocks, "the first records")

    broker.stop(kill=True)  # the broker crashes (SIGKILL): what it had not saved is gone
    clocks.play(3)
    broker.start()
    settle(feed, clocks, "the records made while the broker was down")

    feed.close()  # the director restarts: the broker keeps its queue meanwhile
    clocks.play(3)
    feed = director(broker, out)
    settle(feed, clocks, "the records made while the director was away")

    # the double fault: the director killed, records queued for it, then the broker killed too (its
    # queue for the director since its last autosave gone); the clocks had them acknowledged
    kill_director(feed)
    clocks.play(3)

    def acknowledged():
        clocks.pump()
        return all(sim.uplink.acked == sim.journal.next_seq - 1 for sim in clocks.sims.values())

    wait_for(acknowledged, what="the broker to acknowledge them to the clocks")
    broker.stop(kill=True)
    broker.start()
    feed = director(broker, out)
    asked, send = [], feed.command
    feed.command = lambda text, *args, **kw: (asked.append(text), send(text, *args, **kw))[1]
    settle(feed, clocks, "the records the broker lost while the director was down")
    assert any(line.startswith("resend ") for line in asked)  # lost at the broker: asked of the clocks

    clocks.play(2)
    clocks.kill("c2")  # mid-game: it resends from its last saved acknowledgement
    clocks.play(2)
    settle(feed, clocks, "the records after the kill")

    counts = count_on_disk(out)
    assert set(counts) == clocks.journaled()
    assert max(counts.values()) == 1, [key for key, n in counts.items() if n > 1]
    c2 = read_records(clocks.journal("c2"))
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


def test_a_board_shows_its_games_own_round_and_table_never_those_set_for_the_next_game(broker, tmp_path):
    """A `set` while a game runs is for the next game (`applies: next`, docs/protocol.md): the
    clock's retained state and the director's board go on showing the running game's round and
    table, and the next game's once it opens."""
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    sim = clocks.sims["c1"]
    feed = director(broker, tmp_path / "records")

    def shown(what):
        """(the clock's state, the page's board row): round and table, once both are up to date."""
        settle(feed, clocks, what)
        newest = sim.journal.settled_seq - 1

        def state_is_new():
            feed.step(0.01)
            return feed.boards["c1"].state.get("seq") == newest

        wait_for(state_is_new, what=f"the state after {what}")
        state, (row,) = feed.boards["c1"].state, feed.snapshot()["boards"]
        return (state["round"], state["table"]), (row["round"], row["table"])

    sim.send(with_crc("set round=3 table=5"), 1 * S)  # nobody has pressed: for this game
    tap(sim, "B", 2)
    sim.send(with_crc("set round=4 table=6"), 3 * S)  # under way: for the next game
    sets = [(r["round"], r["applies"]) for r in sim.journal.records() if r["ev"] == "set"]
    assert sets == [(3, "this"), (4, "next")]
    assert shown("the set for the next game") == ((3, "5"), (3, "5"))
    tap(sim, "A", 4)
    assert shown("a press after it") == ((3, "5"), (3, "5"))
    clocks.t["c1"] = 4
    clocks.end_game("c1")
    clocks.open_game("c1")
    assert shown("the next game") == ((4, "6"), (4, "6"))
    feed.close()
    clocks.close()


def test_a_game_on_file_is_acknowledged_so_the_clock_may_let_it_go(broker, tmp_path):
    """docs/reliability.md#retention: the hall's director tells a clock its games are on file
    (`ack`, as `collect` does on the serial line); the clock's journal then holds them as collected."""
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    feed = director(broker, tmp_path / "records")
    folder = str(tmp_path / "c1" / "journal")
    clocks.play(2)
    clocks.end_game("c1")
    clocks.open_game("c1")
    clocks.play(2)
    clocks.end_game("c1")
    first_game, second_game = segments.list_segments(folder)

    def collected(through):
        def check():
            clocks.pump()  # the clock's loop wakes for the director's command
            feed.step(0.01)
            return segments.read_mark(folder, segments.COLLECTED) == through

        return check

    # the second game's end, on file, closes the first game's segment: that game is held
    wait_for(collected(second_game - 1), what="the clock to mark its first game collected")

    # acks the clock must not act on: beyond what it made; up to the second game's end (its
    # segment is open: a correction may yet come); and last, without its CRC (answered by an `error`)
    newest = clocks.sims["c1"].journal.next_seq - 1
    feed.command(f"ack {10**9}", "c1")
    feed.command(f"ack {newest}", "c1")
    feed.command(f"ack {newest}", "c1", crc=False)
    wait_for(lambda: refused_ack(clocks, feed), what="the clock to refuse the ack without its CRC")
    assert segments.read_mark(folder, segments.COLLECTED) == second_game - 1

    # retention: both games a year and more old; opening the next game prunes the held one alone
    for first in (first_game, second_game):
        path = os.path.join(folder, segments.segment_name(first))
        os.utime(path, (time.time() - 400 * 86400,) * 2)
    clocks.open_game("c1")
    left = segments.list_segments(folder)
    assert first_game not in left and second_game in left  # held and old: gone; old but unheld: kept
    assert time.time() - os.path.getmtime(os.path.join(folder, segments.segment_name(second_game))) > 86400
    records = clocks.sims["c1"].journal.records()
    assert not [r for r in records if r["ev"] == "fault" and "pruned" in r]  # held: no fault

    # an ack to every clock is no clock's: the second game, closed now, stays unheld
    feed.command(f"ack {clocks.sims['c1'].journal.next_seq - 1}")
    feed.command("ack 0", "c1", crc=False)
    wait_for(lambda: refused_ack(clocks, feed, 2), what="the clock to refuse the second bad ack")
    assert segments.read_mark(folder, segments.COLLECTED) == second_game - 1
    feed.close()
    clocks.close()


def refused_ack(clocks, feed, times=1):
    """Whether the clock has answered `times` acks without their CRC (each with an `error`)."""
    clocks.pump()
    feed.step(0.01)
    errors = [r for r in clocks.sims["c1"].journal.records() if r["ev"] == "error"]
    return sum("needs its CRC" in r.get("detail", "") for r in errors) >= times


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
