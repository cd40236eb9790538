"""The spectators' door (docs/hall.md, "Spectators", "The spectators' door"): the spectators'
pages, and their MQTT over WebSockets relayed to the spectators' mosquitto on loopback.

mosquitto 2.0.11 serves neither well to anyone on the hall's Wi-Fi: its `http_dir` sends no header
(no page could forbid framing), and its WebSockets listener reads a packet of any length, bounds
no client's subscriptions and no address's connections. So the pages are served here, with the
hall's doors' headers (`doors.HEADERS`), and each spectator's WebSocket is relayed, packet by
packet, to mosquitto's plain listener on 127.0.0.1, which no one else reaches. The relay reads each
packet's fixed header (its type and remaining length: MQTT 3.1.1 and 5, section 2), CONNECT's
protocol level and flags, and SUBSCRIBE's topic filters, and closes the WebSocket (1008, with the
reason) on a packet over `MAX_PACKET` (as soon as its length is read, before its body), a PUBLISH
or a will (the pages are read only), a filter other than the pages' own topics, more than
`MAX_SUBSCRIBES` SUBSCRIBEs or `MAX_FILTERS` filters on one connection, or no CONNECT within
`CONNECT_S`; one address holds at most `MAX_PER_ADDRESS` connections (pages and WebSockets
together: one more is answered 503). What mosquitto sends is relayed as it is, paced by the
phone's reading (uvicorn's WebSocket waits while its buffer is full).

The WebSocket itself is the `websockets` package's sans-I/O protocol under uvicorn (the one uvicorn
names `websockets-sansio`): frames, masks, pings and the closing handshake are a well-kept library's,
its `max_size` refuses a frame bigger than any packet taken before it is kept, and compression is off
(no small frame inflates into a big one).
"""

import asyncio
import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocketDisconnect

from ...wire.topics import BRIDGE_TOPIC, ROOT
from .door import Door
from .doors import AddressLimits, SecurityHeaders
from .guard import TimedH11

#: the spectators' pages and the browser's MQTT client
PAGES = Path(__file__).parent / "viewers"
#: the largest packet a spectator may send, in bytes: the pages' CONNECT is about 30 bytes and their
#: one SUBSCRIBE about 70 (mosquitto takes 2 MiB from the bridge, and over WebSockets any length)
MAX_PACKET = 1024
#: SUBSCRIBE packets one connection may send (the pages send one; a reconnection is a new connection)
MAX_SUBSCRIBES = 4
#: topic filters one connection may ask for, in all its SUBSCRIBEs (the pages ask for three)
MAX_FILTERS = 8
#: connections one client address may hold open, pages and WebSockets together (a phone holds two)
MAX_PER_ADDRESS = 16
#: page requests one address may make a second, in bursts of this many (a page load is a handful)
PER_ADDRESS_PER_S, PER_ADDRESS_BURST = 10, 40
#: connections the door holds in all (mosquitto's own cap was 5000)
MAX_CONNECTIONS = 5000
#: a WebSocket has this long to send its CONNECT
CONNECT_S = 10.0
#: the only topic filters a spectator may subscribe to: a clock's (or every clock's) public state
#: and status, and the bridge's state (the spectators' ACL lets them read no more)
TOPICS = re.compile(rf"{ROOT}/(\+|[^/+#]+)/(public|status)|{re.escape(BRIDGE_TOPIC)}")
#: MQTT's control packet types (the fixed header's high nibble) a spectator may send
CONNECT, PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PINGREQ, DISCONNECT = 1, 3, 8, 10, 12, 14
#: the WebSocket close code for a spectator refused by a limit (RFC 6455: policy violation)
POLICY = 1008


class Refused(Exception):
    """A spectator's packet the door does not relay: its message is the close's reason."""


def _varint(data, at):
    """MQTT's variable byte integer at `data[at:]`: (value, where it ends), or None when `data`
    ends before it does; Refused past four bytes (MQTT 3.1.1 2.2.3, 5 1.5.5)."""
    value = 0
    for n in range(4):
        if at + n >= len(data):
            return None
        byte = data[at + n]
        value |= (byte & 0x7F) << (7 * n)
        if not byte & 0x80:
            return value, at + n + 1
    raise Refused("malformed packet length")


class Spectator:
    """One spectator's packets, as they arrive over its WebSocket: `feed` takes bytes and gives back
    the packets (whole, as sent) that may go on to mosquitto; Refused for the first that may not."""

    def __init__(self):
        self.buffer = b""
        self.connected = False
        self.version = 4
        self.subscribes = 0
        self.filters = 0

    def feed(self, data):
        """The whole packets `data` completes, each checked (Refused: close, relay nothing more)."""
        self.buffer += data
        out = []
        while self.buffer:
            header = _varint(self.buffer, 1)
            if header is None:
                break
            length, start = header
            if start + length > MAX_PACKET:
                raise Refused(f"packet over {MAX_PACKET} bytes")
            if len(self.buffer) < start + length:
                break
            packet, self.buffer = self.buffer[: start + length], self.buffer[start + length :]
            self._check(packet[0] >> 4, packet[start:])
            out.append(packet)
        if len(self.buffer) > MAX_PACKET:
            raise Refused(f"packet over {MAX_PACKET} bytes")
        return out

    def _check(self, kind, body):
        if not self.connected:
            if kind != CONNECT:
                raise Refused("CONNECT first")
            self._connect(body)
            self.connected = True
        elif kind == PUBLISH:
            raise Refused("read only: a spectator publishes nothing")
        elif kind == SUBSCRIBE:
            self._subscribe(body)
        elif kind not in (UNSUBSCRIBE, PINGREQ, DISCONNECT):
            raise Refused(f"packet type {kind} not taken here")

    def _connect(self, body):
        try:
            name_length = int.from_bytes(body[0:2], "big")
            self.version, flags = body[2 + name_length], body[3 + name_length]
        except IndexError:
            raise Refused("malformed CONNECT") from None
        if flags & 0x04:
            raise Refused("read only: no will")

    def _subscribe(self, body):
        self.subscribes += 1
        if self.subscribes > MAX_SUBSCRIBES:
            raise Refused(f"more than {MAX_SUBSCRIBES} SUBSCRIBEs")
        at = 2  # the packet identifier
        if self.version == 5:
            properties = _varint(body, at)
            if properties is None:
                raise Refused("malformed SUBSCRIBE")
            at = properties[1] + properties[0]
        if at >= len(body):
            raise Refused("malformed SUBSCRIBE")
        while at < len(body):
            length = int.from_bytes(body[at : at + 2], "big")
            name = body[at + 2 : at + 2 + length]
            if len(name) != length or at + 2 + length >= len(body):  # its options byte follows
                raise Refused("malformed SUBSCRIBE")
            self.filters += 1
            if self.filters > MAX_FILTERS:
                raise Refused(f"more than {MAX_FILTERS} topic filters")
            if not TOPICS.fullmatch(name.decode("utf-8", "replace")):
                raise Refused("only the spectators' topics")
            at += 3 + length


class _SpectatorsH11(TimedH11):
    """The door's HTTP: a connection upgraded to a WebSocket leaves the request deadline (it is the
    relay's now) and its place in its address's count, which the relay takes over."""

    def handle_websocket_upgrade(self, event):
        self.release()
        super().handle_websocket_upgrade(event)


async def _close(websocket, code, reason=""):
    try:
        await websocket.close(code, reason)
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass  # closed already, by the client or the network


def _origin_ok(websocket):
    """Whether a WebSocket comes from the pages themselves, or from no browser page (no Origin):
    another web site cannot use a spectator's browser to hold connections here."""
    origin, host = websocket.headers.get("origin"), websocket.headers.get("host")
    return origin is None or origin.lower().partition("://")[2] == (host or "").lower()


class Relay:
    """The WebSocket route: each spectator relayed to mosquitto on `broker_host`:`broker_port`,
    its address counted in `limits` (the door's `AddressLimits`) while it is connected."""

    def __init__(self, broker_host, broker_port, limits):
        self.broker = (broker_host, broker_port)
        self.limits = limits

    async def serve(self, websocket):
        """Relay one spectator (the route's endpoint)."""
        asked = websocket.scope.get("subprotocols", [])
        if "mqtt" not in asked or not _origin_ok(websocket):
            return await websocket.close(POLICY)  # before the handshake: answered 403
        await websocket.accept(subprotocol="mqtt")
        addr = websocket.client.host if websocket.client else "?"
        if not self.limits.connect(addr):
            return await _close(websocket, POLICY, "too many connections from your address")
        try:
            await self._relay(websocket)
        finally:
            self.limits.disconnect(addr)

    async def _relay(self, websocket):
        try:
            reader, writer = await asyncio.open_connection(*self.broker)
        except OSError:
            return await _close(websocket, 1011, "the spectators' broker is not answering")
        up = asyncio.ensure_future(self._up(websocket, writer))
        down = asyncio.ensure_future(self._down(websocket, reader))
        try:
            done, _ = await asyncio.wait((up, down), return_when=asyncio.FIRST_COMPLETED)
            reason = up.result() if up in done and not up.exception() else None
        finally:
            for task in (up, down):
                task.cancel()
            writer.close()
        await _close(websocket, POLICY if reason else 1000, reason or "")

    async def _up(self, websocket, writer):
        """The spectator's packets to mosquitto, checked: the reason it is closed, or None."""
        spectator = Spectator()
        deadline = asyncio.get_running_loop().time() + CONNECT_S
        while True:
            try:
                wait = None if spectator.connected else deadline - asyncio.get_running_loop().time()
                message = await asyncio.wait_for(websocket.receive(), wait)
            except TimeoutError:
                return f"no CONNECT within {CONNECT_S:g} s"
            except (WebSocketDisconnect, RuntimeError, OSError):
                return None
            if message["type"] == "websocket.disconnect":
                return None
            data = message.get("bytes")
            if data is None:
                return "MQTT goes in binary frames"
            try:
                packets = spectator.feed(data)
            except Refused as refused:
                return str(refused)
            for packet in packets:
                writer.write(packet)
            try:
                await writer.drain()
            except OSError:
                return None

    async def _down(self, websocket, reader):
        """mosquitto's packets to the spectator, as they come, until either side closes."""
        try:
            while data := await reader.read(65536):
                await websocket.send_bytes(data)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass


def _address_limits():
    """The door's caps per client address (doors.AddressLimits)."""
    return AddressLimits(MAX_PER_ADDRESS, PER_ADDRESS_PER_S, PER_ADDRESS_BURST)


def spectators_app(broker_port, broker_host="127.0.0.1", limits=None):
    """The spectators' door's ASGI app: the pages (`PAGES`), with the doors' headers on every
    answer, and the WebSocket relay at `/` to mosquitto on `broker_host`:`broker_port`."""
    limits = limits or _address_limits()
    app = Starlette(
        routes=[
            # any path: the pages use `/`, other MQTT clients often `/mqtt`
            WebSocketRoute("/{path:path}", Relay(broker_host, broker_port, limits).serve),
            Mount("/", StaticFiles(directory=PAGES, html=True)),
        ]
    )
    return SecurityHeaders(app)


class SpectatorsDoor:
    """The spectators' door on `host`:`port` (0: a free one), relaying to mosquitto's plain
    listener on 127.0.0.1:`broker_port`; served by uvicorn in a thread of its own."""

    def __init__(self, broker_port, host="127.0.0.1", port=0):
        limits = _address_limits()
        self.door = Door(
            spectators_app(broker_port, limits=limits),
            host,
            port,
            "spectators-door",
            MAX_CONNECTIONS,
            limits,
            http=_SpectatorsH11.for_door(limits),
            ws="websockets-sansio",
            # a frame past it is refused on its header, before its body is read (1009); the socket
            # is then closed with the rest unread, so a client still writing gets a reset instead
            ws_max_size=64 * 1024,
            ws_per_message_deflate=False,
            # no WebSocket pings: MQTT's own keepalive (PINGREQ, the pages' 60 s) tells a dead
            # phone, and paho-mqtt 2.x answers a ping with an unmasked pong (`_WebsocketWrapper`:
            # `_create_frame(OPCODE_PONG, payload, 0)`), which RFC 6455 5.1 makes the server close
            # (1002, every 20 s); no paho issue about it was found
            ws_ping_interval=None,
        )
        self.port = self.door.port

    def start(self):
        """Start serving; OSError when it cannot."""
        self.door.start()
        return self

    def close(self):
        """Stop serving."""
        self.door.close()
