"""The spectators' broker's limits through the real mosquitto (Debian's 2.0.11): an anonymous
client on its WebSockets listener cannot make it read a big packet, nor grow it without bound by
subscribing, and each listener is open only on the address its config asks for (docs/hall.md,
"What the hall trusts", "The spectators' broker")."""

import re
import shutil
import subprocess
import threading

import paho.mqtt.client as mqtt
import pytest

from hall_helpers import wait_for

MIB = 1024 * 1024


def rss_bytes(pid):
    """The process's resident memory now (VmRSS)."""
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


class Anonymous:
    """A client of the spectators' broker, as anyone on the hall's Wi-Fi: MQTT over WebSockets,
    no user name; `gone` is set when the broker drops it."""

    def __init__(self, port, client_id):
        self.gone = threading.Event()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, transport="websockets"
        )
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


def listening(pid):
    """The addresses (host:port) process `pid` listens on for TCP, as `ss -ltnp` shows them."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[3] for line in out.splitlines() if f"pid={pid}," in line)


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs iproute2's ss")
def test_each_listener_is_open_only_on_the_address_its_config_asks_for(viewers_broker):
    # before `socket_domain ipv4` the WebSockets listener asked for 127.0.0.1 and was on *:PORT
    asked = re.findall(r"^listener (\d+) (\S+)$", viewers_broker.config.read_text(), re.M)
    assert len(asked) == 2 and {host for _, host in asked} == {"127.0.0.1"}
    assert listening(viewers_broker.process.pid) == sorted(f"{host}:{port}" for port, host in asked)
