"""The director's connection to the hall's broker (docs/hall.md), for `HallFeed` (`feed.py`).

One paho client, as the `director` user with a persistent session (the broker keeps what it
queued while the director was away), over TLS when a CA is given (`--tls-ca`); it reconnects on
its own, subscribes to every clock's records, state and status each time it is taken in, and
says where it stands: connected, down (why), or refused (the broker's reason). Each message is
handed on as it arrives (`on_message`, on paho's thread), acknowledged by hand once the store has
it (`client.ack`); every change of standing is told (`on_change`).
"""

import threading
import time

import paho.mqtt.client as mqtt

from ...wire.topics import DIRECTOR, ROOT

#: the director's client id on the broker, its user name (the broker ties the two): one persistent session
CLIENT_ID = DIRECTOR
#: the page's and the console's words for a hall without TLS (no --tls-ca): a director turned it off
IN_THE_CLEAR = (
    "NOT ENCRYPTED: the broker is reached without TLS (no --tls-ca): passwords, score codes and "
    "commands can be read on the Wi-Fi"
)
#: how long `tileclock hall` waits at its start for the broker to take it in, or refuse it
FIRST_CONNECT_S = 10.0


class HallConnection:
    """The director's paho client on the broker at `host`:`port`, and where it stands."""

    def __init__(
        self,
        host,
        port,
        password,
        on_message,
        on_change=lambda: None,
        user=DIRECTOR,
        client_id=CLIENT_ID,
        tls_ca=None,
    ):
        self.host, self.port = host, port
        self.on_change = on_change
        self.connected = threading.Event()
        self.down = "not connected yet"
        self.refused = None  # the broker's reason, when it refused the director's login
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False)
        client.username_pw_set(user, password or None)
        if tls_ca:
            client.tls_set(ca_certs=tls_ca)
        #: what the page says while the director's own connection is in the clear, or None (TLS)
        self.in_the_clear = None if tls_ca else IN_THE_CLEAR
        client.manual_ack_set(True)  # a record is acknowledged once the store has it
        client.reconnect_delay_set(min_delay=1, max_delay=10)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = lambda c, u, message: on_message(message)
        self.client = client

    def start(self):
        """Connect in the background (and keep reconnecting)."""
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()
        return self

    def wait_first(self, timeout_s=FIRST_CONNECT_S):
        """Wait up to `timeout_s` for the broker to take the director in or refuse it (`refused`);
        after that, the client goes on trying in the background."""
        deadline = time.monotonic() + timeout_s
        while not self.connected.wait(0.05) and self.refused is None and time.monotonic() < deadline:
            pass

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()

    # --- paho's thread

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self.refused = str(reason_code)
            self.down = f"broker {self.host}:{self.port} refused: {reason_code}"
            return
        self.refused = None
        self.down = None
        client.subscribe([(f"{ROOT}/+/records", 1), (f"{ROOT}/+/state", 1), (f"{ROOT}/+/status", 1)])
        self.connected.set()
        self.on_change()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.connected.clear()
        self.down = f"broker {self.host}:{self.port} lost: {reason_code}"
        self.on_change()
