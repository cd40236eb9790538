"""`tileclock bench`: how exact, idle, quick and small the clock is, measured on this machine.

The benchmark prints figures; it asserts nothing and is not part of the tests.
The real-time figures come from the service itself: `tileclock run --simulate`
in its own process (its own loop, threads, checkpoints and journal; simulated
buttons and panels; the record line on a pty read by this process as a
director's computer would), with its state directory on a real disk. Wake-ups
and CPU are read from /proc for every thread of that process. Each figure is
shown beside what the usual way would give, on the same run: a whole-second
ticking clock, luma's stock driver and the floor of bytes that change, and a
copy of lgpio's 0.5 ms polling loop. Progress goes to stderr.
"""

import json
import operator
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
from ..device.config import Config
from ..device.hardware.oled import bus_ns
from ..device.timings import load as load_timings
from . import procstat, storage
from .busbytes import measure as measure_bus
from .busbytes import sample_game
from .exactness import beside_a_ticking_clock, exact_max_error_ns

KEYS = (
    "exact_max_error_ns",
    "wrong_penalty_pct",
    "wakeups_per_s",
    "cpu_percent",
    "press_to_record_p99_ms",
    "press_to_frame_p99_ms",
    "press_to_panel_p99_ms",
    "bus_ms_per_switch",
    "bus_bytes_per_tick",
    "bus_bytes_per_switch",
    "startup_s",
    "rss_mb",
    "startup_s_1000_games",
    "rss_mb_1000_games",
    "export_rss_mb_1000_games",
    "replay_rss_mb_1000_games",
    "flood_rss_mb",
    "flood_press_to_line_max_ms",
)

#: (comparison, target) for each figure that has one.
TARGETS = {
    "exact_max_error_ns": ("==", 0),
    "wrong_penalty_pct": ("==", 0),
    "wakeups_per_s": ("<=", 1.1),
    "cpu_percent": ("<", 0.5),
    "press_to_panel_p99_ms": ("<", 20),
    "startup_s": ("<", 0.5),
    "rss_mb": ("<", 45),
    "export_rss_mb_1000_games": ("<", 60),
    "replay_rss_mb_1000_games": ("<", 60),
    "flood_rss_mb": ("<", 100),
    "flood_press_to_line_max_ms": ("<", 100),
}

#: Figures whose target is relative: at most this many times another figure of the same run.
RELATIVE_TARGETS = {
    "startup_s_1000_games": ("startup_s_0_games", 1.10),
    "rss_mb_1000_games": ("rss_mb_0_games", 1.10),
}

#: How long each phase runs: (idle window s, presses, lgpio-style poll window s, game minutes for the
#: bus bytes, random games beside a ticking clock, random inputs against the reference).
PLANS = {"full": (60, 2000, 10, 40, 5000, 50_000), "quick": (20, 400, 5, 10, 1000, 10_000)}
PRESS_EVERY_S = 0.05  # a press every 50 ms, alternating A and B: well over a switch's bus time apart
PRESS_HOLD_S = 0.02  # held 20 ms, so a late script thread seldom shrinks a press under the 5 ms glitch filter


class Progress:
    """Which phase runs and how far along it is, on stderr (stdout stays for the figures)."""

    def __init__(self, phases, stream=sys.stderr):
        self.phases = phases
        self.stream = stream
        self.number = 0
        self.started = time.monotonic()

    def phase(self, name):
        self.number += 1
        self.say(f"[{self.number}/{self.phases}] {name}")

    def say(self, text):
        print(f"bench {time.monotonic() - self.started:6.1f}s  {text}", file=self.stream, flush=True)


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


def press_latencies(rows, hz):
    """From the service's timings: for each press that switched the running side, the times from its
    edge's stamp (the switch record's exact instant) to the panels, the journal and the links, with
    the panel bus time worked out from the wake's bytes and transactions at `hz`."""
    found = {"frame": [], "panel": [], "record": [], "sent": [], "bus": []}
    for row in rows:
        pressed = [instant for _, ev, instant in row["records"] if ev == "switch" and instant is not None]
        if not pressed:
            continue
        # the wake's panel bytes carry every switch it made (two presses can share a wake when the loop is late)
        bus_ms = bus_ns(row["bus_bytes"], row["bus_transactions"], hz) / NS_PER_MS
        found["bus"].append(bus_ms)
        for edge in pressed:
            frame = (row["panels_ns"] - edge) / NS_PER_MS
            found["frame"].append(frame)
            found["panel"].append(frame + bus_ms)  # each bus write blocks on the Pi: the bus time adds
            found["record"].append((row["journaled_ns"] - edge) / NS_PER_MS + bus_ms)  # the fsync follows it
            found["sent"].append((row["sent_ns"] - edge) / NS_PER_MS + bus_ms)
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
):
    """Run `tileclock run --simulate` as a service and measure it; returns figures and details.

    The presses come `every_s` apart, each held `hold_s`."""
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
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        notify.close()
        os.close(clock_end)
        shutil.rmtree(scratch, ignore_errors=True)
    figures["filesystem"] = kind
    start, end = (int(t * NS_PER_S) for t in figures.pop("window_s"))
    in_window = [row for row in rows if start <= row["woke_ns"] <= end]
    figures["loop_wakeups_per_s"] = len(in_window) / ((end - start) / NS_PER_S)
    figures["fsyncs_per_s"] = sum(bool(row["records"]) for row in in_window) / ((end - start) / NS_PER_S)
    # the main thread sleeps in two places: waiting for the next wake, and in fsync waiting for the disk
    figures["disk_waits_per_s"] = max(
        0.0, figures.pop("main_thread_wakeups_per_s") - figures["loop_wakeups_per_s"]
    )
    latencies = press_latencies(rows, i2c_hz)
    figures["presses_measured"] = len(latencies["panel"])
    figures["switches_made"] = sum(ev == "switch" for row in rows for _, ev, _ in row["records"])
    for name in ("frame", "panel", "record", "sent"):
        figures[f"press_to_{name}_p99_ms"] = p99(latencies[name])
    figures["press_to_panel_median_ms"] = (
        statistics.median(latencies["panel"]) if latencies["panel"] else None
    )
    figures["bus_ms_per_switch"] = statistics.mean(latencies["bus"]) if latencies["bus"] else None
    figures["i2c_hz"] = i2c_hz
    return figures


def poll_like_lgpio():
    """A copy of lgpio 0.2.2's alert loop (lgPthAlerts.c): poll the lines with a 0.5 ms timeout,
    for ever, whether or not anything happens. Runs until killed."""
    quiet, _ = os.pipe()  # a line that never changes
    while True:
        select.select([quiet], [], [], 0.0005)


def measure_poll(window_s):
    """Wake-ups and CPU of the lgpio-style loop, read from /proc the same way as the service's."""
    child = subprocess.Popen(
        [sys.executable, "-c", "from tileclock.bench.run import poll_like_lgpio as p; p()"]
    )
    try:
        time.sleep(1.0)
        before, t0 = procstat.threads(child.pid), time.monotonic()
        time.sleep(window_s)
        wakeups, cpu = rate(procstat.difference(before, procstat.threads(child.pid)), time.monotonic() - t0)
    finally:
        child.kill()
        child.wait()
    return {"poll_wakeups_per_s": wakeups, "poll_cpu_percent": cpu}


def run(quick=False, state_dir=None, progress=None):
    """Every figure, as a dict with at least `KEYS` (and the comparisons and details)."""
    idle_s, presses, poll_s, minutes, games, inputs = PLANS["quick" if quick else "full"]
    progress = progress or Progress(6)
    progress.phase(
        f"exactness: {inputs:,} random presses, stops and corrections against the reference (virtual time)"
    )
    figures = {"exact_max_error_ns": exact_max_error_ns(inputs)}
    progress.phase(f"exactness: {games:,} random games beside a whole-second ticking clock (virtual time)")
    beside = beside_a_ticking_clock(games)
    figures["exact_max_error_ns"] = max(figures["exact_max_error_ns"], beside["clock_max_error_ns"])
    figures["wrong_penalty_pct"] = beside["clock_wrong_penalty_pct"]
    figures.update({key: value for key, value in beside.items() if key.startswith("tick_")})
    figures["overtime_games"] = beside["overtime_games"]
    progress.phase(
        f"panel bus bytes: a {minutes}-minute simulated game; tileclock, the floor, luma's stock driver"
    )
    bus = measure_bus(sample_game(minutes=minutes))
    for key in ("bytes", "floor_bytes", "stock_bytes", "transactions"):
        for kind in ("tick", "switch"):
            figures[f"bus_{key}_per_{kind}"] = bus[f"{key}_per_{kind}"]
    progress.phase(
        f"the service: tileclock run --simulate; {idle_s} s with A running, then {presses:,} presses"
    )
    figures["load_average"] = os.getloadavg()[0]  # other work on this machine shows in the latencies
    figures.update(measure_service(idle_s, presses, progress, state_dir))
    progress.phase(f"beside it: a copy of lgpio's 0.5 ms alert loop, {poll_s} s")
    figures.update(measure_poll(poll_s))
    progress.phase("history and a flooded line: start-up on 1,000 games, export, replay, 500 resend 0")
    figures.update(storage.run(progress, pick_state_parent(state_dir)))
    progress.say("done")
    return figures


_COMPARISONS = {"==": operator.eq, "<=": operator.le, "<": operator.lt, ">=": operator.ge}


def verdict(key, value, targets=TARGETS, figures=None):
    """'met', 'MISSED', or '' for a figure without a target (or whose reference is not in `figures`)."""
    if key in RELATIVE_TARGETS and figures and value is not None:
        reference, factor = RELATIVE_TARGETS[key]
        if figures.get(reference):
            return "met" if value <= factor * figures[reference] else "MISSED"
    if key not in targets or value is None:
        return ""
    comparison, target = targets[key]
    return "met" if _COMPARISONS[comparison](value, target) else "MISSED"


def _shown(value, digits=3):
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def beside(key, figures):
    """What the usual way gives for the same figure, in the same run."""
    f = figures.get
    none, one = f(key.replace("1000_games", "0_games")), f(key.replace("1000_games", "1_game"))
    if key in ("startup_s_1000_games", "rss_mb_1000_games") and f(key) and none and one:
        return (
            f"no history {_shown(none)} ({_shown(100 * (f(key) / none - 1), 1)} %), "
            f"one game {_shown(one)} ({_shown(100 * (f(key) / one - 1), 1)} %)"
        )
    if key == "flood_press_to_line_max_ms" and f("flood_presses_timed"):
        return (
            f"{f('flood_presses_timed')} presses; {f('flood_lines_resent'):,} lines resent for 500 requests"
        )
    if key == "exact_max_error_ns" and f("tick_median_error_ms") is not None:
        return f"1 s ticking clock: median {_shown(f('tick_median_error_ms') / 1000, 2)} s, worst {_shown(f('tick_max_error_ms') / 1000, 2)} s"
    if key == "wrong_penalty_pct" and f("tick_wrong_penalty_pct") is not None:
        return f"1 s ticking clock: {_shown(f('tick_wrong_penalty_pct'), 1)} % of {f('overtime_games'):,} overtime games"
    if key == "wakeups_per_s" and f("poll_wakeups_per_s") is not None:
        split = ""
        if f("loop_wakeups_per_s") is not None:
            split = (
                f"loop {_shown(f('loop_wakeups_per_s'), 2)} + disk waits in {_shown(f('fsyncs_per_s'), 2)} fsyncs "
                f"{_shown(f('disk_waits_per_s'), 2)} + other threads {_shown(f('other_threads_wakeups_per_s'), 2)}; "
            )
        return f"{split}lgpio-style poll: {_shown(f('poll_wakeups_per_s'), 0)}"
    if key == "cpu_percent" and f("poll_cpu_percent") is not None:
        return f"lgpio-style poll: {_shown(f('poll_cpu_percent'), 2)}"
    if key == "press_to_panel_p99_ms" and f("bus_ms_per_switch") is not None and f("i2c_hz"):
        return f"of which bus {_shown(f('bus_ms_per_switch'), 1)} ms at {f('i2c_hz') // 1000} kHz"
    if key in ("bus_bytes_per_tick", "bus_bytes_per_switch"):
        kind = key.rsplit("_", 1)[1]
        if f(f"bus_floor_bytes_per_{kind}") is not None:
            return f"floor {_shown(f(f'bus_floor_bytes_per_{kind}'), 1)}, luma stock {_shown(f(f'bus_stock_bytes_per_{kind}'), 0)}"
    return ""


def table(figures):
    """The figures as a plain-text table: value, the usual way beside it, the target, met or missed."""
    lines = [f"{'figure':24} {'value':>11}  {'target':9} {'':6}  beside it"]
    for key in KEYS:
        value = figures.get(key)
        target = " ".join(map(str, TARGETS[key])) if key in TARGETS else ""
        if key in RELATIVE_TARGETS:
            target = f"<= {RELATIVE_TARGETS[key][1]}x"
        lines.append(
            f"{key:24} {_shown(value):>11}  {target:9} {verdict(key, value, figures=figures):6}  {beside(key, figures)}"
        )
    return "\n".join(lines)


def main(args):
    figures = run(quick=args.quick, state_dir=getattr(args, "state_dir", None))
    if args.json:
        print(json.dumps(figures))
    else:
        print(table(figures))
        print(
            f"(machine: {os.uname().machine}, {os.cpu_count()} cores, load average {figures.get('load_average', 0):.1f} "
            f"before the service ran; its state on {figures.get('filesystem')}; {figures.get('threads')} threads; "
            f"presses measured: {figures.get('presses_measured')})"
        )
    missed = [key for key in KEYS if verdict(key, figures.get(key), figures=figures) == "MISSED"]
    if missed and not args.json:
        print(f"missed: {', '.join(missed)}")
    return 0
