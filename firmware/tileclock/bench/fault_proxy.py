"""A TCP relay on loopback that makes a hall's bad Wi-Fi between a group of clocks and the broker.

This machine's kernel has no `netem`, so the faults come from user space: every connection to
`FaultProxy.port` (on loopback, or on a namespace's link: netns.py) is relayed to the broker, each direction (`up`: clocks to broker, `down`: broker
to clocks) through a `Direction` whose settings may change while it runs:

- `delay_s` and `jitter_s`: each chunk is held that long (jitter uniform in [0, jitter_s]; a chunk
  never overtakes the one before it, as in TCP);
- `stall_every_s` and `stall_for_s`: loss as TCP sees it, on a clock: the stream pauses (a lost
  segment being retransmitted), then what waited comes at once, in a burst;
- `loss` and `rto_s`: random loss as TCP sees it: each chunk is lost with probability `loss`
  and sent again after TCP's retransmission timeout (`rto_s`, doubling at each loss in a row, as
  TCP backs off), and every chunk after it waits for it (TCP hands the stream over in order); the
  reordering a Wi-Fi link makes is invisible above TCP but as delay, which `jitter_s` is;
- `hold`: a one-way blackhole: bytes are kept, not passed, until it is cleared; `drop`: bytes are
  thrown away (the connection is then broken for good, as a link that lost them would leave it);
- `rate_bps`: a bandwidth limit (bytes a second).

`cut()` closes every connection and refuses new ones (each accepted, then closed at once) until
`restore()`: an outage, an access point that reboots. Every accepted connection is counted, with its
time (`accepts`), for the connection attempts a second after an outage.

Threads, not asyncio: the benchmark and the tests run it beside paho's threads and Fleet processes,
and each relay is two reader and two writer threads that wait on sockets and conditions only.
"""

import random
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass

CHUNK = 65536


@dataclass
class Direction:
    """One direction's faults; change any field at any time (`FaultProxy.set` wakes the writers)."""

    delay_s: float = 0.0
    jitter_s: float = 0.0
    stall_every_s: float = 0.0  # 0: no stalls
    stall_for_s: float = 0.0
    hold: bool = False
    drop: bool = False
    rate_bps: float = 0.0  # 0: no limit
    loss: float = 0.0  # a chunk's chance of being lost (and sent again), 0 <= loss < 1
    rto_s: float = 0.3  # TCP's retransmission timeout: Linux's 200 ms floor plus a hall's RTT

    def clear(self):
        """Every fault off."""
        self.__init__()


class _Pipe:
    """One direction of one relayed connection: a reader thread queues chunks with their due time,
    a writer thread sends each once due and the direction lets it through."""

    def __init__(self, proxy, name, src, dst):
        self.proxy, self.name, self.src, self.dst = proxy, name, src, dst
        self.queue = deque()  # (due, bytes)
        self.last_due = 0.0
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True, name=f"fault-{name}-read")
        self.writer = threading.Thread(target=self._write, daemon=True, name=f"fault-{name}-write")

    def start(self):
        self.reader.start()
        self.writer.start()

    def _read(self):
        while not self.closed:
            try:
                data = self.src.recv(CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            with self.proxy.changed:
                way = self.proxy.directions[self.name]
                if way.drop:
                    continue
                due = time.monotonic() + way.delay_s + self.proxy.random.uniform(0, way.jitter_s)
                due += retransmission_s(self.proxy.random, way.loss, way.rto_s)
                self.last_due = max(self.last_due, due)  # no overtaking in one stream
                self.queue.append((self.last_due, data))
                self.proxy.changed.notify_all()
        with self.proxy.changed:
            self.queue.append((0.0, None))  # the end: the writer passes it on once all before went
            self.proxy.changed.notify_all()

    def _wait_s(self, due):
        """How long the head chunk must still wait (0: send it now, None: until a change)."""
        way = self.proxy.directions[self.name]
        if way.hold:
            return None
        now = time.monotonic()
        if way.stall_every_s > 0 and way.stall_for_s > 0:
            into = (now - self.proxy.started) % way.stall_every_s
            if into < way.stall_for_s:
                return max(due - now, way.stall_for_s - into)
        return max(0.0, due - now)

    def _write(self):
        while True:
            with self.proxy.changed:
                while not self.closed:
                    if self.queue:
                        wait = self._wait_s(self.queue[0][0]) if self.queue[0][1] is not None else 0
                        if wait == 0:
                            break
                    else:
                        wait = None
                    self.proxy.changed.wait(wait)
                if self.closed:
                    return
                _, data = self.queue.popleft()
                rate = self.proxy.directions[self.name].rate_bps
            if data is None:
                self.proxy.shut(self.dst)
                return
            if rate > 0:  # the bytes take their time on the link before they arrive
                time.sleep(len(data) / rate)
            try:
                self.dst.sendall(data)
            except OSError:
                self.proxy.close_relay(self)
                return


#: TCP's longest retransmission timeout (Linux's TCP_RTO_MAX)
RTO_MAX_S = 120.0


def check_loss(loss):
    """Refuse a `loss` that is not a chance below 1 (a link that loses everything is a cut)."""
    if not 0 <= loss < 1:
        raise ValueError(f"loss {loss!r}: a chance, at least 0 and below 1")


def retransmission_s(rng, loss, rto_s):
    """How long a chunk waits for TCP to get it through a link losing `loss` of what it sends:
    nothing if it is not lost, else `rto_s`, then twice that for each loss in a row after it."""
    check_loss(loss)
    waited, timeout = 0.0, rto_s
    while loss and rng.random() < loss:
        waited += timeout
        timeout = min(timeout * 2, RTO_MAX_S)
    return waited


def peak_rate(times, since=0.0, window_s=1.0):
    """The most of `times` (monotonic s) from `since` in any `window_s`, a second."""
    times = sorted(t for t in times if t >= since)
    peak, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= window_s:
            first += 1
        peak = max(peak, last - first + 1)
    return peak / window_s


class FaultProxy:
    """Relays `host:port` (0: a free one; `host` loopback unless a namespace's link is to reach it,
    as `netns.Group.root_addr`) to `target` (host, port), with faults per direction.

    `start()` listens; `set(up=..., down=...)` changes a direction's settings (keyword fields of
    `Direction`); `cut()` / `restore()` an outage; `close()` ends it all. `seed` makes the jitter
    repeatable."""

    def __init__(self, target, port=0, seed=0, host="127.0.0.1"):
        self.target = target
        self.directions = {"up": Direction(), "down": Direction()}
        self.changed = threading.Condition()
        self.random = random.Random(seed)
        self.started = time.monotonic()
        self.accepts = []  # monotonic time of each accepted connection
        self.peers = []  # the (address, port) each came from
        self.is_cut = False
        self._relays = []  # (client socket, broker socket, pipes)
        self._closing = False
        self.host = host
        self._listener = socket.create_server((host, port), backlog=512)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True, name="fault-accept")

    def start(self):
        """Start accepting; returns self."""
        self._thread.start()
        return self

    def set(self, up=None, down=None, **both):
        """Change settings: `up` / `down` dicts for one direction, other keywords for both."""
        with self.changed:
            for name, fields in (("up", up), ("down", down)):
                for key, value in {**both, **(fields or {})}.items():
                    if not hasattr(self.directions[name], key):
                        raise ValueError(f"no fault setting {key!r}")
                    if key == "loss":
                        check_loss(value)  # refused here, not in a relay's thread
                    setattr(self.directions[name], key, value)
            self.changed.notify_all()

    def clear(self):
        """Every fault off, both ways (held bytes then flow)."""
        with self.changed:
            for way in self.directions.values():
                way.clear()
            self.changed.notify_all()

    def cut(self):
        """An outage: close every relayed connection; refuse new ones until `restore()`."""
        with self.changed:
            self.is_cut = True
            relays = list(self._relays)
        for relay in relays:
            self._close(relay)

    def restore(self):
        """The link is back: new connections are relayed again."""
        with self.changed:
            self.is_cut = False

    def connections(self):
        """How many connections are relayed now."""
        with self.changed:
            return len(self._relays)

    def waiting(self, name):
        """How many bytes wait in direction `name` ("up" or "down"), held or not yet due."""
        with self.changed:
            return sum(
                len(data)
                for *_, pipes in self._relays
                for pipe in pipes
                if pipe.name == name
                for _, data in list(pipe.queue)
                if data
            )

    def attempts_peak(self, since=0.0, window_s=1.0):
        """The most connections accepted in any `window_s` from `since` (monotonic), a second."""
        return peak_rate(self.accepts, since, window_s)

    def close(self):
        """Stop accepting and close every connection."""
        self._closing = True
        try:
            self._listener.close()
        except OSError:
            pass
        self.cut()
        with self.changed:
            self.changed.notify_all()

    def shut(self, sock):
        """The other side ended its stream: end ours (half close) so the peer sees it."""
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close_relay(self, pipe):
        """A pipe's socket failed: close its whole connection."""
        with self.changed:
            relays = [r for r in self._relays if pipe in r[2]]
        for relay in relays:
            self._close(relay)

    def _close(self, relay):
        client, upstream, pipes = relay
        with self.changed:
            if relay in self._relays:
                self._relays.remove(relay)
            for pipe in pipes:
                pipe.closed = True
            self.changed.notify_all()
        for sock in (client, upstream):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self):
        while not self._closing:
            try:
                client, peer = self._listener.accept()
            except OSError:
                return
            self.accepts.append(time.monotonic())
            self.peers.append(peer)
            if self.is_cut:
                client.close()  # the access point is down: nothing gets through
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            up = _Pipe(self, "up", client, upstream)
            down = _Pipe(self, "down", upstream, client)
            with self.changed:
                self._relays.append((client, upstream, (up, down)))
            up.start()
            down.start()
