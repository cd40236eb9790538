"""The spectators' door through the real relay and the real mosquitto (docs/hall.md, "The
spectators' door"): each limit hit by a hostile client on the hall's Wi-Fi closes it with its
reason, and the spectators' page goes on answering, and sending states, to everyone else; and
every page carries the doors' headers (no framing, no foreign script)."""

import http.client
import socket

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from support.hall_helpers import Listener, Spectator, wait_for
from tileclock.director.pages import spectators
from tileclock.director.pages.spectators import (
    MAX_FILTERS,
    MAX_PACKET,
    MAX_PER_ADDRESS,
    MAX_SUBSCRIBES,
    PAGES,
)


def packet(kind, body):
    """An MQTT control packet: its fixed header (type, remaining length) and `body`."""
    length, encoded = len(body), bytearray()
    while True:
        byte, length = length % 128, length // 128
        encoded.append(byte | (0x80 if length else 0))
        if not length:
            return bytes([kind]) + bytes(encoded) + body


def text(value):
    """An MQTT UTF-8 string: its two-byte length, then it."""
    return len(value).to_bytes(2, "big") + value.encode()


def connect_packet(client_id, flags=0x02):
    """A v3.1.1 CONNECT (clean session, a minute's keepalive) as `client_id`."""
    return packet(0x10, text("MQTT") + bytes([4, flags]) + (60).to_bytes(2, "big") + text(client_id))


def subscribe_packet(*filters, packet_id=1):
    """A v3.1.1 SUBSCRIBE of `filters`, each at QoS 0."""
    return packet(0x82, packet_id.to_bytes(2, "big") + b"".join(text(f) + b"\x00" for f in filters))


class Hostile:
    """A client of the door that writes MQTT by hand over a WebSocket, as anyone on the hall's
    Wi-Fi may; connected (CONNACK read) unless `connected` is False."""

    def __init__(self, door, client_id="hostile", connected=True, source="127.0.0.1"):
        sock = socket.create_connection(("127.0.0.1", door.port), source_address=(source, 0))
        opened = connect(f"ws://127.0.0.1:{door.port}/", sock=sock, subprotocols=["mqtt"], open_timeout=5)
        self.ws = opened.__enter__()  # its context is this client's life: the door or the test closes it
        if connected:
            self.ws.send(connect_packet(client_id))
            assert self.ws.recv(5) == b"\x20\x02\x00\x00"  # CONNACK: accepted

    def closed(self, *sent):
        """Send `sent` (packets, or raw bytes), then the door's close: (its code, its reason)."""
        try:
            for data in sent:
                self.ws.send(data)
            while True:
                self.ws.recv(5)
        except ConnectionClosed as closed:
            if closed.rcvd is None:  # reset before the door's close frame was read
                return None, None
            return closed.rcvd.code, closed.rcvd.reason


@pytest.fixture
def watched(broker, viewers_broker):
    """The spectators' broker behind its door, with an honest spectator seeing the bridge up."""
    honest = Spectator(viewers_broker, "viewer-1")
    wait_for(lambda: honest.bridged()[-1:] == [b"1"], what="the bridge")
    yield viewers_broker, honest
    honest.close()


def still_served(broker, viewers_broker, honest, clock):
    """The page answers, and a new state reaches the honest spectator: nobody else was hurt."""
    page = http.client.HTTPConnection("127.0.0.1", viewers_broker.port, timeout=5)
    page.request("GET", "/")
    assert page.getresponse().status == 200
    page.close()
    sender = Listener(broker, user=clock, client_id=clock, subscribe=None)
    sender.client.publish(f"tileclock/{clock}/public", b"{}", qos=1).wait_for_publish(5)
    sender.close()
    wait_for(lambda: f"tileclock/{clock}/public" in honest.topics(), what="a state to the honest spectator")
    assert honest.client.is_connected()


def test_a_packet_past_the_cap_is_refused_before_its_body(broker, watched):
    viewers_broker, honest = watched
    # announced 8 MiB, and sent only the header: refused on its length, nothing held
    announced = Hostile(viewers_broker)
    assert announced.closed(b"\x30\x80\x80\x80\x04") == (1008, f"packet over {MAX_PACKET} bytes")
    # a whole frame of 8 MiB: refused on its header by the WebSocket's own cap (1009), the rest
    # never read: a client still writing it gets a reset (the kernel's answer to a socket closed
    # with bytes unread) before it reads the close frame
    big = Hostile(viewers_broker)
    assert big.closed(packet(0x30, text("tileclock/c1/public") + b"x" * (8 << 20)))[0] in (1009, None)
    # a SUBSCRIBE just past the cap, of topics the pages may read
    long = Hostile(viewers_broker)
    name = "tileclock/" + "c" * MAX_PACKET + "/public"
    assert long.closed(subscribe_packet(name)) == (1008, f"packet over {MAX_PACKET} bytes")
    still_served(broker, viewers_broker, honest, "c1")


def test_a_spectator_that_publishes_is_closed(broker, watched):
    viewers_broker, honest = watched
    for data in (
        packet(0x30, text("tileclock/c1/public") + b"round over"),  # a false state
        packet(0x31, text("tileclock/all/cmd") + b"round over"),  # a command, retained
    ):
        assert Hostile(viewers_broker).closed(data) == (1008, "read only: a spectator publishes nothing")
    # a will is a publish left for later
    willing = Hostile(viewers_broker, connected=False)
    will = text("MQTT") + bytes([4, 0x06]) + (60).to_bytes(2, "big") + text("w")
    assert willing.closed(packet(0x10, will + text("tileclock/c1/public") + text("x"))) == (
        1008,
        "read only: no will",
    )
    still_served(broker, viewers_broker, honest, "c2")
    assert all(payload != b"round over" for _, payload, _ in honest.messages)


def test_subscriptions_are_bounded_to_the_pages_topics_and_their_count(broker, watched):
    viewers_broker, honest = watched
    for wide in ("#", "tileclock/#", "$SYS/#", "tileclock/c1/records", "tileclock/+/cmd"):
        got = Hostile(viewers_broker).closed(subscribe_packet(wide))
        assert got == (1008, "only the spectators' topics"), wide
    many = [f"tileclock/c{n}/public" for n in range(MAX_FILTERS + 1)]
    assert Hostile(viewers_broker).closed(subscribe_packet(*many)) == (
        1008,
        f"more than {MAX_FILTERS} topic filters",
    )
    repeated = [subscribe_packet("tileclock/+/public", packet_id=n + 1) for n in range(MAX_SUBSCRIBES + 1)]
    # the allowed ones are answered (SUBACK) as they go; the one past the count closes it
    assert Hostile(viewers_broker).closed(*repeated) == (1008, f"more than {MAX_SUBSCRIBES} SUBSCRIBEs")
    still_served(broker, viewers_broker, honest, "c3")


def test_mqtt_first_and_in_binary_frames(broker, watched, monkeypatch):
    viewers_broker, honest = watched
    assert Hostile(viewers_broker, connected=False).closed(subscribe_packet("#")) == (1008, "CONNECT first")
    assert Hostile(viewers_broker).closed("text") == (1008, "MQTT goes in binary frames")
    monkeypatch.setattr(spectators, "CONNECT_S", 0.2)  # the door runs in this process
    assert Hostile(viewers_broker, connected=False).closed() == (1008, "no CONNECT within 0.2 s")
    still_served(broker, viewers_broker, honest, "c4")


def test_one_address_holds_a_few_connections_and_the_others_are_served(broker, watched):
    viewers_broker, honest = watched  # the honest spectator holds one of 127.0.0.1's places
    held = [Hostile(viewers_broker, f"h{n}") for n in range(MAX_PER_ADDRESS - 1)]
    page = http.client.HTTPConnection("127.0.0.1", viewers_broker.port, timeout=5)
    page.request("GET", "/")
    refused = page.getresponse()
    assert (refused.status, refused.read()) == (503, b"too many connections from your address: later")
    # another phone (another address) is served, page and states
    other = socket.create_connection(("127.0.0.1", viewers_broker.port), source_address=("127.0.0.2", 0))
    other.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert other.recv(64).startswith(b"HTTP/1.1 200")
    other.close()
    again = Hostile(viewers_broker, "other", source="127.0.0.2")
    again.ws.send(subscribe_packet("tileclock/viewers/bridge"))
    assert again.ws.recv(5)[:1] == b"\x90"  # SUBACK
    for client in [*held, again]:
        client.ws.close()
    assert honest.client.is_connected()


def test_every_page_says_no_framing_and_no_foreign_script(viewers_broker):
    conn = http.client.HTTPConnection("127.0.0.1", viewers_broker.port, timeout=5)
    paths = ["/", *(f"/{path.name}" for path in PAGES.iterdir()), "/nothing-here"]
    for path in paths:
        conn.request("GET", path)
        answer = conn.getresponse()
        answer.read()
        policy = answer.getheader("content-security-policy") or ""
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy, path
        assert answer.getheader("x-frame-options") == "DENY", path
        assert answer.getheader("x-content-type-options") == "nosniff", path
        assert answer.status == (404 if path == "/nothing-here" else 200), path
    conn.close()
