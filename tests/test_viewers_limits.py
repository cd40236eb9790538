"""The spectators' broker's own limits through the real mosquitto (Debian's 2.0.11), behind its
door: a client that reached its loopback listener past the door (which bounds each spectator
first: tests/test_viewers_door.py) still cannot grow it past its heap's cap, and each listener is
open only on the address its config asks for (docs/hall.md, "What the hall trusts", "The
spectators' broker")."""

import os
import re
import shutil
import subprocess
import threading

import paho.mqtt.client as mqtt
import pytest

from support.hall_helpers import Listener, Spectator, wait_for
from tileclock.director.hall.viewers_broker import MAX_KEEPALIVE, MEMORY_LIMIT
from tileclock.wire.state import MAX_STATE_BYTES

MIB = 1024 * 1024


def rss_bytes(pid):
    """The process's resident memory now (VmRSS)."""
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


class Anonymous:
    """A client of the spectators' broker with no user name, on its loopback listener past the
    door (plain MQTT); `gone` is set when the broker drops it."""

    def __init__(self, port, client_id):
        self.gone = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        self.client.on_disconnect = lambda *args: self.gone.set()
        connected = threading.Event()
        self.client.on_connect = lambda *args: connected.set()
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        wait_for(connected.is_set, what=f"{client_id} to connect")
        self.subscribed = 0

    def subscribe_more(self, count, batch=200):
        """Subscribe to `count` more topics the ACL allows (tileclock/xN/public, each new), `batch`
        a packet, until done or dropped."""
        end = self.subscribed + count
        while self.subscribed < end and not self.gone.is_set():
            first = self.subscribed
            topics = [(f"tileclock/x{n}/public", 0) for n in range(first, first + batch)]
            if self.client.subscribe(topics)[0] != mqtt.MQTT_ERR_SUCCESS:
                break
            self.subscribed += batch

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def test_an_8_mib_packet_past_the_door_disconnects_its_client(viewers_broker):
    # mosquitto 2.0.11 never checked max_packet_size on its WebSockets listener (the door now takes
    # 1 KiB a packet): without the heap's cap it read all 8 MiB and kept the client
    honest = Spectator(viewers_broker, "viewer-1")
    wait_for(lambda: honest.bridged()[-1:] == [b"1"], what="the bridge")
    before = rss_bytes(viewers_broker.process.pid)
    big = Anonymous(viewers_broker.mqtt_port, "big")
    big.client.publish("tileclock/c1/public", b"x" * (8 * MIB), qos=0)
    wait_for(big.gone.is_set, 20, "the broker to drop the client of the 8 MiB packet")
    big.close()
    assert rss_bytes(viewers_broker.process.pid) - before < 4 * MIB  # never held the packet
    assert honest.client.is_connected()
    again = Spectator(viewers_broker, "viewer-2")  # the broker takes spectators still
    wait_for(lambda: again.bridged()[-1:] == [b"1"], what="a new spectator's bridge state")
    for spectator in (honest, again):
        spectator.close()


def test_one_client_s_flood_of_subscriptions_past_the_door_is_cut_off_at_the_heap_s_cap(viewers_broker):
    # measured before the cap: 60,000 subscriptions took 58 MB (about 1 KB each, whether or not
    # the ACL allows the topic), and the client was kept; the door takes 8 from a spectator
    honest = Spectator(viewers_broker, "viewer-1")
    wait_for(lambda: honest.bridged()[-1:] == [b"1"], what="the bridge")
    pid = viewers_broker.process.pid
    before = rss_bytes(pid)
    flood = Anonymous(viewers_broker.mqtt_port, "flood")
    peak = before
    while flood.subscribed < 30_000 and not flood.gone.is_set():
        flood.subscribe_more(1000)
        peak = max(peak, rss_bytes(pid))
    wait_for(flood.gone.is_set, 20, "the broker to drop the subscribing client")
    peak = max(peak, rss_bytes(pid))
    flood.close()
    assert peak - before < MEMORY_LIMIT + 4 * MIB, (flood.subscribed, peak - before)
    assert honest.client.is_connected()
    again = Spectator(viewers_broker, "viewer-2")
    wait_for(lambda: again.bridged()[-1:] == [b"1"], what="a new spectator's bridge state")
    for spectator in (honest, again):
        spectator.close()


def test_a_state_too_big_for_the_pages_reaches_no_spectator_and_keeps_the_bridge_up(broker, viewers_broker):
    # a clock's credentials may publish 1 MiB on the hall's broker. Before: a state over the
    # pages' 4 KiB went to every spectator, and one over 64 KiB, retained, dropped the bridge at
    # each reconnection, every board `STALE` for good
    spectator = Spectator(viewers_broker, "viewer-1")
    wait_for(lambda: spectator.bridged()[-1:] == [b"1"], what="the bridge")
    up = len(spectator.bridged())
    for clock, payload in (
        ("c1", b"{" + b" " * MAX_STATE_BYTES + b"}"),
        ("c2", b"x" * 500_000),
        ("c3", b"{}"),
    ):
        sender = Listener(broker, user=clock, client_id=clock, subscribe=None)
        sender.client.publish(f"tileclock/{clock}/public", payload, qos=1, retain=True).wait_for_publish(5)
        sender.close()
    wait_for(lambda: "tileclock/c3/public" in spectator.topics(), what="the small state")
    # a state sent after the big ones, once the bridge has taken them: it arrives only through a
    # bridge that did not drop (a drop shows on the bridge's own topic, asserted below)
    marker = Listener(broker, user="c4", client_id="c4", subscribe=None)
    marker.client.publish("tileclock/c4/public", b"{}", qos=1, retain=True).wait_for_publish(5)
    marker.close()
    wait_for(lambda: "tileclock/c4/public" in spectator.topics(), what="a state after the big ones")
    assert spectator.topics() == {"tileclock/viewers/bridge", "tileclock/c3/public", "tileclock/c4/public"}
    assert spectator.bridged()[up:] == []  # never down
    spectator.close()


def listening(pid):
    """The addresses (host:port) process `pid` listens on for TCP, as `ss -ltnp` shows them."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[3] for line in out.splitlines() if f"pid={pid}," in line)


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs iproute2's ss")
def test_each_listener_is_open_only_on_the_address_its_config_asks_for(viewers_broker):
    # mosquitto's WebSockets listener, asked for 127.0.0.1, was on *:PORT (libwebsockets); now
    # mosquitto has one plain listener, on loopback, and the door listens where it is told
    asked = re.findall(r"^listener (\d+) (\S+)$", viewers_broker.config.read_text(), re.M)
    assert asked == [(str(viewers_broker.mqtt_port), "127.0.0.1")]
    assert listening(viewers_broker.process.pid) == [f"127.0.0.1:{viewers_broker.mqtt_port}"]
    assert f"127.0.0.1:{viewers_broker.port}" in listening(os.getpid())  # the door, in this process
    assert f"*:{viewers_broker.port}" not in listening(os.getpid())


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_many_clients_flooding_past_the_door_at_once_leave_the_heap_capped(viewers_broker):
    # the larger measurement: four clients, each after 60,000 subscriptions, and two 8 MiB packets
    pid = viewers_broker.process.pid
    before = rss_bytes(pid)
    floods = [Anonymous(viewers_broker.mqtt_port, f"flood-{n}") for n in range(4)]
    peak = before
    while any(f.subscribed < 60_000 and not f.gone.is_set() for f in floods):
        for flood in floods:
            flood.subscribe_more(1000)
        peak = max(peak, rss_bytes(pid))
    bigs = [Anonymous(viewers_broker.mqtt_port, f"big-{n}") for n in range(2)]
    for big in bigs:
        big.client.publish("tileclock/c1/public", b"x" * (8 * MIB), qos=0)
    for client in floods + bigs:
        wait_for(client.gone.is_set, 30, "the broker to drop each flooding client")
        peak = max(peak, rss_bytes(pid))
        client.close()
    print(
        f"\nspectators' broker, resident: {before / MIB:.1f} MiB before, {peak / MIB:.1f} MiB at most "
        f"under {len(floods)} floods of subscriptions (up to {max(f.subscribed for f in floods):,} "
        f"sent by one) and {len(bigs)} 8 MiB packets; the heap's cap {MEMORY_LIMIT / MIB:.0f} MiB"
    )
    assert peak - before < MEMORY_LIMIT + 8 * MIB
    again = Spectator(viewers_broker, "viewer-after")
    wait_for(lambda: again.bridged()[-1:] == [b"1"], what="a new spectator's bridge state")
    again.close()


class Durable:
    """A client of the spectators' broker that asks to keep its session (clean session off), as a
    hostile one may: `granted` the QoS each subscription got, `got` the topics it was sent."""

    def __init__(self, port, client_id):
        self.granted, self.got, self.present = [], [], []
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, transport="websockets", clean_session=False
        )
        self.client.on_connect = lambda c, u, flags, rc, p: self.present.append(flags.session_present)
        self.client.on_subscribe = lambda c, u, mid, codes, p: self.granted.extend(codes)
        self.client.on_message = lambda c, u, message: self.got.append(message.topic)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        wait_for(lambda: self.present, what=f"{client_id} to connect")

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def publish(broker, clock, payload=b"{}"):
    """`clock` publishes its public state (not retained) on the hall's broker."""
    sender = Listener(broker, user=clock, client_id=clock, subscribe=None)
    sender.client.publish(f"tileclock/{clock}/public", payload, qos=1).wait_for_publish(5)
    sender.close()


def test_a_session_left_behind_is_kept_no_state_while_away(broker, viewers_broker):
    # before `max_qos 0`: a client asking for QoS 2 got it, and every state bridged while it was
    # away (up to 100 a session) was queued for it in the broker's heap
    spectator = Spectator(viewers_broker, "viewer-1")
    wait_for(lambda: spectator.bridged()[-1:] == [b"1"], what="the bridge")
    away = Durable(viewers_broker.port, "away")
    away.client.subscribe([("tileclock/+/public", 2)])
    wait_for(lambda: away.granted, what="the subscription's answer")
    assert [code.value for code in away.granted] == [0]  # QoS 0, whatever it asked
    away.close()
    publish(broker, "c1")
    wait_for(lambda: "tileclock/c1/public" in spectator.topics(), what="the state to a spectator")
    back = Durable(viewers_broker.port, "away")
    assert back.present == [True]  # its session (and its subscription) kept: up to the hour
    publish(broker, "c2")  # sent after it came back: whatever was queued came before it
    wait_for(lambda: "tileclock/c2/public" in back.got, what="a state sent once it is back")
    assert back.got == ["tileclock/c2/public"]  # c1's, sent while it was away, was never kept
    back.close()
    spectator.close()


def test_an_mqtt_5_client_asking_for_no_keepalive_is_told_a_minute(viewers_broker):
    # a client gone from the Wi-Fi holds its connection until its keepalive runs out: none is never
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2, client_id="still", transport="websockets", protocol=mqtt.MQTTv5
    )
    told = []
    client.on_connect = lambda c, u, flags, rc, properties: told.append(properties)
    client.connect("127.0.0.1", viewers_broker.port, keepalive=0)
    client.loop_start()
    wait_for(lambda: told, what="the CONNACK")
    client.disconnect()
    client.loop_stop()
    assert told[0].ServerKeepAlive == MAX_KEEPALIVE
