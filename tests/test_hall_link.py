"""The clock's uplink to a real mosquitto: every record out, the journal as the outbox, commands in."""

import json
import os
import signal
import socket
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import paho.mqtt.client as mqtt

from conftest import BROKER_USERS, tap
from support.hall_helpers import Listener, hall_config, wait_for
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.sim.simulator import Simulator
from tileclock.wire.protocol import unframe, with_crc

S = NS_PER_S


def clock_on(broker, tmp_path, clock="c1", **options):
    config = replace(Config(clock_id=clock), hall=hall_config(broker, clock))
    return Simulator(config, state_dir=str(tmp_path / clock), **options)


def pump_until(sim, predicate, what):
    """Let the uplink hand paho more records until `predicate` (the loop does this when woken)."""

    def done():
        sim.uplink.pump()
        return predicate()

    wait_for(done, what=what)


def test_every_record_reaches_the_broker_in_order_with_state_and_status(broker, tmp_path):
    listener = Listener(broker)
    sim = clock_on(broker, tmp_path)
    for n in range(10):
        tap(sim, "AB"[n % 2], 1 + n)
    everything = set(range(sim.journal.next_seq))
    pump_until(sim, lambda: listener.seqs() == everything, "every record")
    records = listener.records()
    assert [r["seq"] for r in records] == sorted(everything)  # in order, once each on a steady line
    assert all(r["clock"] == "c1" for r in records)
    assert listener.payloads("tileclock/c1/status")[-1] == b"online"
    wait_for(
        lambda: b'"seq":%d' % records[-1]["seq"] in (listener.payloads("tileclock/c1/state") or [b""])[-1]
    )
    sim.close()
    wait_for(lambda: listener.payloads("tileclock/c1/status")[-1] == b"offline", what="offline at shutdown")
    listener.close()


def test_the_journal_is_the_outbox_across_a_restart_while_the_broker_is_away(broker, tmp_path):
    listener = Listener(broker, client_id="director", clean=False)  # a persistent session, as the director's
    sim = clock_on(broker, tmp_path)
    tap(sim, "B", 1)
    first = set(range(sim.journal.next_seq))
    pump_until(sim, lambda: listener.seqs() == first, "the first records")
    wait_for(lambda: sim.uplink.acked == max(first), what="the broker's acknowledgements")
    broker.stop()
    for n in range(6):  # played while the broker is away: only the journal has them
        tap(sim, "AB"[n % 2], 2 + n)
    made = sim.journal.next_seq
    sim.close()  # the clock restarts: paho's memory is gone
    broker.start()
    sim = clock_on(broker, tmp_path)
    tap(sim, "B", 20)
    everything = set(range(sim.journal.next_seq))
    pump_until(sim, lambda: listener.seqs() == everything, "every record, those made offline too")
    assert made < sim.journal.next_seq
    seqs = [r["seq"] for r in listener.records()]
    # what the broker had acknowledged was not sent again by the clock (a restarted broker may
    # deliver its unacknowledged copy again, DUP set: at least once, as QoS 1 is)
    again = [
        unframe(p.decode("ascii"))["seq"] for t, p in listener.redelivered if t == "tileclock/c1/records"
    ]
    assert seqs.count(0) - again.count(0) == 1
    sim.close()
    listener.close()


def test_the_state_keeps_the_games_round_and_table_across_a_restart_mid_game(broker, tmp_path):
    """The retained state names the running game's own round and table (docs/hall.md), also once
    the clock has restarted mid-game, and never the next game's."""
    listener = Listener(broker)
    sim = clock_on(broker, tmp_path)
    sim.send(with_crc("set round=3 table=5"), 1 * S)  # nobody has pressed: for this game
    tap(sim, "B", 2)
    sim.send(with_crc("set round=4 table=6"), 3 * S)  # under way: for the next game
    sim.close()
    sim = clock_on(broker, tmp_path)
    newest = sim.journal.settled_seq - 1
    assert sim.journal.records(newest)[0]["ev"] == "recovered"

    def state():
        payloads = listener.payloads("tileclock/c1/state")
        return json.loads(payloads[-1]) if payloads else {}

    pump_until(sim, lambda: state().get("seq") == newest, "the state after the restart")
    assert (state()["round"], state()["table"]) == (3, "5")
    sim.close()
    listener.close()


def test_a_killed_clock_resumes_after_the_last_acknowledged_record(broker, tmp_path):
    listener = Listener(broker, client_id="director", clean=False)
    state = tmp_path / "state"
    (tmp_path / "config.toml").write_text(
        f'[clock]\nid = "c1"\ncheckpoint_s = 1\n[serial]\nport = "loop://"\n'
        f'[hall]\nbroker = "127.0.0.1"\nport = {broker.port}\npassword = "{BROKER_USERS["c1"]}"\n'
    )
    script = tmp_path / "game.txt"
    script.write_text("0.1 press B\n0.3 press A\n0.5 press B\n0.7 press A\n30 until\n")
    command = [
        sys.executable,
        "-m",
        "tileclock",
        "run",
        "--simulate",
        "--config",
        str(tmp_path / "config.toml"),
    ]
    command += ["--state-dir", str(state)]
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(20)
    (tmp_path / "run").mkdir()  # systemd's RuntimeDirectory: a restart in this boot numbers on exactly
    env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify"), RUNTIME_DIRECTORY=str(tmp_path / "run"))
    process = subprocess.Popen(
        [*command, "--script", str(script), "--stay"], stderr=subprocess.DEVNULL, env=env
    )
    try:
        while not notify.recv(256).startswith(b"READY=1"):
            pass
        wait_for(lambda: {"switch", "checkpoint"} <= {r["ev"] for r in listener.records()}, what="play")
        process.send_signal(signal.SIGKILL)  # mid-game: no `offline`, no saving on the way out
        process.wait(10)
        wait_for(lambda: listener.payloads("tileclock/c1/status")[-1] == b"offline", 30, "the will")
        process = subprocess.Popen(command, stderr=subprocess.DEVNULL, env=env)
        while not notify.recv(256).startswith(b"READY=1"):  # SIGTERM is a clean stop from here on
            pass
        wait_for(lambda: "recovered" in {r["ev"] for r in listener.records()}, what="the restarted clock")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)
    from tileclock.device.journal.reader import JournalReader

    next_seq = JournalReader(str(state / "journal")).records()[-1]["seq"] + 1  # (it stopped cleanly)
    wait_for(lambda: listener.seqs() == set(range(next_seq)), what="every journaled record")
    seqs = [r["seq"] for r in listener.records()]
    assert len(seqs) - len(set(seqs)) <= 5  # a kill resends at most what was acknowledged in its last second
    assert int((state / "hall.acked").read_text()) == next_seq - 1
    listener.close()


def test_commands_from_the_director_are_checked_and_recorded(broker, tmp_path):
    listener = Listener(broker)
    sim = clock_on(broker, tmp_path)
    pump_until(sim, lambda: listener.payloads("tileclock/c1/status") == [b"online"], "the clock online")
    director = listener.client

    def answered(payload, topic="tileclock/c1/cmd", retain=False):
        before = sim.journal.next_seq
        director.publish(topic, payload, qos=0, retain=retain).wait_for_publish(5)
        pump_until(sim, lambda: sim.journal.next_seq > before or sim.uplink._commands, "the command")
        sim.daemon.pump(sim.time())  # the loop's wake: it reads the command
        return [r for r in sim.journal.records() if r["seq"] >= before]

    assert answered("status") == []  # answered on the clock's `answer` topic, never journaled
    assert answered("status", "tileclock/all/cmd") == []
    wait_for(lambda: len(listener.payloads("tileclock/c1/answer")) == 2, what="both answers")
    refused = answered("adjust A +60000")  # no CRC: refused, as on the serial line
    assert refused[0]["ev"] == "error" and "CRC" in refused[0]["detail"]
    assert answered("\x00\x01 noise")[0]["ev"] == "error"
    # a resend is answered on the broker, from the journal: the director lost those records
    pump_until(sim, lambda: listener.seqs() == set(range(sim.journal.next_seq)), "every record once")
    director.publish("tileclock/c1/cmd", "resend 0 2", qos=0).wait_for_publish(5)
    pump_until(sim, lambda: sim.uplink._commands, "the resend")
    sim.daemon.pump(sim.time())
    pump_until(sim, lambda: [r["seq"] for r in listener.records()].count(2) == 2, "records 0-2 again")
    tap(sim, "B", 1)  # running: an adjust is refused by the game, and recorded
    assert "stopped" in answered(with_crc("adjust A +60000"))[0]["detail"]
    tap(sim, "STOP", 2)
    adjusted = answered(with_crc("adjust A +60000"))
    assert adjusted[0]["ev"] == "adjust" and adjusted[0]["delta_ms"] == 60000
    sim.close()
    # a retained command is stale by definition: a clock that comes online never acts on one
    director.publish("tileclock/c1/cmd", "status", qos=1, retain=True).wait_for_publish(5)
    sim = clock_on(broker, tmp_path)
    before = sim.journal.next_seq
    pump_until(sim, lambda: listener.payloads("tileclock/c1/status")[-1] == b"online", "the clock again")
    director.publish("tileclock/c1/cmd", "", qos=1, retain=True).wait_for_publish(5)  # clears it; no command
    director.publish("tileclock/c1/cmd", "status", qos=0).wait_for_publish(5)
    pump_until(sim, lambda: sim.uplink._commands, "the fresh command")
    sim.daemon.pump(sim.time())
    wait_for(lambda: len(listener.payloads("tileclock/c1/answer")) == 3, what="the fresh command's answer")
    assert sim.journal.next_seq == before  # only the fresh command was answered, and not journaled
    sim.close()
    listener.close()


def test_a_clock_may_publish_only_as_itself_and_never_send_commands(broker, tmp_path):
    spy = Listener(broker)  # the director sees everything that gets through
    impostor = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="c1")
    impostor.username_pw_set("c1", BROKER_USERS["c1"])
    impostor.connect("127.0.0.1", broker.port)
    impostor.loop_start()
    wait_for(impostor.is_connected, what="c1 to connect")
    for name in ("tileclock/c2/records", "tileclock/c2/state", "tileclock/c2/cmd", "tileclock/all/cmd"):
        impostor.publish(name, "forged", qos=1).wait_for_publish(5)
    impostor.publish("tileclock/c1/records", "mine", qos=1).wait_for_publish(5)
    wait_for(lambda: spy.payloads("tileclock/c1/records") == [b"mine"], what="c1's own message")
    assert [name for name, _, _ in spy.messages] == ["tileclock/c1/records"]
    # and a clock cannot read another clock's commands or records
    reader = Listener(broker, user="c1", client_id="c1-reader", subscribe=[("tileclock/#", 1)])
    spy.client.publish("tileclock/c2/cmd", "status", qos=1).wait_for_publish(5)
    spy.client.publish("tileclock/c1/cmd", "status", qos=1).wait_for_publish(5)
    wait_for(lambda: reader.payloads("tileclock/c1/cmd") == [b"status"], what="c1's own command")
    assert reader.payloads("tileclock/c2/cmd") == []
    # no password, no entry
    stranger = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="stranger")
    refused = []
    stranger.on_connect = lambda c, u, f, reason, p: refused.append(reason.is_failure)
    stranger.connect("127.0.0.1", broker.port)
    stranger.loop_start()
    wait_for(lambda: refused, what="the broker's answer")
    assert refused == [True]
    for client in (impostor, stranger):
        client.loop_stop()
    reader.close()
    spy.close()


def test_the_broker_gone_is_a_fault_and_an_alert_never_a_stop(broker, tmp_path, monkeypatch):
    monkeypatch.setattr("tileclock.device.links.hall_grace.DOWN_GRACE_S", 0.2)
    sim = clock_on(broker, tmp_path)
    wait_for(lambda: sim.uplink._connected, what="the clock online")
    tap(sim, "B", 1)
    broker.stop()
    wait_for(lambda: sim.uplink.failing, what="the uplink to notice")
    tap(sim, "A", 2)  # play goes on
    assert sim.daemon.alerts == ("NO HALL",)
    faults = [r for r in sim.journal.records() if r["ev"] == "fault"]
    assert faults and faults[0]["part"] == "hall"
    assert sim.journal.records()[-1]["run"] == "B"
    broker.start()
    wait_for(lambda: sim.uplink._connected, 30, "the uplink to reconnect")
    tap(sim, "B", 40)
    assert sim.daemon.alerts == ()
    assert "fault_cleared" in [r["ev"] for r in sim.journal.records()]
    sim.close()


def test_without_a_hall_section_the_clock_loads_no_network_client():
    code = (
        "import sys; from tileclock.device.config_schema import Config; from tileclock.sim.simulator import Simulator;"
        "sim = Simulator(Config()); assert sim.uplink is None; sim.close();"
        "assert 'paho' not in sys.modules, 'paho loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_after_an_unclean_stop_the_uplink_steps_over_the_skipped_seqs_in_one_read(
    broker, tmp_path, monkeypatch
):
    from tileclock.wire import segments

    listener = Listener(broker)
    sim = clock_on(broker, tmp_path)
    tap(sim, "B", 1)
    pump_until(sim, lambda: listener.seqs() == set(range(sim.journal.next_seq)), "the first records")
    sim.journal.close = lambda: None  # killed: no clean stop, so the next start skips its reserved seqs
    sim.close()
    reads = []
    real_iter_lines = segments.iter_lines
    monkeypatch.setattr(segments, "iter_lines", lambda path: reads.append(path) or real_iter_lines(path))
    sim = clock_on(broker, tmp_path)
    tap(sim, "A", 2)
    pump_until(sim, lambda: max(listener.seqs()) == sim.journal.next_seq - 1, "the records after the start")
    wait_for(lambda: sim.uplink.acked == sim.journal.next_seq - 1, what="the acknowledged seq past the run")
    assert len(reads) < 10  # the skipped run cost a read or two, not one read per seq
    held = {seq for seq, _ in sim.journal.read(0)}
    assert listener.seqs() == held  # every record held went out, and nothing else
    skipped = [r["skipped"] for r in sim.journal.records() if r["ev"] == "fault" and "skipped" in r]
    assert skipped and skipped[0][1] - skipped[0][0] >= 1000
    # the director asks for everything: the records held come again, the run is refused, in a read or two
    reads.clear()
    before = sim.journal.next_seq
    listener.client.publish("tileclock/c1/cmd", "resend 0", qos=0).wait_for_publish(5)
    pump_until(sim, lambda: sim.uplink._commands, "the resend")

    def refused():
        sim.daemon.pump(sim.time())  # a wake: the resend streams on, then names what it lacked
        return [r for r in sim.journal.records(before) if r["ev"] == "error"]

    wait_for(refused, what="the refusal")
    assert refused()[0]["detail"].startswith(f"resend: seq {skipped[0][0]}-{skipped[0][1]} not held")
    assert len(reads) < 10

    def twice():
        sim.daemon.pump(sim.time())
        counts = Counter(record["seq"] for record in listener.records())
        return all(counts[seq] == 2 for seq in held)

    wait_for(twice, what="every record held, once more")
    sim.close()
    listener.close()
