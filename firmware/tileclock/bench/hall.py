"""`tileclock hall-bench`: 200 simulated clocks through one mosquitto to the director, measured.

The benchmark prints figures; it asserts nothing and is not part of the tests
(`tests/test_hall.py` is its small, fast version, which asserts that nothing
is lost or kept twice). What runs, each in processes of its own, as in a hall:

- the broker: Debian's mosquitto with the shipped config and ACL (`LocalBroker`);
- the director: the real `tileclock hall` command, serving its page;
- the clocks: a few child processes, each a `Fleet` of whole simulated clocks
  (journal, loop, panels, uplink with its own paho client) playing whole games
  at `speed` times real time; each child notes when every record is handed to
  paho (its publish);
- this process: a client of the page's Server-Sent Events stream (what the
  page's script reads), noting when each board's newest record shows there,
  and a sampler of each process's CPU time and memory from /proc.

The run: every board online on the page, a steady phase, then three faults,
each given time to recover: the broker restarted, the director killed and
started again, one child of clocks killed mid-game (a power cut of its clocks)
and started again on its state; then a second steady phase. Then the play
stops, every record is let through, and the director's game files are counted
against every clock's journal.
"""

import bisect
import contextlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from ..clock.timecode import NS_PER_MS
from ..director.broker import BrokerError, LocalBroker, free_port
from ..director.history import read_records
from ..director.store import count_on_disk
from . import procstat
from .run import Progress, pick_state_parent, verdict

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
    "record_to_page_max_broker_restart_ms",
    "record_to_page_max_director_restart_ms",
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

#: (clocks, processes, speed, s of the first steady phase, s to recover from each fault, s of the last)
PLANS = {"full": (200, 4, 30.0, 60, 20, 90), "quick": (20, 2, 60.0, 15, 10, 40)}
#: the faults, in the order the run makes them (each a window of the run)
FAULTS = ("broker_restart", "director_restart", "clocks_killed")
#: CPU peaks: the busiest this many seconds of the run
PEAK_WINDOW_S = 10.0

_SEQ = re.compile(r'"seq":(\d+)')


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


# --- the clocks' processes


def _fleet_child(spec_path):
    """Run in a child process: one `Fleet`, noting each record's publish. `hold` and `quit` arrive
    on stdin; `playing`, `held` and, at the end, the fleet's figures (JSON) go out on stdout."""
    from ..sim.fleet import Fleet

    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    fleet = Fleet(
        spec["state_dir"],
        "127.0.0.1",
        spec["port"],
        spec["passwords"],
        spec["count"],
        first=spec["first"],
        speed=spec["speed"],
        seed=spec["seed"],
    )
    with open(spec["published"], "a", encoding="ascii") as notes:
        lock = threading.Lock()
        for clock_id, sim in fleet.clocks.items():
            sim.uplink.client.publish = _timed(clock_id, sim.uplink.client.publish, notes, lock)
        fleet.start()
        print("playing", flush=True)
        for line in sys.stdin:
            if line.strip() == "hold":
                fleet.hold()
                print("held", flush=True)
            elif line.strip() == "quit":
                break
        fleet.close()
    print(json.dumps({"longest_step_s": fleet.longest_step_s}), flush=True)


def _timed(clock_id, publish, notes, lock):
    """paho's `publish`, noting `clock seq monotonic-ns` for each record on its way out."""

    def timed_publish(name, payload=None, *args, **kwargs):
        if name.endswith("/records"):
            match = _SEQ.search(payload if isinstance(payload, str) else payload.decode("ascii"))
            with lock:
                notes.write(f"{clock_id} {match.group(1)} {time.monotonic_ns()}\n")
                notes.flush()  # a killed child keeps what it noted
        return publish(name, payload, *args, **kwargs)

    return timed_publish


class FleetProcess:
    """A child process of `count` clocks, `clock-FIRST` on; started again after a kill, its clocks
    take up their journals (a power cut)."""

    def __init__(self, folder, clocks_dir, number, broker_port, passwords, count, first, speed):
        self.number, self.count = number, count
        self.spec_path = os.path.join(folder, f"fleet-{number}.json")
        ids = [f"clock-{n}" for n in range(first, first + count)]
        self.spec = {
            "state_dir": clocks_dir,
            "port": broker_port,
            "passwords": {clock: passwords[clock] for clock in ids},
            "count": count,
            "first": first,
            "speed": speed,
            "published": os.path.join(folder, f"published-{number}.log"),
        }
        self.starts = 0
        self.longest_step_s = 0.0
        self.process = None

    def start(self):
        # a new seed each start: a clock started again plays on, not its first game over
        spec = dict(self.spec, seed=self.number * 1000 + self.starts)
        with open(self.spec_path, "w", encoding="utf-8") as file:
            os.chmod(self.spec_path, 0o600)
            json.dump(spec, file)
        code = f"from tileclock.bench.hall import _fleet_child; _fleet_child({self.spec_path!r})"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.starts += 1
        return self

    def expect(self, word):
        line = self.process.stdout.readline()
        if line.strip() != word:
            raise RuntimeError(f"clock process {self.number}: no {word!r} (exit code {self.process.poll()})")

    def tell(self, command, answer=None):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        if answer:
            self.expect(answer)

    def kill(self):
        """Every clock of the process gone at once, mid-game."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def quit(self):
        try:
            self.tell("quit")
            last = json.loads(self.process.stdout.readline() or "{}")
            self.longest_step_s = max(self.longest_step_s, last.get("longest_step_s", 0.0))
            self.process.wait(60)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


# --- the director's process and its page


class Director:
    """The real `tileclock hall` on the broker, its page on `web_port`."""

    def __init__(self, folder, broker_port, password, web_port):
        self.folder = folder
        self.records = os.path.join(folder, "records")
        self.web_port = web_port
        password_file = os.path.join(folder, "director.password")
        with open(password_file, "w", encoding="utf-8") as file:
            os.chmod(password_file, 0o600)
            file.write(password)
        self.command = [sys.executable, "-m", "tileclock", "hall", "--broker", "127.0.0.1"]
        self.command += ["--port", str(broker_port), "--password-file", password_file]
        self.command += ["--out", self.records, "--web", f"127.0.0.1:{web_port}"]
        self.process = None

    def start(self):
        """Start it and wait until its page answers."""
        with open(os.path.join(self.folder, "director.log"), "a", encoding="utf-8") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tileclock hall exited ({self.process.returncode}); see director.log")
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.web_port, timeout=5)
                connection.request("GET", "/api/boards")
                connection.getresponse().read()
                connection.close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("tileclock hall's page did not answer within 60 s")

    def kill(self):
        """The process gone at once: no goodbye to the broker, nothing closed."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.send_signal(signal.SIGINT)  # Ctrl-C: it closes its store and its page
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class PageWatcher:
    """A client of the page's event stream: when each clock's newest record first shows there.
    It connects again whenever the stream ends (the director restarting)."""

    def __init__(self, port):
        self.port = port
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
                if line.startswith(b"data: "):
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


# --- the run


def _play_for(seconds, watcher, progress, what, every_s=10.0):
    """Let the hall run for `seconds`, saying how it goes every `every_s`."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        time.sleep(min(every_s, left))
        progress.say(
            f"{what}: {watcher.online()} boards online on the page, {watcher.events:,} updates so far"
        )


def _wait_until(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(1.0)


def journaled(clocks_dir):
    """Every (clock id, seq) in the clocks' journals, and how many games each clock ended."""
    keys, games = set(), {}
    for clock in sorted(os.listdir(clocks_dir)):
        records = read_records(os.path.join(clocks_dir, clock))  # its state directory
        keys.update((clock, record["seq"]) for record in records)
        games[clock] = sum(1 for record in records if record["ev"] == "end")
    return keys, games


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


class Hall:
    """The broker, the director and the clocks' processes of one run, in `folder`; the clocks'
    state (journals) in `clocks_dir`."""

    def __init__(self, folder, clocks_dir, clocks, processes, speed):
        ids = [f"clock-{n}" for n in range(1, clocks + 1)]
        users = {name: secrets.token_urlsafe(12) for name in ["director", *ids]}
        self.folder, self.clocks_dir = folder, clocks_dir
        self.broker = LocalBroker(os.path.join(folder, "broker"), users).start()
        try:
            self.director = Director(folder, self.broker.port, users["director"], free_port()).start()
        except BaseException:
            self.broker.stop()
            raise
        self.watcher = PageWatcher(self.director.web_port).start()
        share = -(-clocks // processes)
        self.fleets = [
            FleetProcess(
                folder,
                clocks_dir,
                n,
                self.broker.port,
                users,
                min(share, clocks - n * share),
                1 + n * share,
                speed,
            )
            for n in range(processes)
            if n * share < clocks
        ]
        for fleet in self.fleets:
            fleet.start()
        self.sampler = Sampler(
            {
                "director": lambda: [self.director.process.pid],
                "broker": lambda: [self.broker.process.pid] if self.broker.process else [],
                "clocks": lambda: [fleet.process.pid for fleet in self.fleets],
            }
        )

    def close(self):
        self.sampler.close()
        self.watcher.close()
        for fleet in self.fleets:
            fleet.quit()
        self.director.stop()
        self.broker.stop()

    def drain(self, progress):
        """Stop the play, let every record through; returns (journaled keys, games, stored counts)."""
        for fleet in self.fleets:
            fleet.tell("hold", answer="held")
        found = {}

        def through():
            keys, games = journaled(self.clocks_dir)
            stored = count_on_disk(self.director.records)
            found.update(keys=keys, games=games, stored=stored)
            missing = len(keys - set(stored))
            progress.say(f"{len(keys) - missing:,} of {len(keys):,} journaled records at the director")
            return missing == 0

        try:
            _wait_until(through, 180, "every journaled record at the director")
        except RuntimeError as error:
            progress.say(str(error))
        time.sleep(1.0)  # the page's last update (it sends at most 5 a second)
        return found["keys"], found["games"], found["stored"]


def run(plan, folder, progress):
    """Run the hall as the module says; returns the figures (a dict keyed by `KEYS`, and details)."""
    clocks, processes, speed, steady_s, recover_s, last_s = plan
    load_before = os.getloadavg()[0]
    progress.phase(f"mosquitto, tileclock hall and {clocks} clocks in {processes} processes, in {folder}")
    # the clocks' journals in memory: on a hall each clock fsyncs to its own card; here 200 clocks
    # would queue on one disk and fall behind their game time. The broker and the director stay on disk.
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    clocks_dir = tempfile.mkdtemp(prefix="tileclock-hall-bench-clocks-", dir=memory or folder)
    hall = Hall(folder, clocks_dir, clocks, processes, speed)
    watcher = hall.watcher
    windows = Windows()  # what each record's publish fell in: steady play, or after which fault
    try:
        for fleet in hall.fleets:
            fleet.expect("playing")
        hall.sampler.start()
        _wait_until(lambda: watcher.online() == clocks, 180, "every board online on the page")
        played_from = time.monotonic()
        progress.phase(f"steady play, {steady_s} s, {speed:g} times real time")
        with windows("steady"):
            _play_for(steady_s, watcher, progress, "steady")
        progress.phase("the broker restarts (it saves its sessions and queues on the way down)")
        with windows("broker_restart"):
            hall.broker.restart()
            _play_for(recover_s, watcher, progress, "after the broker's restart")
        progress.phase("the director is killed and started again")
        with windows("director_restart"):
            hall.director.kill()
            hall.director.start()
            _play_for(recover_s, watcher, progress, "after the director's restart")
        progress.phase(f"{hall.fleets[0].count} clocks killed mid-game (their process), started again")
        with windows("clocks_killed"):
            hall.fleets[0].kill()
            hall.fleets[0].start().expect("playing")
            _play_for(recover_s, watcher, progress, "after the clocks' restart")
        progress.phase(f"steady play again, {last_s} s (the clocks started again end a game too)")
        with windows("steady"):
            _play_for(last_s, watcher, progress, "steady")
        played_s = time.monotonic() - played_from
        progress.phase("the play stops; every record on to the director, then counted")
        keys, games, stored = hall.drain(progress)
    finally:
        hall.close()

    sent = published(folder)
    delays = record_to_page(sent, watcher.shown)
    by_window = windows.split(delays, sent)
    _write_delays(os.path.join(folder, "record-to-page.csv"), delays, sent, windows)
    sampler = hall.sampler
    figures = {
        "clocks": clocks,
        "records": len(keys),
        "records_per_s": len(keys) / played_s,
        "games_ended": sum(games.values()),
        "fewest_games_a_clock": min(games.values()),
        "lost": len(keys - set(stored)),
        "duplicated": sum(1 for n in stored.values() if n > 1),
        "not_journaled": len(set(stored) - keys),
        "record_to_page_p50_ms": quantile(by_window["steady"], 0.5),
        "record_to_page_p99_ms": quantile(by_window["steady"], 0.99),
        "records_timed": len(delays),
        "director_cpu_percent": sampler.percent("director"),
        "director_cpu_peak_percent": sampler.peak_percent("director"),
        "director_rss_mb": sampler.rss_mb["director"],
        "broker_cpu_percent": sampler.percent("broker"),
        "broker_cpu_peak_percent": sampler.peak_percent("broker"),
        "broker_rss_mb": sampler.rss_mb["broker"],
        "clocks_cpu_percent": sampler.percent("clocks"),
        "clocks_longest_step_s": max(fleet.longest_step_s for fleet in hall.fleets),
        "processes": len(hall.fleets),
        "speed": speed,
        "played_s": played_s,
        "page_events": watcher.events,
        "load_average": load_before,
        "filesystem": procstat.filesystem(folder)[0],
        "clocks_filesystem": procstat.filesystem(clocks_dir)[0] if not memory else "tmpfs",
    }
    for fault in FAULTS:
        figures[f"record_to_page_max_{fault}_ms"] = max(by_window[fault], default=None)
    if memory and not figures["lost"]:
        shutil.rmtree(clocks_dir, ignore_errors=True)  # memory; kept to look into if a record was lost
    else:
        progress.say(f"the clocks' state directories are in {clocks_dir}")
    return figures


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


def _write_delays(path, delays, sent, windows):
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


def main(args):
    clocks, processes, speed, *phases = PLANS["quick" if args.quick else "full"]
    plan = (args.clocks or clocks, args.processes or processes, args.speed or speed, *phases)
    folder = args.out or tempfile.mkdtemp(prefix="tileclock-hall-bench-", dir=pick_state_parent())
    os.makedirs(folder, exist_ok=True)
    try:
        figures = run(plan, folder, Progress(7))
    except BrokerError as error:
        print(f"tileclock hall-bench: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(figures))
        return 0
    print(table(figures))
    print(
        f"(machine: {os.cpu_count()} cores, load average {figures['load_average']:.1f} before the run; "
        f"{figures['processes']} clock processes at {figures['speed']:g} times real time, "
        f"the longest step {figures['clocks_longest_step_s']:.1f} s; {figures['records_timed']:,} records "
        f"timed; CPU in % of one core; broker and director on {figures['filesystem']} in {folder}, "
        f"the clocks' journals on {figures['clocks_filesystem']})"
    )
    return 0
