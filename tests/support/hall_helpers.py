"""Helpers for the hall's tests: a listener on the real broker, waiting on real network I/O, and
the hall's page served and asked over HTTP."""

import http.client
import json
import os
import socket
import ssl
import threading
import time
from contextlib import contextmanager

import paho.mqtt.client as mqtt

from conftest import BROKER_USERS
from tileclock.device.config_schema import HallConfig
from tileclock.director.pages.app import ONCE_HEADER
from tileclock.director.pages.web import COMMAND_HEADER, HallPage
from tileclock.wire.protocol import unframe

#: PBKDF2's rounds in a test's page password: a login is checked with the rounds its file names, and
#: hall-setup's 200,000 cost a tenth of a second of CPU a try (the tests of hall-setup keep them)
QUICK_ROUNDS = 1_000


def wait_for(predicate, timeout_s=30.0, what="the condition"):
    """Poll `predicate` (network I/O happens on other threads) until true; fail after `timeout_s`.
    The limit is for a hang, not a speed: it returns as soon as the predicate holds, and a loaded
    machine took over 10 s to bring a broker's bridge up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def pages_question(page, yes=True):
    """Answer the question the page draws before a command (session.js's `ask`, a `<dialog>` of
    its own, never the browser's `confirm`): wait for it, click its Yes (or No); the question."""
    dialog = page.locator("dialog#ask[open]")
    question = dialog.locator(".question").inner_text()
    dialog.locator("button.yes" if yes else "button.no").click()
    dialog.wait_for(state="hidden")
    return question


class Stepping:
    """The director's feed stepping in a thread of its own, as `tileclock hall` runs it, until `stop()`."""

    def __init__(self, feed):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=feed.run, args=(self._stop.is_set,), daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(5)


def closed_after(hall):
    """A fixture's body: the test has `hall` (its feed and page, and `clocks`), then both are closed."""
    try:
        yield hall
    finally:
        hall.close()
        hall.clocks.close()


@contextmanager
def hall_page(feed, **options):
    """The hall's page for `feed` (`HallPage` with `options`: scores, pairings...) on a free port."""
    server = HallPage(feed, port=0, **options).start()
    try:
        yield server
    finally:
        server.close()


def door_tls(door):
    """The (certificate, key) `door` (a `HallPage`: its director's door; or one `door.Door`) serves
    HTTPS with, or None for plain HTTP."""
    return getattr(getattr(door, "door", door), "tls", None)


def connect(door, timeout=5):
    """A connection to `door` on 127.0.0.1: HTTPS checked against the hall's CA (beside the door's
    certificate, as hall-setup and `local_tls` write them) where it speaks TLS, else HTTP."""
    tls = door_tls(door)
    if tls is None:
        return http.client.HTTPConnection("127.0.0.1", door.port, timeout=timeout)
    from tileclock.director.hall.tls import CA_CERT

    context = ssl.create_default_context(cafile=os.path.join(os.path.dirname(tls[0]), CA_CERT))
    return http.client.HTTPSConnection("127.0.0.1", door.port, timeout=timeout, context=context)


def page_request(server, method, path, headers=None, body=b""):
    """One request to the hall's page `server` (HTTPS where it speaks TLS: `connect`), with
    exactly `headers` (None: a browser's Host for the page, and nothing else): (status, text)."""
    if headers is None:
        headers = {"Host": f"127.0.0.1:{server.port}"}
    connection = connect(server)
    connection.putrequest(method, path, skip_host=True)
    for name, value in headers.items():
        connection.putheader(name, value)
    connection.endheaders(body)
    answer = connection.getresponse()
    status, text = answer.status, answer.read().decode()
    connection.close()
    return status, text


def page_json(server, path):
    """What the page answers a GET of `path` with, which must be 200: its JSON."""
    status, text = page_request(server, "GET", path)
    assert status == 200, text
    return json.loads(text)


def form_headers(door, form="", own=True, scheme=None, **more):
    """The headers and body of a form POSTed to `door` (anything with a `port`) as the page's own
    script sends it (`own`: its Origin, at `scheme`, by default the door's own, and the command
    header), or as any other page would (neither); `more` headers on top (a cookie)."""
    host = f"127.0.0.1:{door.port}"
    scheme = scheme or ("https" if door_tls(door) else "http")
    body = form.encode()
    headers = {
        "Host": host,
        "Content-Type": "application/x-www-form-urlencoded",
        "Content-Length": str(len(body)),
    }
    if own:
        headers.update({"Origin": f"{scheme}://{host}", COMMAND_HEADER: "1"})
        value = one_time_value(door, {**headers, **more}) if hands_out_onces(door) else None
        if value:
            headers[ONCE_HEADER] = value
    return {**headers, **more}, body


def hands_out_onces(door):
    """Whether `door` (a `HallPage`: its director's door; or one `door.Door`) serves `/api/once`."""
    door = getattr(door, "door", door)
    server = getattr(door, "server", None)
    if server is None:
        return False
    return any(getattr(route, "path", None) == "/api/once" for route in server.config.app.app.routes)


def one_time_value(door, headers):
    """A one-time value from `door`'s `/api/once`, asked as the page's script asks (`headers`: its
    Origin, command header and cookie), or None where none is handed out (no session: 401)."""
    asking = {
        k: v for k, v in headers.items() if k.lower() in ("host", "origin", "cookie", COMMAND_HEADER.lower())
    }
    connection = connect(door)
    connection.request("POST", "/api/once", headers={**asking, "Content-Length": "0"})
    answer = connection.getresponse()
    text = answer.read()
    connection.close()
    return json.loads(text)["once"] if answer.status == 200 else None


def page_post(server, path, form, own=True, scheme=None):
    """POST the form text `form` to `path` as the page's own script does (`own`, from an address
    at `scheme`), or as any other page would (no Origin, no command header): (status, text)."""
    return page_request(server, "POST", path, *form_headers(server, form, own, scheme))


def hall_config(broker, clock="c1"):
    """The [hall] section a clock `clock` uses to reach `broker`: over TLS where it has it."""
    port = broker.tls_port or broker.port
    return HallConfig(
        broker="127.0.0.1", port=port, password=BROKER_USERS[clock], keepalive_s=5, tls_ca=broker.ca_file
    )


class Listener:
    """A client on the broker that keeps every message by topic (as user `user`)."""

    def __init__(self, broker, user="director", client_id="listener", subscribe="tileclock/#", clean=True):
        self.messages = []
        self.redelivered = []  # the broker's own second deliveries (QoS 1, DUP set): its, not the clock's
        self.lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean)
        self.client.username_pw_set(user, BROKER_USERS[user])
        self.subscribe = subscribe
        self.connected = threading.Event()
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        wait_for(self.connected.is_set, what=f"{user} to connect")

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if self.subscribe:
            client.subscribe(self.subscribe, qos=1)
        self.connected.set()

    def _on_message(self, client, userdata, message):
        with self.lock:
            self.messages.append((message.topic, bytes(message.payload), message.retain))
            if message.dup:
                self.redelivered.append((message.topic, bytes(message.payload)))

    def payloads(self, topic):
        with self.lock:
            return [payload for name, payload, _ in self.messages if name == topic]

    def records(self, clock="c1"):
        """Every record received from `clock`, decoded, in arrival order (repeats included)."""
        return [unframe(p.decode("ascii")) for p in self.payloads(f"tileclock/{clock}/records")]

    def seqs(self, clock="c1"):
        return {record["seq"] for record in self.records(clock)}

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


class Spectator:
    """A spectator on the spectators' broker: MQTT over WebSockets through its door, no user name,
    as the pages are; `behind_the_door`: straight to mosquitto's loopback listener, as only the
    door may (what mosquitto's own ACL holds, past the door)."""

    def __init__(
        self,
        viewers_broker,
        client_id,
        subscribe=("tileclock/+/public", "tileclock/viewers/bridge"),
        behind_the_door=False,
    ):
        self.messages = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=client_id,
            transport="tcp" if behind_the_door else "websockets",
        )
        self.client.on_message = self._on_message
        self.subscribe = subscribe
        self.connected = threading.Event()
        self.client.on_connect = self._on_connect
        port = viewers_broker.mqtt_port if behind_the_door else viewers_broker.port
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        wait_for(self.connected.is_set, what=f"spectator {client_id} to connect")

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        client.subscribe([(name, 0) for name in self.subscribe])
        self.connected.set()

    def _on_message(self, client, userdata, message):
        with self.lock:
            self.messages.append((message.topic, bytes(message.payload), message.retain))

    def topics(self):
        with self.lock:
            return {name for name, _, _ in self.messages}

    def public(self):
        """Every public state received, decoded, by clock, in arrival order."""
        states = {}
        with self.lock:
            for name, payload, _ in self.messages:
                if name.endswith("/public") and payload:
                    states.setdefault(name.split("/")[1], []).append(json.loads(payload))
        return states

    def bridged(self):
        with self.lock:
            return [payload for name, payload, _ in self.messages if name == "tileclock/viewers/bridge"]

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def game_ended(folder, round_number, table, board=None):
    """Write in `folder` (a hall's records folder) the `results.csv` row of a game that ended at
    `table` in `round_number`, as the hall writes one at a game's `end`: the score book then takes
    the phones' entries for it (`score_links.not_ended`)."""
    import csv as csv_

    from tileclock.director.records.history import CSV_FIELDS

    path = os.path.join(str(folder), "results.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="", encoding="utf-8") as file:
        writer = csv_.DictWriter(file, fieldnames=CSV_FIELDS, restval="")
        if new:
            writer.writeheader()
        writer.writerow(
            {
                "board": board or table,
                "clock": "c1",
                "end_reason": "stop_hold",
                "round": round_number,
                "table": table,
            }
        )


def slow_clients(port, count, addr="127.0.0.2"):
    """`count` connections to `port` from `addr` (every 127.x address is this machine's loopback),
    each sending the start of a request and never its end (slowloris)."""
    held = []
    for _ in range(count):
        client = socket.socket()
        client.bind((addr, 0))
        client.settimeout(5)
        try:
            client.connect(("127.0.0.1", port))
            client.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        except OSError:  # refused or reset: the door turned it away, as it should
            client.close()
            continue
        held.append(client)
    return held
