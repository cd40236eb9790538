"""The service measured for `tileclock bench`: `tileclock run --simulate` in its own process, pressed
by a script, its wake-ups and CPU read from /proc and its press latencies from its own timings."""

import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from ..clock.timecode import NS_PER_MS, NS_PER_S
from ..device.config import parse_config
from ..device.config_schema import Config
from ..device.timings import load as load_timings
from ..device.timings import load_boot
from ..device.wiring import bus_ns, bus_time_ns
from . import procstat

#: the priority systemd/tileclock.service gives the clock (`Nice=`): the bench runs the service at it
#: too when it may (as root), as systemd does on the Pi
SERVICE_NICE = -10
PRESS_EVERY_S = 0.05  # a press every 50 ms, alternating A and B: well over a switch's bus time apart
PRESS_HOLD_S = 0.02  # held 20 ms, so a late script thread seldom shrinks a press under the 5 ms glitch filter


def as_the_unit_runs_it(pid):
    """Give the service's process the unit's priority (its threads, made later, inherit it);
    returns the niceness it runs at (0 if this process may not raise it)."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, SERVICE_NICE)
        return SERVICE_NICE
    except PermissionError:
        return 0


def state_dir_candidates():
    """Where the service's journal may live for the run: folders on a disk, not in memory."""
    return ["/var/tmp", os.path.expanduser("~/.cache"), os.getcwd(), tempfile.gettempdir()]


def pick_state_parent(wanted=None):
    """A folder for the service's state: `wanted`, or the first candidate on a disk filesystem."""
    for folder in [wanted] if wanted else state_dir_candidates():
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK):
            kind = procstat.filesystem(folder)[0]
            if wanted or kind not in procstat.MEMORY_FILESYSTEMS:
                return folder
    return tempfile.gettempdir()


def press_script(idle_s, presses, every_s=PRESS_EVERY_S, hold_s=PRESS_HOLD_S):
    """A simulator script: B starts A at 0.5 s; A runs alone for the idle window; then `presses`
    presses, A and B by turns. Returns the script text and when the presses start (s)."""
    first = 0.5 + 1.0 + idle_s + 0.5
    lines = ["0.5 press B"]
    for index in range(presses):
        button = "A" if index % 2 == 0 else "B"
        t = first + index * every_s
        lines.append(f"{t:.3f} down {button}")
        lines.append(f"{t + hold_s:.3f} up {button}")
    return "\n".join(lines) + "\n", first


def press_latencies(rows, hz, panels=None, spi_hz=8_000_000):
    """From the service's timings: for each press that switched the running side, the times from its
    edge's stamp (the switch record's exact instant) to the turn marks shown, the panels, the
    journal and the links, with the panel bus time worked out from the wake's bytes and transactions
    at `hz`: by default both panels on one bus (each write blocks on the Pi, so the times add); with
    `panels` (their configs, in the order the rows count their buses) as they are wired
    (device/wiring.py: separate buses are written at once on a press). Also each tick's bus time
    (a wake of no edge that sent bytes: its buses one after the other)."""
    found = {"frame": [], "turn": [], "panel": [], "record": [], "sent": [], "bus": [], "turn_bus": []}
    found["tick_bus"] = []

    def bus_ms(counts, at_once=True):
        if panels is None:
            return bus_ns(sum(b for b, _ in counts), sum(t for _, t in counts), hz) / NS_PER_MS
        return bus_time_ns(counts, panels, hz, spi_hz, at_once) / NS_PER_MS

    for row in rows:
        pressed = [instant for _, ev, instant in row["records"] if ev == "switch" and instant is not None]
        counts = row.get("buses") or [[row["bus_bytes"], row["bus_transactions"]]]
        if not pressed:
            if not row["edges"] and row["bus_bytes"]:
                found["tick_bus"].append(bus_ms(counts, at_once=False))
            continue
        # the wake's panel bytes carry every switch it made (two presses can share a wake when the loop is late)
        wake_ms = bus_ms(counts)
        turn_ms = bus_ms(row.get("turn_buses") or [[0, 0]] * len(counts))
        found["bus"].append(wake_ms)
        found["turn_bus"].append(turn_ms)
        for edge in pressed:
            frame = (row["panels_ns"] - edge) / NS_PER_MS
            found["frame"].append(frame)
            found["turn"].append((row.get("turn_ns", row["panels_ns"]) - edge) / NS_PER_MS + turn_ms)
            found["panel"].append(frame + wake_ms)
            found["record"].append((row["journaled_ns"] - edge) / NS_PER_MS + wake_ms)  # the fsync follows it
            found["sent"].append((row["sent_ns"] - edge) / NS_PER_MS + wake_ms)
    return found


def p99(values):
    """The 99th percentile (nearest rank), or None."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def rate(diff, elapsed_s):
    """(wake-ups a second, CPU percent) summed over a `procstat.difference`."""
    wakeups = sum(voluntary for voluntary, _, _ in diff.values())
    cpu_s = sum(cpu for _, _, cpu in diff.values())
    return wakeups / elapsed_s, 100 * cpu_s / elapsed_s


def _drain(fd, switches):
    """Read the record line as a director's computer would, counting the switches."""
    rest = b""
    try:
        while data := os.read(fd, 65536):
            *whole, rest = (rest + data).split(b"\n")
            switches[0] += sum(b'"ev":"switch"' in line for line in whole)
    except OSError:
        return


def measure_service(
    idle_s,
    presses,
    progress,
    state_parent=None,
    i2c_hz=Config().i2c_hz,
    every_s=PRESS_EVERY_S,
    hold_s=PRESS_HOLD_S,
    wiring=None,
    speech=None,
):
    """Run `tileclock run --simulate` as a service and measure it; returns figures and details.

    The presses come `every_s` apart, each held `hold_s`; the panels are wired as `wiring` says
    (device/wiring.py; None: the config's default); `speech`: the sides that hear ("A", "B",
    "AB"; None: speech off), espeak-ng and aplay then run beside the loop as on a Pi."""
    config = parse_config({"screens": {"wiring": wiring}} if wiring else {})
    scratch = tempfile.mkdtemp(prefix="tileclock-bench-", dir=pick_state_parent(state_parent))
    kind, source, _ = procstat.filesystem(scratch)
    progress.say(f"state directory {scratch} on {kind} ({source})")
    if kind in procstat.MEMORY_FILESYSTEMS:
        progress.say(f"warning: {kind} is memory: fsync costs nothing there (use --state-dir on a disk)")
    director, clock_end = os.openpty()
    switches = [0]
    threading.Thread(target=_drain, args=(director, switches), daemon=True).start()
    config_path = os.path.join(scratch, "config.toml")
    with open(config_path, "w") as file:
        file.write(
            "[buttons]\nmin_turn_ms = 0  # measure latency, not the collision rule\n"
            f'[serial]\nport = "{os.ttyname(clock_end)}"\n[screens]\ni2c_hz = {i2c_hz}\n'
            + (f'wiring = "{wiring}"\n' if wiring else "")
            + (f'[speech]\nsides = "{speech}"\n' if speech else "")
        )
    script, presses_at = press_script(idle_s, presses, every_s, hold_s)
    script_path = os.path.join(scratch, "presses.txt")
    with open(script_path, "w") as file:
        file.write(script)
    timings_path = os.path.join(scratch, "timings.jsonl")
    notify_path = os.path.join(scratch, "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    env.pop("WATCHDOG_USEC", None)
    command = [sys.executable, "-m", "tileclock", "run", "--simulate", "--config", config_path]
    command += [
        "--state-dir",
        os.path.join(scratch, "state"),
        "--script",
        script_path,
        "--stay",  # the bench stops it, when it has measured
        "--timings",
        timings_path,
    ]
    spawned = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    nice = as_the_unit_runs_it(child.pid)
    try:
        if not select.select([notify], [], [], 30)[0]:
            raise RuntimeError("the service did not say READY=1 within 30 s")
        ready = time.monotonic()
        notify.recv(4096)
        figures = {"startup_s": ready - spawned}
        progress.say(f"service up: READY=1 after {figures['startup_s']:.3f} s; A runs, nobody presses")
        time.sleep(1.5)
        before, t0 = procstat.threads(child.pid), time.monotonic()
        window_end = ready + 0.5 + idle_s  # the presses start a second later
        while (left := window_end - time.monotonic()) > 0:
            time.sleep(min(left, max(1, idle_s / 6)))
            progress.say(f"idle window {time.monotonic() - t0:4.0f}/{window_end - t0:.0f} s")
        after, t1 = procstat.threads(child.pid), time.monotonic()
        idle = procstat.difference(before, after)
        figures["wakeups_per_s"], figures["cpu_percent"] = rate(idle, t1 - t0)
        figures["threads"] = len(after)
        main = idle.get(child.pid, (0, 0, 0.0))[0]
        figures["other_threads_wakeups_per_s"] = (sum(v for v, _, _ in idle.values()) - main) / (t1 - t0)
        figures["main_thread_wakeups_per_s"] = main / (t1 - t0)
        figures["window_s"] = (t0, t1)
        done_at = ready + presses_at + presses * every_s + 0.5
        while time.monotonic() < done_at:
            time.sleep(min(2.0, max(0.0, done_at - time.monotonic())))
            progress.say(f"presses: {switches[0]:,} of {presses:,} switches out on the record line")
        figures["rss_mb"] = procstat.peak_rss_mb(child.pid)
        child.send_signal(signal.SIGTERM)
        _, errors = child.communicate(timeout=30)
        if child.returncode:
            raise RuntimeError(f"the service exited with {child.returncode}: {errors.decode()[-500:]}")
        rows = load_timings(timings_path)
        boot = load_boot(timings_path)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        notify.close()
        os.close(clock_end)
        shutil.rmtree(scratch, ignore_errors=True)
    figures["filesystem"] = kind
    figures["service_nice"] = nice
    start, end = (int(t * NS_PER_S) for t in figures.pop("window_s"))
    in_window = [row for row in rows if start <= row["woke_ns"] <= end]
    figures["loop_wakeups_per_s"] = len(in_window) / ((end - start) / NS_PER_S)
    figures["fsyncs_per_s"] = sum(bool(row["records"]) for row in in_window) / ((end - start) / NS_PER_S)
    # the main thread sleeps in two places: waiting for the next wake, and in fsync waiting for the disk
    figures["disk_waits_per_s"] = max(
        0.0, figures.pop("main_thread_wakeups_per_s") - figures["loop_wakeups_per_s"]
    )
    latencies = press_latencies(rows, i2c_hz, config.panels, config.spi_hz)
    figures["presses_measured"] = len(latencies["panel"])
    figures["switches_made"] = sum(ev == "switch" for row in rows for _, ev, _ in row["records"])
    for name in ("frame", "panel", "record", "sent"):
        figures[f"press_to_{name}_p99_ms"] = p99(latencies[name])
    figures["press_to_turn_shown_p99_ms"] = p99(latencies["turn"])
    figures["press_to_turn_shown_median_ms"] = (
        statistics.median(latencies["turn"]) if latencies["turn"] else None
    )
    figures["press_to_panel_median_ms"] = (
        statistics.median(latencies["panel"]) if latencies["panel"] else None
    )
    figures["bus_ms_per_switch"] = statistics.mean(latencies["bus"]) if latencies["bus"] else None
    figures["turn_bus_ms_per_switch"] = (
        statistics.mean(latencies["turn_bus"]) if latencies["turn_bus"] else None
    )
    figures["bus_ms_per_tick"] = statistics.mean(latencies["tick_bus"]) if latencies["tick_bus"] else None
    figures["wiring"] = config.wiring
    figures["i2c_hz"] = i2c_hz
    if boot:  # the panels' start-up and first frame, on the bus before READY=1 on the Pi
        figures["boot_bus_ms"] = bus_time_ns(boot, config.panels, i2c_hz, config.spi_hz, False) / NS_PER_MS
        figures["boot_to_clock_s"] = figures["startup_s"] + figures["boot_bus_ms"] / 1000
    return figures
