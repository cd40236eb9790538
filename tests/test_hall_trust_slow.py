"""The large attacks of issue 27, outside the 5-minute suite (`make test-slow`): a 100 MB record
through the real broker, and 1,000 page clients that never finish a request."""

import http.client
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import BROKER_USERS
from support.feeds import Feed
from support.halls import Clocks, director, settle
from tileclock.director.pages import guard
from tileclock.director.pages.web import MAX_CONNECTIONS, HallPage

pytestmark = pytest.mark.slow

#: clock c1's own credentials publishing a 100 MB record; prints whether the broker cut it off
LIAR = """
import sys, time
import paho.mqtt.client as mqtt
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
client.username_pw_set("c1", sys.argv[2])
cut = []
client.on_disconnect = lambda *args: cut.append(1)
client.connect("127.0.0.1", int(sys.argv[1]))
client.loop_start()
while not client.is_connected():
    time.sleep(0.01)
client.publish("tileclock/c1/records", b"x" * 100_000_000, qos=1)
deadline = time.monotonic() + 30
while not cut and time.monotonic() < deadline:
    time.sleep(0.05)
print("cut off" if cut else "still connected")
"""


def rss_mb():
    with open(f"/proc/{os.getpid()}/status") as file:
        line = next(line for line in file if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def test_a_100_mb_record_is_stopped_at_the_broker_and_the_hall_goes_on(broker, tmp_path):
    clocks = Clocks(broker, tmp_path, ids=("c2",))
    feed = director(broker, tmp_path / "records")
    clocks.play(2)
    settle(feed, clocks, "the honest clock's records")
    before = rss_mb()
    # the liar in a process of its own: only the director's memory is measured here
    liar = subprocess.run(
        [sys.executable, "-c", LIAR, str(broker.port), BROKER_USERS["c1"]],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert liar.stdout.strip() == "cut off", liar.stderr
    clocks.play(2)
    settle(feed, clocks, "the honest clock's records after the flood")
    for _ in range(50):
        feed.step(0.01)
    assert rss_mb() - before < 50
    assert "c1" not in feed.store.clocks
    feed.close()
    clocks.close()


def test_a_thousand_clients_that_never_finish_cannot_hold_the_page(monkeypatch):
    monkeypatch.setattr(guard, "REQUEST_S", 2.0)
    server = HallPage(Feed(), port=0).start()
    threads = threading.active_count()
    idle = []
    try:
        for _ in range(1000):
            client = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            client.sendall(b"GET /api/boards HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never the blank line
            idle.append(client)
        assert threading.active_count() - threads < 10  # no thread per client
        deadline = time.monotonic() + 30
        while True:  # past the time limit the idle ones are cut off, and a real request is answered
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            try:
                connection.request("GET", "/api/boards")
                if connection.getresponse().status == 200:
                    break
            except OSError:
                pass
            finally:
                connection.close()
            assert time.monotonic() < deadline, "the page never answered again"
            time.sleep(0.2)
        assert sum(1 for client in idle if client.recv(1) == b"") >= 1000 - MAX_CONNECTIONS
    finally:
        for client in idle:
            client.close()
        server.close()


#: clock c1's own credentials: 100,000 records after a gap (seq 1,000,000 on), as fast as it can
FLOOD = """
import json, sys, time
import paho.mqtt.client as mqtt
from tileclock.wire.protocol import frame
record = json.loads(sys.argv[3])
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
client.username_pw_set("c1", sys.argv[2])
client.max_inflight_messages_set(200)
client.connect("127.0.0.1", int(sys.argv[1]))
client.loop_start()
while not client.is_connected():
    time.sleep(0.01)
for seq in range(1_000_000, 1_100_000):
    body = dict(record, clock="c1", seq=seq)
    body.pop("crc", None)
    line = frame(json.dumps(body, separators=(",", ":")))
    while client.publish("tileclock/c1/records", line, qos=1).rc == mqtt.MQTT_ERR_QUEUE_SIZE:
        time.sleep(0.001)
    last = seq
while client.want_write() or len(client._out_messages):
    time.sleep(0.05)
print("sent")
"""


def test_a_clock_flooding_after_a_gap_neither_grows_memory_nor_holds_up_the_others(broker, tmp_path):
    import json

    clocks = Clocks(broker, tmp_path, ids=("c2", "c3"))
    feed = director(broker, tmp_path / "records")
    clocks.play(2)
    settle(feed, clocks, "the honest clocks' records")
    stored = {}
    feed.subscribe(lambda clock, record, _log: stored.setdefault((clock, record["seq"]), time.monotonic()))
    record = clocks.sims["c2"].journal.records()[-1]
    before = rss_mb()
    flood = subprocess.Popen(
        [sys.executable, "-c", FLOOD, str(broker.port), BROKER_USERS["c1"], json.dumps(record)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    published = {}
    deadline = time.monotonic() + 300
    while flood.poll() is None or feed.inbox.qsize():
        assert time.monotonic() < deadline, "the flood never ended"
        for clock in ("c2", "c3"):  # the honest clocks play on, a record each half second
            clocks.t[clock] += 3
            button = "AB"[clocks.t[clock] % 2]
            sim = clocks.sims[clock]
            sim.set_button(button, True, clocks.t[clock] * 10**9)
            sim.set_button(button, False, clocks.t[clock] * 10**9 + 10**8)
            published[(clock, sim.journal.next_seq - 1)] = time.monotonic()
            sim.daemon.pump(sim.time())
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            feed.step(0.01)
    settle(feed, clocks, "the honest clocks' last records")
    delays = sorted(stored[key] - at for key, at in published.items())
    assert flood.stdout.read().strip() == "sent"
    assert feed.store.clocks["c1"].let_go > 90_000
    assert rss_mb() - before < 50
    started = min(published.values())
    print(
        f"flood over in {time.monotonic() - started:.1f} s; {len(delays)} honest records, "
        f"p50 {delays[len(delays) // 2]:.3f} s, p99 {delays[int(0.99 * (len(delays) - 1))]:.3f} s, "
        f"max {delays[-1]:.3f} s; RSS +{rss_mb() - before:.1f} MB"
    )
    assert delays[int(0.99 * (len(delays) - 1))] < 1.0
    feed.close()
    clocks.close()
