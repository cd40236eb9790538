"""The director's side of the hall: every record once, in collect's files, through cuts of every kind."""

import json
import os
import time

import paho.mqtt.client as mqtt

from conftest import tap
from support.hall_helpers import wait_for
from support.halls import CLOCKS, Clocks, director, kill_director, settle
from tileclock.bench.hall import count_on_disk
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.director.records.history import read_records
from tileclock.sim.simulator import Simulator
from tileclock.wire import segments
from tileclock.wire.protocol import frame, with_crc

S = NS_PER_S


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
