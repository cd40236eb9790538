"""`tileclock hall-bench --spectators N`: what N spectators cost `tileclock hall` (docs/hall.md,
"Spectators and the stream"; the figures in docs/performance.md).

What runs, each in processes of its own: the hall's mosquitto and the spectators' (bridged, as
`hall-setup` writes them), the real `tileclock hall`, simulated clocks playing whole games
(`FleetProcess`), the spectators' door (`tileclock spectators`), and, in the second phase, N
spectators: MQTT over WebSockets through the door, subscribed to the public topics as the pages
are, in a few child processes of paho clients, each from an address of its own on loopback (as
phones are: the door holds 16 connections an address). With `direct`, the spectators are plain
MQTT clients on the spectators' mosquitto's loopback listener past the door, for a comparison. The run: a phase with no spectator, then the spectators connect, then the same phase
with them; then the play stops and every spectator's states are compared with a reference
spectator's. It prints figures and asserts nothing; `tests/test_viewers.py` is its small, fast
version, which asserts that nothing is lost.
"""

import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time

import paho.mqtt.client as mqtt

from ..director.hall.broker import BrokerError, LocalBroker, free_port
from ..director.hall.viewers_broker import ViewersBroker
from ..wire.topics import VIEWERS
from . import procstat
from .hall import Director, journaled
from .hall_clocks import fleet_processes, split
from .run import Progress
from .service import pick_state_parent

#: (clocks, clock processes, speed, s of each phase, spectators' processes)
PLANS = {"full": (50, 2, 10.0, 60, 4), "quick": (10, 1, 20.0, 20, 2)}
#: the spectators' subscription: the pages'
TOPICS = ["tileclock/+/public"]


def rss_mb(pid):
    """The process's resident memory now (VmRSS), in MiB."""
    with open(f"/proc/{pid}/status") as file:
        for line in file:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


def spectator_address(group, n):
    """The loopback address spectator `n` of `group` connects from: one each, as phones."""
    return f"127.{10 + group}.{n // 250}.{n % 250 + 1}"


class Spectators:
    """`count` paho clients on the spectators' door `port` (over WebSockets, each from its own
    address of `group`), or, `direct`, on mosquitto's own port (plain MQTT), each keeping every
    (clock, seq) it gets."""

    def __init__(self, port, count, prefix, group=0, direct=False):
        self.got = [[] for _ in range(count)]
        self.subscribed = threading.Semaphore(0)
        self.clients = []
        for n in range(count):
            client = mqtt.Client(
                mqtt.CallbackAPIVersion.VERSION2,
                client_id=f"{prefix}-{n}",
                transport="tcp" if direct else "websockets",
            )
            client.on_connect = lambda c, u, f, r, p: c.subscribe([(name, 0) for name in TOPICS])
            client.on_subscribe = lambda *args: self.subscribed.release()
            client.on_message = self._keeper(self.got[n])
            client.connect_async(
                "127.0.0.1", port, bind_address="" if direct else spectator_address(group, n)
            )
            client.loop_start()
            self.clients.append(client)

    @staticmethod
    def _keeper(got):
        def keep(client, userdata, message):
            if message.payload and not message.retain:
                state = json.loads(message.payload)
                got.append((state["clock"], state["seq"]))

        return keep

    def wait_subscribed(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        for _ in self.clients:
            if not self.subscribed.acquire(timeout=max(0.0, deadline - time.monotonic())):
                return False
        return True

    def close(self):
        for client in self.clients:
            client.disconnect()
            client.loop_stop()


def _child(port, count, prefix, group=0, direct=False):
    """A child process of spectators: `ready` once subscribed; on `report`, JSON of each one's states."""
    spectators = Spectators(port, count, prefix, group, direct)
    print("ready" if spectators.wait_subscribed(120) else "late", flush=True)
    for line in sys.stdin:
        if line.strip() == "report":
            print(json.dumps([sorted(set(got)) for got in spectators.got]), flush=True)
            print(json.dumps([len(got) for got in spectators.got]), flush=True)
        elif line.strip() == "quit":
            break
    spectators.close()


def _spawn(port, count, prefix, group, direct):
    code = f"from tileclock.bench.spectators import _child; _child({port}, {count}, {prefix!r}, {group}, {direct})"
    # niced: the phones are not on the director's laptop; here they must not slow the clocks' play
    return subprocess.Popen(
        ["nice", "-n", "10", sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _phase(pids, seconds):
    """CPU (% of one core) and resident memory (MiB, at the end) of each named pid over `seconds`."""
    before = {name: procstat.cpu_seconds(pid) for name, pid in pids.items()}
    time.sleep(seconds)
    return {
        name: (100 * (procstat.cpu_seconds(pid) - before[name]) / seconds, rss_mb(pid))
        for name, pid in pids.items()
    }


def _door(broker_port):
    """`tileclock spectators` in a process of its own, in front of mosquitto on `broker_port`:
    (the process, its port)."""
    port = free_port()
    door = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tileclock",
            "spectators",
            "--listen",
            f"127.0.0.1:{port}",
            "--broker-port",
            str(broker_port),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    if "spectators' pages on" not in door.stdout.readline():
        door.kill()
        raise BrokerError("the spectators' door did not start")
    return door, port


def run(plan, spectators, folder, progress, direct=False):
    """The run the module describes; returns its figures."""
    clocks, processes, speed, phase_s, children = plan
    ids = [f"clock-{n}" for n in range(1, clocks + 1)]
    users = {name: secrets.token_urlsafe(12) for name in ["director", VIEWERS, *ids]}
    started = []
    try:
        broker = LocalBroker(os.path.join(folder, "broker"), users).start()
        started.append(broker.stop)
        viewers = ViewersBroker(os.path.join(folder, "viewers"), broker.port, users[VIEWERS]).start()
        started.append(viewers.stop)
        door, door_port = _door(viewers.mqtt_port)
        started.append(door.kill)
        director = Director(folder, broker.port, users["director"], free_port()).start()
        started.append(director.stop)
        reference = Spectators(door_port, 1, "reference", group=200)
        started.append(reference.close)
        reference.wait_subscribed(30)
        clocks_dir = tempfile.mkdtemp(
            prefix="clocks-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else folder
        )
        fleets = fleet_processes(folder, clocks_dir, broker.port, users, clocks, processes, speed)
        for fleet in fleets:
            fleet.start()
            started.append(fleet.quit)
        for fleet in fleets:
            fleet.expect("playing")
        pids = {
            "tileclock hall": director.process.pid,
            "hall's mosquitto": broker.process.pid,
            "spectators' mosquitto": viewers.process.pid,
            "spectators' door": door.pid,
        }
        progress.phase(f"{clocks} clocks playing at {speed:g}x; warming up")
        time.sleep(min(20, phase_s))
        figures = {"spectators": spectators, "clocks": clocks, "speed": speed, "phase_s": phase_s}
        figures["through"] = "mosquitto directly" if direct else "the door"

        def measure(name):
            before = len(reference.got[0])
            figures[name] = _phase(pids, phase_s)
            figures[f"states_{name}"] = len(reference.got[0]) - before

        progress.phase(f"{phase_s} s with no spectator")
        measure("alone")
        how = "plain MQTT past the door" if direct else "WebSockets through the door"
        progress.phase(f"{spectators} spectators connecting ({how}, in {children} processes, nice 10)")
        kids = [
            _spawn(viewers.mqtt_port if direct else door_port, count, f"spectator{n}", n, direct)
            for n, (_, count) in enumerate(split(spectators, children))
        ]
        for kid in kids:
            started.append(kid.kill)
            if kid.stdout.readline().strip() != "ready":
                raise RuntimeError("a spectators' process did not subscribe in time")
        cut = len(reference.got[0])  # every spectator is subscribed: from here each must get every state
        progress.phase(f"{phase_s} s with {spectators} spectators")
        measure("watched")
        mark = len(reference.got[0])
        time.sleep(5)  # the states of the phase's last moment on their way
        expected = set(reference.got[0][cut:mark])
        complete, received = 0, 0
        for kid in kids:
            kid.stdin.write("report\n")
            kid.stdin.flush()
            for kept in json.loads(kid.stdout.readline()):
                complete += expected <= {tuple(item) for item in kept}
            received += sum(json.loads(kid.stdout.readline()))
            kid.communicate("quit\n", timeout=120)
        figures.update(
            states_expected=len(expected), spectators_complete=complete, messages_received=received
        )
        progress.phase(f"{phase_s} s with no spectator again")
        measure("again")
        progress.phase("the play held; each clock's newest state to the reference spectator")
        for fleet in fleets:
            fleet.tell("hold", answer="held")
        newest = {}
        for clock, seq in journaled(clocks_dir)[0]:
            newest[clock] = max(newest.get(clock, -1), seq)

        def through():
            last = {}
            for clock, seq in list(reference.got[0]):
                last[clock] = max(last.get(clock, -1), seq)
            return sum(last.get(c) == s for c, s in newest.items())

        deadline = time.monotonic() + 60
        while through() < len(newest) and time.monotonic() < deadline:
            time.sleep(0.2)
        figures.update(reference_has_newest=through(), clocks_seen=len(newest))
        return figures
    finally:
        for stop in reversed(started):
            try:
                stop()
            except Exception as error:  # noqa: BLE001  # a stop that fails must not hide the others
                progress.say(f"stopping: {error}")


def report(figures):
    """The figures as a few lines of text."""
    phases = ("alone", "watched", "again")
    lines = [
        f"{figures['spectators']} spectators through {figures['through']}, {figures['clocks']} clocks at {figures['speed']:g}x, "
        f"{figures['phase_s']} s a phase (CPU in % of one core; memory resident at the phase's end):",
        f"{'':24}{'no spectator':>20}{'with them':>20}{'none again':>20}",
    ]
    for name in figures["alone"]:
        cells = "".join(f"{figures[p][name][0]:>9.1f}% {figures[p][name][1]:>6.1f} MiB" for p in phases)
        lines.append(f"{name:24}{cells}")
    lines.append(f"{'public states':24}" + "".join(f"{figures[f'states_{p}']:>20}" for p in phases))
    lines.append(
        f"{figures['spectators_complete']} of {figures['spectators']} spectators got every one of the "
        f"{figures['states_expected']} states made while they all watched ({figures['messages_received']:,} "
        f"messages in all); the reference spectator had each clock's newest state for "
        f"{figures['reference_has_newest']} of {figures['clocks_seen']} clocks"
    )
    return "\n".join(lines)


def main(
    spectators, quick=False, as_json=False, clocks=None, processes=None, speed=None, out=None, direct=False
):
    """`tileclock hall-bench --spectators N [--quick] [--json] [--direct]`: what `spectators`
    spectators cost the hall; `clocks`, `processes` and `speed` left None are the plan's, `out` a
    new folder; `direct`: the spectators past the door, on mosquitto itself."""
    kind = "quick" if quick else "full"
    planned_clocks, planned_processes, planned_speed, phase_s, children = PLANS[kind]
    plan = (
        clocks or planned_clocks,
        processes or planned_processes,
        speed or planned_speed,
        phase_s,
        children,
    )
    folder = out or tempfile.mkdtemp(prefix="tileclock-spectators-bench-", dir=pick_state_parent())
    os.makedirs(folder, exist_ok=True)
    try:
        figures = run(plan, spectators, folder, Progress(6), direct)
    except BrokerError as error:
        print(f"tileclock hall-bench: {error}", file=sys.stderr)
        return 1
    print(json.dumps(figures) if as_json else report(figures))
    return 0
