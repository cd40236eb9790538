"""`tileclock bench`: how exact, idle, quick and small the clock is, measured on this machine.

The benchmark prints figures; it asserts nothing and is not part of the tests.
Real-time figures come from child processes running the real daemon loop on
simulated hardware (gpiozero mock pins stamped with the real monotonic clock,
panels on luma's drivers over a recording bus, records through `loop://`).
"""

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace

from ..clock.core import ButtonTiming, GameClock
from ..clock.rules import PROFILES
from ..clock.timecode import NS_PER_MS, NS_PER_S
from ..device.config import Config
from ..device.hardware.virtual import MonotonicTime
from ..device.journal import Journal
from .busbytes import measure as measure_bus
from .busbytes import sample_game

KEYS = (
    "exact_max_error_ns",
    "wakeups_per_s",
    "cpu_percent",
    "press_to_record_p99_ms",
    "press_to_frame_p99_ms",
    "bus_bytes_per_tick",
    "bus_bytes_per_switch",
    "startup_s",
    "rss_mb",
)


def exact_max_error_ns(inputs=100_000, seed=1):
    """Largest gap between the time the core charged and the exact sum of edge-to-edge intervals.

    Random presses, stops and corrections at random nanosecond instants, in
    virtual time; the reference adds up the intervals itself.
    """
    rng = random.Random(seed)
    clock = GameClock(PROFILES["naspa"], times_s={"A": 10**7, "B": 10**7})  # no overtime: only time
    clock.new_game(0)
    expected = {"A": 0, "B": 0}
    t = last = 0
    worst = 0
    for _ in range(inputs):
        gesture = rng.choices(["A", "B", "STOP", "correction"], weights=[8, 8, 1, 1])[0]
        t += rng.randrange(30 * NS_PER_MS, 30 * NS_PER_S)
        if gesture == "correction":
            edges = [("STOP", True, t), (rng.choice("AB"), True, t + 40 * NS_PER_MS)]
            edges += [(edges[1][0], False, t + 80 * NS_PER_MS), ("STOP", False, t + 120 * NS_PER_MS)]
        else:
            edges = [(gesture, True, t), (gesture, False, t + rng.randrange(25 * NS_PER_MS, 400 * NS_PER_MS))]
        for button, down, at in edges:
            if clock.run:
                expected[clock.run] += at - last
            last = at
            clock.edge(button, down, at)
            for side in "AB":
                worst = max(worst, abs(clock.used_ns(side, at) - expected[side]))
        t = edges[-1][2]
    return worst


def _read_forever(fd):
    try:
        while os.read(fd, 4096):
            pass
    except OSError:
        pass


def _child(seconds, presses, journal):
    """Run in a child process: the real loop on simulated parts; print figures as JSON."""
    from ..device.assembly import RunningClock, simulated_parts

    spawned_ns = int(os.environ["TILECLOCK_BENCH_SPAWNED_NS"])
    notes = {"records": [], "frames": []}

    def on_frames(now_ns, frames):
        notes["frames"].append(time.monotonic_ns())

    # the record line is a pty, read out by a thread as a director's computer would
    director, clock_end = os.openpty()
    threading.Thread(target=_read_forever, args=(director,), daemon=True).start()
    config = replace(Config(), timing=ButtonTiming(min_turn_ms=0))  # measure latency, not the collision rule
    parts = simulated_parts(MonotonicTime(), serial_url=os.ttyname(clock_end), journal=Journal(journal))
    sim = RunningClock(config, parts, checkpoints=False, on_frames=on_frames)
    first_frame_ns = time.monotonic_ns()  # building the clock booted it and showed its first frame

    def note(record):
        notes["records"].append((record.ev, record.extra.get("button"), time.monotonic_ns()))

    sim.daemon.on_record = note
    result = {"startup_s": (first_frame_ns - spawned_ns) / NS_PER_S}
    stop = threading.Event()
    edges = []  # (button, t_ns) of each press, stamped just before its pin changes

    def press(button, hold_ns):
        edges.append((button, time.monotonic_ns()))
        sim.press(button, True)
        time.sleep(hold_ns / NS_PER_S)
        sim.press(button, False)

    def driver():
        press("B", 10 * NS_PER_MS)  # A runs
        time.sleep(0.5)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu0, wake0, t0 = usage.ru_utime + usage.ru_stime, sim.daemon.wakeups, time.monotonic()
        time.sleep(seconds)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        elapsed = time.monotonic() - t0
        result["wakeups_per_s"] = (sim.daemon.wakeups - wake0) / elapsed
        result["cpu_percent"] = 100 * (usage.ru_utime + usage.ru_stime - cpu0) / elapsed
        edges.clear()
        notes["records"].clear()  # no record came from the idle window: a side ran without a penalty
        for index in range(presses):
            press("A" if index % 2 == 0 else "B", 10 * NS_PER_MS)
            time.sleep(0.010)
        time.sleep(0.2)
        stop.set()
        sim.daemon.post_edge("STOP", False, time.monotonic_ns())  # wake the loop so it sees the stop

    thread = threading.Thread(target=driver, daemon=True)
    thread.start()
    sim.daemon.run_forever(now_ns=time.monotonic_ns, should_stop=stop.is_set, boot=False)  # booted above
    thread.join()

    # every press makes exactly one record naming its button (a switch: the turns alternate, min turn 0)
    pressed = [(ev, written_ns) for ev, button, written_ns in notes["records"] if button]
    to_record, to_frame = [], []
    frames = sorted(notes["frames"])
    for (_button, pressed_ns), (ev, written_ns) in zip(edges, pressed, strict=False):
        if ev != "switch":
            continue
        to_record.append((written_ns - pressed_ns) / NS_PER_MS)
        after = next((f for f in frames if f >= written_ns), None)
        if after is not None:
            to_frame.append((after - pressed_ns) / NS_PER_MS)
    result["press_to_record_p99_ms"] = _p99(to_record)
    result["press_to_frame_p99_ms"] = _p99(to_frame)
    result["presses_measured"] = len(to_record)
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _p99(values):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def run(quick=False):
    """All the figures, as a dict keyed by `KEYS` (and a few details)."""
    seconds, presses = (30, 1000) if quick else (60, 2000)
    scratch = tempfile.mkdtemp(prefix="tileclock-bench-")
    journal = os.path.join(scratch, "journal.log")
    env = dict(os.environ, TILECLOCK_BENCH_SPAWNED_NS=str(time.monotonic_ns()))
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from tileclock.bench.run import _child; _child({seconds}, {presses}, {journal!r})",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    # the virtual-time figures need no real time: work them out on the other core meanwhile
    figures = {"exact_max_error_ns": exact_max_error_ns(100_000)}
    bus = measure_bus(sample_game(minutes=10 if quick else 40))
    out, _ = child.communicate()
    shutil.rmtree(scratch, ignore_errors=True)
    if child.returncode:
        raise RuntimeError(f"benchmark child failed with exit code {child.returncode}")
    figures.update(json.loads(out.strip().splitlines()[-1]))
    figures["bus_bytes_per_tick"] = bus["bytes_per_tick"]
    figures["bus_bytes_per_switch"] = bus["bytes_per_switch"]
    return figures


TARGETS = {
    "exact_max_error_ns": ("==", 0),
    "wakeups_per_s": ("<=", 2.2),
    "cpu_percent": ("<", 1),
    "press_to_frame_p99_ms": ("<", 10),
    "bus_bytes_per_tick": ("<=", 0.4 * 2048),
    "startup_s": ("<", 1.5),
    "rss_mb": ("<", 60),
}


def table(figures):
    """The figures as a plain-text table with the targets beside them."""
    lines = [f"{'figure':26} {'value':>12}  target"]
    for key in KEYS:
        value = figures.get(key)
        shown = "n/a" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))
        target = TARGETS.get(key)
        lines.append(f"{key:26} {shown:>12}  {'' if not target else ' '.join(map(str, target))}")
    return "\n".join(lines)


def main(args):
    figures = run(quick=args.quick)
    if args.json:
        print(json.dumps({key: figures.get(key) for key in KEYS}))
    else:
        print(table(figures))
        print(
            f"(machine: {os.uname().machine}, {os.cpu_count()} cores; presses measured: {figures.get('presses_measured')})"
        )
    return 0
