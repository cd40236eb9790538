"""The spectators' broker: a second mosquitto that bridges the hall's public topics to anyone
(docs/hall.md, "Spectators").

The hall's broker takes no anonymous client at all: a client id is global on a broker, so an
anonymous client there could connect as `director` or as a clock and push it off. The spectators
connect to this broker instead, through the spectators' door (`director/pages/spectators.py`), which
serves their pages and relays their MQTT over WebSockets to this broker's one listener for them, on
127.0.0.1, bounding each spectator's packets, subscriptions and connections on the way. It signs in to the hall's broker as `viewers`, which may read only
the public topics and statuses (the hall's ACL), and brings them in (a bridge `in` only: nothing
goes back). Anyone here may read those and nothing else, and publish nothing (`viewers.acl`).
Every viewer costs this broker, never `tileclock hall`: the hall's broker sends each public state
once, to the bridge.
"""

import os
import secrets
import shutil
from pathlib import Path

from ...wire.state import MAX_STATE_BYTES
from ...wire.topics import BRIDGE_TOPIC, VIEWERS
from .broker import SHIPPED, LocalBroker, free_port, write_private

#: the spectators' door's port (its pages and their WebSockets), by default
WEB_PORT = 8081
#: the port of the spectators' broker's one listener for the spectators, on 127.0.0.1: only the
#: spectators' door (`director/pages/spectators.py`) reaches it, and relays each phone to it
MQTT_PORT = 1884
#: the most heap the spectators' broker may take (mosquitto's `memory_limit`), in bytes: behind the
#: door's own limits, a client whose packet or subscription would pass it is disconnected. A
#: spectator costs it about 1 KiB (5,000 of them 5 MiB), an 8 MiB packet more than all of it
#: (docs/hall.md, "The spectators' door").
MEMORY_LIMIT = 8 * 1024 * 1024
#: the largest packet the bridge takes: above the hall's broker's 1 MiB, for a packet past it drops
#: the bridge, and a retained one would drop it again at each reconnection (the spectators' boards
#: `STALE` for good); what is too big for the pages goes by `message_size_limit` instead
MAX_PACKET = 2 * 1024 * 1024
#: the longest keepalive an MQTT v5 client of the spectators' broker is let keep, in seconds
#: (mosquitto's `max_keepalive`: one asking for more, or for none, is told this one in its CONNACK;
#: 2.0.11 takes a v3.1.1 client's keepalive as it asks, none included)
MAX_KEEPALIVE = 60


def config_text(hall_host, hall_port, password, mqtt_port, acl_file, bridge_id, extra=(), hall_ca=None):
    """The spectators' broker's config: its one listener (127.0.0.1:`mqtt_port`, for the
    spectators' door), the ACL, the limits, and the bridge from the hall's broker (the bridge
    last: what follows `connection` is the bridge's); `extra` global lines. With `hall_ca` (the
    hall's CA file) the bridge speaks TLS, checking the hall broker by it."""
    return "\n".join(
        [
            '# The spectators\' broker for tileclock (docs/hall.md, "Spectators"): `tileclock hall-setup` writes it.',
            "# Run it beside the hall's: mosquitto -c /etc/mosquitto/tileclock-viewers.conf",
            "per_listener_settings true",
            "# The spectators, relayed by the spectators' door (`tileclock spectators`), which serves their",
            "# pages, bounds each one's packets, subscriptions and connections, and alone reaches this",
            "# listener: anyone, no login, read only (the ACL).",
            f"listener {mqtt_port} 127.0.0.1",
            "allow_anonymous true",
            f"acl_file {acl_file}",
            "max_connections 5000",
            "# the pages subscribe at QoS 0: no client here is granted more, so none has messages in flight",
            "# or queued for it while away",
            "max_qos 0",
            "",
            "# Nothing kept: every state comes again from the hall's broker (retained there).",
            "persistence false",
            "set_tcp_nodelay true",
            "# above the hall's 1 MiB, so a packet the hall's broker took never drops the bridge (the door",
            "# takes 1 KiB from a spectator)",
            f"max_packet_size {MAX_PACKET}",
            "# the heap is capped besides the door's limits: an allocation past it disconnects its client",
            f"memory_limit {MEMORY_LIMIT}",
            "# the pages drop a state over 4 KiB: one bigger (a clock's credentials may publish 1 MiB on",
            "# the hall's broker) is dropped here, from the bridge too, rather than sent to every phone",
            f"message_size_limit {MAX_STATE_BYTES}",
            "# a viewer that does not read (a phone asleep) is sent the newest states only",
            "max_queued_messages 100",
            "# an MQTT v5 client asking for no keepalive or more than a minute is told a minute (2.0.11 takes",
            "# a v3.1.1 client's as it asks, none included); the pages ping every 5 s",
            f"max_keepalive {MAX_KEEPALIVE}",
            "# a session left behind (clean session off: the pages never ask for one) is let go within the",
            "# hour, its subscriptions with it; the shortest mosquitto takes (no option refuses one)",
            "persistent_client_expiration 1h",
            *extra,
            "",
            "# The bridge: in only, the public topics and statuses (the hall's ACL lets `viewers` no more).",
            "connection tileclock-hall",
            f"address {hall_host}:{hall_port}",
            # the hall's broker has no plain port (docs/hall.md, "Encrypted on the Wi-Fi")
            *([f"bridge_cafile {hall_ca}"] if hall_ca else []),
            f"remote_username {VIEWERS}",
            f"remote_password {password}",
            f"remote_clientid {VIEWERS}",
            f"local_clientid {bridge_id}",
            "cleansession true",
            "bridge_protocol_version mqttv311",
            "keepalive_interval 10",
            "restart_timeout 1 10",
            "topic tileclock/+/public in 1",
            "topic tileclock/+/status in 1",
            "notifications true",
            "notifications_local_only true",
            f"notification_topic {BRIDGE_TOPIC}",
            "",
        ]
    )


def write_setup(
    folder, password, hall_host="127.0.0.1", hall_port=8883, hall_ca="/etc/mosquitto/certs/tileclock-ca.pem"
):
    """Write tileclock-viewers.conf and tileclock-viewers.acl for `/etc/mosquitto/` (docs/hall.md,
    "Spectators"): its listener on 127.0.0.1:`MQTT_PORT`, for `tileclock spectators`; the bridge to
    the hall's broker over TLS, checked by `hall_ca` (None: in the clear)."""
    folder = Path(folder)
    shutil.copy(SHIPPED / "viewers.acl", folder / "tileclock-viewers.acl")
    text = config_text(
        hall_host,
        hall_port,
        password,
        MQTT_PORT,
        "/etc/mosquitto/tileclock-viewers.acl",
        f"viewers-bridge-{secrets.token_hex(8)}",
        hall_ca=hall_ca,
    )
    write_private(folder / "tileclock-viewers.conf", text)


class ViewersBroker(LocalBroker):
    """The spectators' broker behind its door: the door on 127.0.0.1:`port` (the pages and their
    WebSockets), mosquitto on 127.0.0.1:`mqtt_port` behind it, bridged from the hall's broker on
    `hall_port` as `viewers` with `password`, kept in `folder`; over TLS checked by `hall_ca` (a
    `LocalBroker`'s `ca_file`) when given. `process` is mosquitto's."""

    def __init__(self, folder, hall_port, password, port=None, hall_ca=None):
        # not LocalBroker.__init__, which writes a hall broker's passwords and ACL; its start and stop serve
        self._place(folder, port)
        self.mqtt_port = free_port()
        self.door = None
        shutil.copy(SHIPPED / "viewers.acl", self.folder / "viewers.acl")
        text = config_text(
            "127.0.0.1",
            hall_port,
            password,
            self.mqtt_port,
            self.folder / "viewers.acl",
            f"viewers-bridge-{secrets.token_hex(8)}",
            extra=[
                f"log_dest file {self.folder / 'mosquitto.log'}",
                # started as root, mosquitto drops to user mosquitto, who cannot write this folder
                "user root" if os.geteuid() == 0 else "",
            ],
            hall_ca=hall_ca,
        )
        self.config = self.folder / "viewers.conf"
        write_private(self.config, text)

    @property
    def ready_port(self):
        """mosquitto's own port, the one its start waits for."""
        return self.mqtt_port

    def start(self, timeout_s=10.0):
        """Start mosquitto, then the spectators' door in front of it (a thread of this process)."""
        from ..pages.spectators import SpectatorsDoor  # the director's extra: Starlette, uvicorn

        super().start(timeout_s)
        try:
            self.door = SpectatorsDoor(self.mqtt_port, "127.0.0.1", self.port).start()
        except OSError:
            super().stop()
            raise
        return self

    def stop(self, kill=False):
        """Stop the door, then mosquitto (`kill`: SIGKILL)."""
        if self.door is not None:
            self.door.close()
            self.door = None
        super().stop(kill)

    @property
    def address(self):
        """The spectators' page."""
        return f"http://127.0.0.1:{self.port}/"
