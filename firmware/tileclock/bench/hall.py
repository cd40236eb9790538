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
  `viewers` more clients of it (pages left open), and a sampler of each
  process's CPU time and memory from /proc.

The run: every board online on the page, a steady phase, then four faults,
each given time to recover: the broker killed (SIGKILL) and started again, the
director killed and started again, the director killed and then the broker
too (its queue for the director since its last autosave gone), one child of
clocks killed mid-game (a power cut of its clocks) and started again on its
state; then a second steady phase. Then the play
stops, every record is let through, and the director's game files are counted
against every clock's journal.

The clocks' processes are in `hall_clocks.py`; the page's watcher, the sampler and the
table of figures in `hall_report.py`; here the run itself.
"""

import collections
import glob
import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ..director.hall.broker import BrokerError, LocalBroker, free_port, write_private
from ..director.records.history import read_records
from ..wire.protocol import unframe
from . import procstat
from .hall_clocks import fleet_processes
from .hall_report import (
    PageWatcher,
    Sampler,
    Windows,
    published,
    quantile,
    record_to_page,
    table,
    write_delays,
)
from .run import Progress
from .service import pick_state_parent

#: (clocks, processes, speed, s of the first steady phase, s to recover from each fault, s of the last)
PLANS = {"full": (200, 4, 30.0, 60, 20, 90), "quick": (20, 2, 60.0, 15, 10, 40)}
#: the faults, in the order the run makes them (each a window of the run)
FAULTS = ("broker_killed", "director_restart", "broker_killed_director_down", "clocks_killed")
#: viewers of the page besides the bench's own watcher (`--viewers`): each reads the live stream
VIEWERS = {"full": 50, "quick": 5}


# --- the director's process and its page


class Director:
    """The real `tileclock hall` on the broker, its page on `web_port`."""

    def __init__(self, folder, broker_port, password, web_port):
        self.folder = folder
        self.records = os.path.join(folder, "records")
        self.web_port = web_port
        password_file = os.path.join(folder, "director.password")
        write_private(password_file, password)
        self.command = [sys.executable, "-m", "tileclock", "hall", "--broker", "127.0.0.1"]
        self.command += ["--port", str(broker_port), "--password-file", password_file]
        self.command += ["--out", self.records, "--web", f"127.0.0.1:{web_port}"]
        # the page on loopback, read by the bench's own clients over HTTP: no hall CA to give it
        self.command += ["--plain-http", "both"]
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


def count_on_disk(outdir):
    """How many times each (clock id, seq) is in the game files under `outdir` (exactly once each,
    if the store did its job): what the benchmark and the hall's tests check. A damaged line raises."""
    counts = collections.Counter()
    for path in glob.glob(os.path.join(outdir, "board-*", "*.log")):
        with open(path, encoding="ascii") as file:
            for line in file:
                record = unframe(line)
                counts[(record["clock"], record["seq"])] += 1
    return counts


class Hall:
    """The broker, the director and the clocks' processes of one run, in `folder`; the clocks'
    state (journals) in `clocks_dir`."""

    def __init__(self, folder, clocks_dir, clocks, processes, speed, viewers=0, health=True):
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
        self.viewers = [PageWatcher(self.director.web_port, keep=False).start() for _ in range(viewers)]
        self.fleets = fleet_processes(
            folder, clocks_dir, self.broker.port, users, clocks, processes, speed, health=health
        )
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
        for viewer in self.viewers:
            viewer.close()
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


def run(plan, folder, progress, health=True):
    """Run the hall as the module says; returns the figures (a dict keyed by `KEYS`, and details);
    without `health`, the clocks' states carry none (the health column's cost: the difference)."""
    clocks, processes, speed, steady_s, recover_s, last_s, viewers = plan
    load_before = os.getloadavg()[0]
    progress.phase(f"mosquitto, tileclock hall and {clocks} clocks in {processes} processes, in {folder}")
    # the clocks' journals in memory: on a hall each clock fsyncs to its own card; here 200 clocks
    # would queue on one disk and fall behind their game time. The broker and the director stay on disk.
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    clocks_dir = tempfile.mkdtemp(prefix="tileclock-hall-bench-clocks-", dir=memory or folder)
    hall = Hall(folder, clocks_dir, clocks, processes, speed, viewers, health=health)
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
        progress.phase("the broker is killed (SIGKILL: what it had not saved is gone) and started again")
        with windows("broker_killed"):
            hall.broker.stop(kill=True)
            hall.broker.start()
            _play_for(recover_s, watcher, progress, "after the broker's kill")
        progress.phase("the director is killed and started again")
        with windows("director_restart"):
            hall.director.kill()
            hall.director.start()
            _play_for(recover_s, watcher, progress, "after the director's restart")
        progress.phase(
            "the director is killed, then the broker (its queue for the director since the last autosave gone)"
        )
        with windows("broker_killed_director_down"):
            hall.director.kill()
            _play_for(min(5, recover_s), watcher, progress, "the director down")
            hall.broker.stop(kill=True)
            hall.broker.start()
            hall.director.start()
            _play_for(recover_s, watcher, progress, "after the double fault")
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
    write_delays(os.path.join(folder, "record-to-page.csv"), delays, sent, windows)
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
        "viewers": 1 + viewers,
        "health": health,
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


def main(
    quick=False, as_json=False, clocks=None, processes=None, viewers=None, speed=None, out=None, health=True
):
    """`tileclock hall-bench`: its figures, as a table or (`as_json`) one JSON object; each of
    `clocks`, `processes`, `viewers` and `speed` left None is the plan's (`quick` or full), and
    `out` (the folder for the broker, journals and records) a new folder on a disk; without
    `health`, the clocks' states carry no health (run both: the difference is its cost)."""
    kind = "quick" if quick else "full"
    planned_clocks, planned_processes, planned_speed, *phases = PLANS[kind]
    viewers = VIEWERS[kind] if viewers is None else viewers
    plan = (
        clocks or planned_clocks,
        processes or planned_processes,
        speed or planned_speed,
        *phases,
        viewers,
    )
    folder = out or tempfile.mkdtemp(prefix="tileclock-hall-bench-", dir=pick_state_parent())
    os.makedirs(folder, exist_ok=True)
    try:
        figures = run(plan, folder, Progress(8), health=health)
    except BrokerError as error:
        print(f"tileclock hall-bench: {error}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(figures))
        return 0
    print(table(figures))
    print(
        f"(machine: {os.cpu_count()} cores, load average {figures['load_average']:.1f} before the run; "
        f"{figures['processes']} clock processes at {figures['speed']:g} times real time, "
        f"the longest step {figures['clocks_longest_step_s']:.1f} s; {figures['records_timed']:,} records "
        f"timed; the clocks' states {'with' if figures['health'] else 'without'} their health; "
        f"CPU in % of one core; broker and director on {figures['filesystem']} in {folder}, "
        f"the clocks' journals on {figures['clocks_filesystem']})"
    )
    return 0
