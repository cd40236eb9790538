"""What `tileclock hall-bench` measures and prints: each record's way from its publish to the page
(`PageWatcher`, `record_to_page`), each process's CPU and memory (`Sampler`), the run's time
windows (steady play, after each fault), and the table of figures against their targets."""

import bisect
import contextlib
import http.client
import json
import os
import socket
import threading
import time

from ..clock.timecode import NS_PER_MS
from . import procstat
from .report import verdict

KEYS = (
    "clocks",
    "records",
    "records_per_s",
    "games_ended",
    "fewest_games_a_clock",
    "lost",
    "duplicated",
    "record_to_page_p50_ms",
    "record_to_page_p99_ms",
    "record_to_page_max_broker_killed_ms",
    "record_to_page_max_director_restart_ms",
    "record_to_page_max_broker_killed_director_down_ms",
    "record_to_page_max_clocks_killed_ms",
    "director_cpu_percent",
    "director_cpu_peak_percent",
    "director_rss_mb",
    "broker_cpu_percent",
    "broker_cpu_peak_percent",
    "broker_rss_mb",
    "clocks_cpu_percent",
)

#: (comparison, target) for each figure that has one.
TARGETS = {
    "fewest_games_a_clock": (">=", 1),
    "lost": ("==", 0),
    "duplicated": ("==", 0),
    "record_to_page_p99_ms": ("<", 1000),
}
#: CPU peaks: the busiest this many seconds of the run
PEAK_WINDOW_S = 10.0


def quantile(values, fraction):
    """The `fraction` quantile of `values` (nearest rank), or None for none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def record_to_page(published, shown):
    """Each record's delay from its publish to the page first showing it or a later record of its
    clock, in ms: {(clock, seq): ms}. `published` is {(clock, seq): ns}; `shown` is
    {clock: [(ns, newest seq on the page), ...]}, seq rising. Records never shown are left out."""
    delays = {}
    seqs = {clock: [seq for _, seq in seen] for clock, seen in shown.items()}
    for (clock, seq), sent_ns in published.items():
        index = bisect.bisect_left(seqs.get(clock, []), seq)
        if index < len(seqs.get(clock, [])):
            delays[(clock, seq)] = max(0, shown[clock][index][0] - sent_ns) / NS_PER_MS
    return delays


class PageWatcher:
    """A client of the page's event stream: when each clock's newest record first shows there.
    It connects again whenever the stream ends (the director restarting)."""

    def __init__(self, port, keep=True):
        self.port = port
        self.keep = keep  # False: a viewer that only reads the stream, as a browser left open
        self.shown = {}  # clock -> [(monotonic ns, seq)], seq rising
        self.boards = {}  # clock -> the board as last shown
        self.events = 0
        self._connection = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="page-watcher", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def close(self):
        self._stop.set()
        connection = self._connection
        if connection is not None and connection.sock is not None:
            connection.sock.shutdown(socket.SHUT_RDWR)  # out of its wait for the next event
        self._thread.join(10)

    def online(self):
        """How many boards the page shows online with a record."""
        return sum(1 for board in list(self.boards.values()) if board.get("online") and board.get("seq"))

    def _run(self):
        while not self._stop.is_set():
            try:
                self._follow()
            except (OSError, http.client.HTTPException, ValueError):
                pass  # the director is restarting: connect again
            self._stop.wait(0.1)

    def _follow(self):
        connection = self._connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", "/events")
            response = connection.getresponse()
            while not self._stop.is_set():
                line = response.readline()
                if not line:
                    return
                if line.startswith(b"data: ") and self.keep:
                    self._seen(json.loads(line[6:]), time.monotonic_ns())
        finally:
            connection.close()

    def _seen(self, snapshot, now_ns):
        self.events += 1
        for board in snapshot["boards"]:
            clock, seq = board["clock"], board.get("seq")
            self.boards[clock] = board
            seen = self.shown.setdefault(clock, [])
            if isinstance(seq, int) and (not seen or seq > seen[-1][1]):
                seen.append((now_ns, seq))


class Sampler:
    """Each role's CPU time and peak memory, from /proc once a second; a role is one or more
    processes, started again or not (`pids_of[role]()` says which now)."""

    def __init__(self, pids_of):
        self.pids_of = pids_of
        self.cpu_s = {role: {} for role in pids_of}  # role -> pid -> CPU seconds when last read
        self.rss_mb = dict.fromkeys(pids_of, 0.0)  # role -> the largest peak of any of its processes
        self.readings = {role: [] for role in pids_of}  # role -> [(monotonic s, CPU seconds so far)]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
        self.started = self.elapsed = None

    def start(self):
        self.started = time.monotonic()
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(1.0):
            self.sample()

    def sample(self):
        for role, pids in self.pids_of.items():
            for pid in pids():
                cpu_s = procstat.cpu_seconds(pid)
                try:
                    rss_mb = procstat.peak_rss_mb(pid) or 0.0
                except FileNotFoundError:
                    cpu_s = None
                if cpu_s is None:
                    continue  # gone (killed, restarting): its last reading stands
                self.cpu_s[role][pid] = cpu_s
                self.rss_mb[role] = max(self.rss_mb[role], rss_mb)
            self.readings[role].append((time.monotonic(), sum(self.cpu_s[role].values())))

    def close(self):
        self._stop.set()
        self._thread.join(5)
        self.sample()
        self.elapsed = time.monotonic() - self.started

    def percent(self, role):
        """The role's CPU over the run, in % of one core."""
        return 100 * sum(self.cpu_s[role].values()) / self.elapsed

    def peak_percent(self, role, window_s=PEAK_WINDOW_S):
        """The role's CPU in its busiest `window_s`, in % of one core."""
        readings, peak = self.readings[role], 0.0
        for index, (at, cpu_s) in enumerate(readings):
            later = next(((t, c) for t, c in readings[index:] if t - at >= window_s), None)
            if later:
                peak = max(peak, 100 * (later[1] - cpu_s) / (later[0] - at))
        return peak


def published(folder):
    """{(clock, seq): its first publish's monotonic ns} from every child's notes."""
    first = {}
    for name in os.listdir(folder):
        if not name.startswith("published-"):
            continue
        with open(os.path.join(folder, name), encoding="ascii") as file:
            for line in file:
                parts = line.split()
                if len(parts) != 3:
                    continue  # a note cut off by a kill
                key, at_ns = (parts[0], int(parts[1])), int(parts[2])
                first[key] = min(first.get(key, at_ns), at_ns)
    return first


class Windows:
    """Named spans of time (monotonic ns), entered with `with windows(name):`; a name may recur."""

    def __init__(self):
        self.spans = []  # (name, from ns, to ns)

    @contextlib.contextmanager
    def __call__(self, name):
        began = time.monotonic_ns()
        try:
            yield
        finally:
            self.spans.append((name, began, time.monotonic_ns()))

    def name_at(self, at_ns):
        return next((name for name, began, ended in self.spans if began <= at_ns <= ended), None)

    def split(self, delays, sent):
        """{window name: [delay ms of each record published in it]} (every name, empty or not)."""
        split = {name: [] for name, _, _ in self.spans}
        for key, ms in delays.items():
            name = self.name_at(sent[key])
            if name is not None:
                split[name].append(ms)
        return split


def write_delays(path, delays, sent, windows):
    """Each timed record's delay, for a closer look: clock, seq, publish ns, ms, window."""
    with open(path, "w", encoding="ascii") as file:
        file.write("clock,seq,published_ns,record_to_page_ms,window\n")
        for (clock, seq), ms in sorted(delays.items()):
            at_ns = sent[(clock, seq)]
            file.write(f"{clock},{seq},{at_ns},{ms:.1f},{windows.name_at(at_ns) or ''}\n")


def _shown(value):
    if value is None:
        return "n/a"
    return f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"


def table(figures):
    """The figures as a plain-text table: value, target, met or missed."""
    width = max(map(len, KEYS))
    lines = [f"{'figure':{width}} {'value':>10}  target"]
    for key in KEYS:
        value = figures.get(key)
        target = " ".join(map(str, TARGETS[key])) if key in TARGETS else ""
        lines.append(f"{key:{width}} {_shown(value):>10}  {target:8} {verdict(key, value, TARGETS)}".rstrip())
    return "\n".join(lines)
