"""The spectators' topics through both real brokers: every spectator gets every public state, the
state says each side's time left at its own instant, and a spectator reads nothing private and
publishes nothing (docs/hall.md, "Spectators"). The small, fast version of
`tileclock hall-bench --spectators`."""

import json
import os
import stat
from pathlib import Path

import paho.mqtt.client as mqtt

from conftest import BROKER_USERS
from support.hall_helpers import Listener, Spectator, wait_for
from support.halls import Clocks
from tileclock.clock.history import record_instant_ns
from tileclock.clock.timecode import NS_PER_MS, format_clock
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.device.journal.reader import JournalReader
from tileclock.device.links.hall_public import PublicScene, public_text
from tileclock.director.hall.ends import pace
from tileclock.director.hall.viewers_broker import ViewersBroker, write_setup


def newest_seqs(clocks):
    return {clock: sim.journal.settled_seq - 1 for clock, sim in clocks.sims.items()}


def published_through(clocks, reference):
    """Pump the clocks until the hall's broker has each clock's public state of its newest record."""

    def done():
        clocks.pump()
        states = reference.public()
        return all(states.get(c) and states[c][-1]["seq"] == seq for c, seq in newest_seqs(clocks).items())

    wait_for(done, 20, "every clock's newest public state")


class Reference:
    """What each clock published on its public topic, as a `Listener` on the hall's broker got it."""

    def __init__(self, listener):
        self.listener = listener

    def public(self):
        states = {}
        with self.listener.lock:
            for name, payload, _ in self.listener.messages:
                if name.endswith("/public") and payload:
                    states.setdefault(name.split("/")[1], []).append(json.loads(payload))
        return states


def test_every_spectator_gets_every_public_state_in_order(broker, viewers_broker, tmp_path):
    spectators = [Spectator(viewers_broker, f"viewer-{n}") for n in range(3)]
    for spectator in spectators:
        wait_for(lambda s=spectator: s.bridged()[-1:] == [b"1"], what="the bridge to the hall's broker")
    reference = Reference(Listener(broker))
    clocks = Clocks(broker, tmp_path)
    for _ in range(5):  # a hall's pace: each press's state acknowledged before the next press (a
        clocks.play(1)  # clock hands paho one state a topic at a time, the newest waiting)
        published_through(clocks, reference)
    clocks.end_game("c1")
    published_through(clocks, reference)
    sent = {c: [s["seq"] for s in states] for c, states in reference.public().items()}
    assert set(sent) == set(clocks.ids) and all(len(seqs) >= 5 for seqs in sent.values())
    for spectator in spectators:
        wait_for(
            lambda s=spectator: {c: [x["seq"] for x in v] for c, v in s.public().items()} == sent,
            what="each spectator to have every state, once, in order",
        )
    clocks.close()


def test_the_public_state_is_the_time_left_at_its_own_instant_as_a_time_of_day(broker, tmp_path):
    reference = Reference(Listener(broker))
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    clocks.play(3)  # A runs from 9 s on
    published_through(clocks, reference)
    state = reference.public()["c1"][-1]
    records = JournalReader(str(tmp_path / "c1" / "journal")).records()
    record = next(r for r in records if r["seq"] == state["seq"])
    origin = next(r for r in records if r["ev"] == "new_game")["mono_ns"]
    assert state["at_ms"] == (SIM_EPOCH_NS + origin + record_instant_ns(record)) // NS_PER_MS
    assert (state["state"], state["run"], state["clock"]) == ("running", record["run"], "c1")
    for side in "AB":
        left = state[side]["left_ms"]
        assert left == 1_500_000 - record[side]["used_ms"]
        assert format_clock(-(-left // 1000)) == record[side]["shown"] == state[side]["shown"]
        assert state[side]["runs"] == (side == record["run"])
    assert state["cap_s"] == 600  # NASPA: the count stops at -10:01
    assert state["boot"] == next(r for r in records if r["ev"] == "boot")["boot_id"]  # this start's
    assert set(state) == {
        "v",
        "clock",
        "board",
        "round",
        "table",
        "seq",
        "boot",
        "state",
        "run",
        "at_ms",
        "cap_s",
        "limit_s",
        "call",
        "start_ms",
        "ended",
        "pace",
        "A",
        "B",
    }
    assert (state["call"], state["start_ms"], state["ended"]) == (None, None, None)
    # what a likely end needs: each side's time used now, and the game's pace (clock/pace.py)
    assert [state[side]["used_ms"] for side in "AB"] == [record[side]["used_ms"] for side in "AB"]
    assert state["pace"] == {
        side: {key: int(done.get(key, 0)) for key in ("turns", "used_ms", "base_ms", "last")}
        for side, done in pace(
            records[next(i for i, r in enumerate(records) if r["ev"] == "new_game") :]
        ).items()
    }
    clocks.close()


def test_a_spectator_reads_nothing_private_and_publishes_nothing(broker, viewers_broker, tmp_path):
    # past the door, which closes a spectator at such a SUBSCRIBE or any PUBLISH
    # (tests/test_viewers_door.py): what mosquitto's own ACL holds, should a client reach it
    nosy = Spectator(
        viewers_broker, "director", subscribe=("#", "tileclock/#", "$SYS/#"), behind_the_door=True
    )
    honest = Spectator(viewers_broker, "viewer-1")
    wait_for(lambda: honest.bridged()[-1:] == [b"1"], what="the bridge")
    director = Listener(broker)  # signed in as `director`, its client id that too (as `tileclock hall`)
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    clocks.play(3)
    director.client.publish("tileclock/c1/cmd", "status", qos=0)
    reference = Reference(director)
    published_through(clocks, reference)
    # a spectator's publishes: a false state, a command; none reaches anyone (at QoS 0: one at
    # QoS 1 or 2 is past the listener's `max_qos 0`, and mosquitto drops its client)
    for name in ("tileclock/c1/public", "tileclock/c1/cmd", "tileclock/all/cmd", "tileclock/viewers/bridge"):
        nosy.client.publish(name, "round over", qos=0, retain=True).wait_for_publish(5)
    clocks.play(1)
    published_through(clocks, reference)
    wait_for(lambda: len(honest.public().get("c1", [])) >= 4, what="the honest viewer's states")
    assert nosy.topics() <= {"tileclock/c1/public", "tileclock/c1/status", "tileclock/viewers/bridge"}
    assert all(
        payload != b"round over" for _, payload, _ in nosy.messages + honest.messages + director.messages
    )
    assert not [r for r in clocks.sims["c1"].journal.records() if r["ev"] == "error"]
    # a spectator named `director` on its own broker pushes nobody off the hall's broker
    assert director.client.is_connected() and director.payloads("tileclock/c1/records")
    clocks.close()


def test_no_one_signs_in_anonymously_to_the_hall_broker_or_the_bridge_port(broker, viewers_broker):
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="anon")
    refused = []
    client.on_connect = lambda c, u, f, reason, p: refused.append(reason.is_failure)
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    wait_for(lambda: refused, what="the hall's broker to answer")
    client.loop_stop()
    assert refused == [True]
    assert BROKER_USERS["viewers"] not in viewers_broker.config.read_text().split("listener")[1]


def public_states(records):
    """The public state after each record of one game, as the clock would publish it."""
    scene, states = PublicScene(), []
    for record in records:
        scene.take(record)
        text = public_text("c1", "12", {}, scene, record, 0, SIM_EPOCH_NS)
        states.append((record, json.loads(text) if text else None))
    return states


def test_each_side_says_whether_its_time_runs_as_the_clock_charges_it(sim):
    # school rules: absence runs no clock, so after a late start nothing counts down (the panels
    # show 25:00 / 25:00 a minute on); NASPA: both absent sides run
    for rules, runs in (("school", (False, False)), ("naspa", (True, True))):
        records = sim("1 send late both\n61 until\n", "--rules", rules)
        record, state = next((r, s) for r, s in public_states(records) if r["ev"] == "late_start")
        assert (state["state"], state["run"]) == ("running", None)
        assert (state["A"]["runs"], state["B"]["runs"]) == runs, rules
        # the round's limit, which ends a school round at the latest (NASPA has none: its cap does)
        assert state["limit_s"] == {"school": 3000, "naspa": None}[rules]
    records = sim("1 press B\n9 press A\n12 press STOP\n")
    after = {r["ev"]: s for r, s in public_states(records)}
    assert (after["start"]["A"]["runs"], after["start"]["B"]["runs"]) == (True, False)
    assert (after["switch"]["A"]["runs"], after["switch"]["B"]["runs"]) == (False, True)
    assert (after["pause"]["A"]["runs"], after["pause"]["B"]["runs"]) == (False, False)


def test_the_bridge_s_config_is_never_readable_by_others_even_for_a_moment(tmp_path, monkeypatch):
    # only the mode it is created with counts: any chmod after the password is written is too late
    for name in ("chmod", "fchmod"):
        monkeypatch.setattr(os, name, lambda *args, **kwargs: None)
    monkeypatch.setattr(Path, "chmod", lambda *args, **kwargs: None)
    old = os.umask(0o022)
    try:
        (tmp_path / "setup").mkdir()
        write_setup(tmp_path / "setup", "s3cret")
        demo = ViewersBroker(tmp_path / "demo", 1883, "s3cret")
    finally:
        os.umask(old)
    for path in (tmp_path / "setup" / "tileclock-viewers.conf", demo.config):
        assert "s3cret" in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o600, path
