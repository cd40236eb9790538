"""Commands on the hall's broker are sealed (wire/seal.py): a captured command published again, a
forged one or an unsealed one is refused by the clock and recorded as refused; a real mosquitto."""

import secrets
import tomllib
from dataclasses import replace

import paho.mqtt.client as mqtt
import pytest

from conftest import BROKER_USERS, tap
from hall_helpers import hall_config, wait_for
from tileclock.device.config import Config, ConfigError, parse_config
from tileclock.director.hall.feed import HallFeed
from tileclock.sim.simulator import Simulator
from tileclock.wire.seal import Sealer, SealError, read_keys, seal, unseal

KEY = secrets.token_hex(32)


def test_a_sealed_command_opens_once_for_its_own_clock_only():
    key = bytes.fromhex(KEY)
    line = seal(key, "c1", 7, "round over*1234abcd").encode()
    assert unseal(key, "c1", line, 6) == (7, b"round over*1234abcd")
    with pytest.raises(SealError, match="replayed"):
        unseal(key, "c1", line, 7)
    with pytest.raises(SealError, match="not this clock's key"):
        unseal(key, "c2", line, 0)  # sealed for c1
    with pytest.raises(SealError, match="not this clock's key"):
        unseal(bytes(32), "c1", line, 0)
    with pytest.raises(SealError, match="not this clock's key"):
        unseal(key, "c1", line.replace(b"sig 7 ", b"sig 8 "), 7)  # a counter raised by hand
    with pytest.raises(SealError, match="without this clock's seal"):
        unseal(key, "c1", b"round over*1234abcd", 0)


def test_the_directors_counter_only_rises_even_when_its_clock_stands_still():
    sealer = Sealer({"c1": bytes.fromhex(KEY)})
    counters = [int(sealer.line("c1", "status", 1000).split()[1]) for _ in range(3)]
    assert counters == [1000, 1001, 1002]
    assert sealer.line("c9", "status", 5000) == "status"  # no key for it: as it is


def test_a_key_in_the_config_must_be_hall_setups_64_hex_digits():
    text = '[clock]\nid = "c1"\n[hall]\nbroker = "127.0.0.1"\nkey = "%s"\n'
    assert parse_config(tomllib.loads(text % KEY)).hall.key == KEY
    with pytest.raises(ConfigError, match="hall.key"):
        parse_config(tomllib.loads(text % "secret"))
    with pytest.raises(ValueError, match="line 2"):
        read_keys(f"c1 {KEY}\nc2 short\n")


@pytest.fixture
def sealed_hall(broker, tmp_path):
    config = replace(Config(clock_id="c1"), hall=replace(hall_config(broker, "c1"), key=KEY))
    sim = Simulator(config, state_dir=str(tmp_path / "c1"), refresh_on_ticks=False)
    feed = HallFeed(
        "127.0.0.1", broker.port, BROKER_USERS["director"], str(tmp_path / "out"), keys=read_keys(f"c1 {KEY}")
    ).start()
    wait_for(lambda: feed.connected.is_set() and sim.uplink._connected, what="both online")
    tap(sim, "B", 1)
    tap(sim, "STOP", 5)  # a stopped clock: a director's correction applies
    yield sim, feed
    feed.close()
    sim.close()


def adjustments(sim):
    return [r for r in sim.journal.records() if r["ev"] == "adjust"]


def refusals(sim):
    return [r["detail"] for r in sim.journal.records() if r["ev"] == "error"]


def test_a_captured_command_published_again_is_refused_and_recorded(sealed_hall, broker):
    sim, feed = sealed_hall
    captured = []
    publish = feed.client.publish
    feed.client.publish = lambda name, payload, **kw: (
        captured.append(payload),
        publish(name, payload, **kw),
    )[1]
    feed.command("adjust A +60000", "c1")
    wait_for(lambda: (sim.daemon.pump(sim.time()), adjustments(sim))[1], what="the director's adjust")
    # an eavesdropper with the director's login publishes the same bytes three times
    feed.client.disconnect()
    feed.client.loop_stop()
    thief = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    thief.username_pw_set("director", BROKER_USERS["director"])
    thief.connect("127.0.0.1", broker.port)
    thief.loop_start()
    wait_for(thief.is_connected, what="the thief online")
    for _ in range(3):
        thief.publish("tileclock/c1/cmd", captured[0], qos=1).wait_for_publish(5)
    thief.publish(
        "tileclock/c1/cmd", "adjust A +60000*" + captured[0].rsplit("*", 1)[1], qos=1
    ).wait_for_publish(5)
    wait_for(lambda: (sim.daemon.pump(sim.time()), refusals(sim))[1], what="the refusal")
    sim.daemon.pump(sim.time() + 10**9)
    assert len(adjustments(sim)) == 1  # applied once, as the director sent it
    assert any("replayed command" in detail for detail in refusals(sim))
    thief.loop_stop()


def test_an_unsealed_or_forged_command_is_refused(sealed_hall):
    sim, feed = sealed_hall
    feed.sealer.keys["c1"] = bytes(32)  # the wrong key: a forger's
    feed.command("adjust A +60000", "c1")
    feed.sealer.keys.clear()  # and none: the CRC alone, as before
    feed.command("adjust B +60000", "c1")
    wait_for(lambda: (sim.daemon.pump(sim.time()), len(refusals(sim)) >= 1)[1], what="the refusals")
    sim.daemon.pump(sim.time() + 10**9)
    assert adjustments(sim) == []
    assert any("not this clock's key" in d or "without this clock's seal" in d for d in refusals(sim))
