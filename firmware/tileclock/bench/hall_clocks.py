"""The clocks' side of `tileclock hall-bench`: child processes, each a `Fleet` of whole simulated
clocks playing through the broker, noting when each record is handed to paho (its publish)."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from ..director.hall.broker import write_private

_SEQ = re.compile(r'"seq":(\d+)')


def _fleet_child(spec_path):
    """Run in a child process: one `Fleet`, noting each record's publish. `hold` and `quit` arrive
    on stdin; `playing`, `held` and, at the end, the fleet's figures (JSON) go out on stdout."""
    from ..sim.fleet import Fleet

    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    fleet = Fleet(
        spec["state_dir"],
        spec.get("host", "127.0.0.1"),
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
            if not spec.get("health", True):  # `--no-health`: the state as before the health column
                sim.uplink.report_health(None)
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


def split(total, parts):
    """`total` things shared among at most `parts` takers as evenly as ceil division goes: each
    taker's (first index, count), none empty."""
    share = -(-total // parts)
    return [(n * share, min(share, total - n * share)) for n in range(parts) if n * share < total]


def fleet_processes(folder, clocks_dir, broker_port, passwords, clocks, processes, speed, health=True):
    """`clocks` clocks (`clock-1` on) in at most `processes` `FleetProcess`es, not started yet;
    without `health`, their states say none (what the health column costs the hall, measured)."""
    return [
        FleetProcess(folder, clocks_dir, n, broker_port, passwords, count, 1 + first, speed, health=health)
        for n, (first, count) in enumerate(split(clocks, processes))
    ]


class FleetProcess:
    """A child process of `count` clocks, `clock-FIRST` on; started again after a kill, its clocks
    take up their journals (a power cut). `host` is where the broker (or a fault proxy) is; `prefix`
    goes before the command, as `ip netns exec NAME` for a group in its own namespace (netns.py);
    without `health` its clocks' states carry no `health` (`hall-bench --no-health`)."""

    def __init__(
        self,
        folder,
        clocks_dir,
        number,
        broker_port,
        passwords,
        count,
        first,
        speed,
        host="127.0.0.1",
        prefix=(),
        health=True,
    ):
        self.number, self.count = number, count
        self.spec_path = os.path.join(folder, f"fleet-{number}.json")
        ids = [f"clock-{n}" for n in range(first, first + count)]
        self.spec = {
            "state_dir": clocks_dir,
            "host": host,
            "port": broker_port,
            "passwords": {clock: passwords[clock] for clock in ids},
            "count": count,
            "first": first,
            "speed": speed,
            "published": os.path.join(folder, f"published-{number}.log"),
            "health": health,
        }
        self.prefix = list(prefix)
        self.starts = 0
        self.longest_step_s = 0.0
        self.process = None

    def start(self):
        # a new seed each start: a clock started again plays on, not its first game over
        spec = dict(self.spec, seed=self.number * 1000 + self.starts)
        write_private(self.spec_path, json.dumps(spec))  # it holds the clock's broker password
        code = f"from tileclock.bench.hall_clocks import _fleet_child; _fleet_child({self.spec_path!r})"
        self.process = subprocess.Popen(
            [*self.prefix, sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
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
