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
import os
import select
import subprocess
import sys
import time

from . import procstat, storage
from .busbytes import measure as measure_bus
from .busbytes import sample_game
from .exactness import beside_a_ticking_clock, exact_max_error_ns
from .report import KEYS, table, targets, verdict
from .service import measure_service, pick_state_parent, rate

#: How long each phase runs: (idle window s, presses, lgpio-style poll window s, game minutes for the
#: bus bytes, random games beside a ticking clock, random inputs against the reference).
PLANS = {"full": (60, 2000, 10, 40, 5000, 50_000), "quick": (20, 400, 5, 10, 1000, 10_000)}


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


def run(quick=False, state_dir=None, progress=None, speech=None):
    """Every figure, as a dict with at least `KEYS` (and the comparisons and details); `speech`:
    the sides the measured service speaks to (`--speech`), None for none."""
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
    figures.update(measure_service(idle_s, presses, progress, state_dir, speech=speech))
    figures["speech"] = speech or ""
    progress.phase(f"beside it: a copy of lgpio's 0.5 ms alert loop, {poll_s} s")
    figures.update(measure_poll(poll_s))
    progress.phase("history and a flooded line: start-up on 1,000 games, export, replay, 500 resend 0")
    figures.update(storage.run(progress, pick_state_parent(state_dir)))
    progress.say("done")
    return figures


def main(quick=False, as_json=False, state_dir=None, wiring=None, speech=None):
    """`tileclock bench`: the figures, as a table or (`as_json`) one JSON object; `wiring`: the
    wirings to price instead (`--wiring`); `speech`: the sides the service speaks to (`--speech`)."""
    if wiring:
        return main_wirings(wiring, quick, as_json, state_dir)
    figures = run(quick=quick, state_dir=state_dir, speech=speech)
    if as_json:  # every figure, and beside them each target and whether it was met
        print(json.dumps(dict(figures, targets=targets(figures))))
    else:
        print(table(figures))
        print(
            f"(machine: {os.uname().machine}, {os.cpu_count()} cores, load average {figures.get('load_average', 0):.1f} "
            f"before the service ran; its state on {figures.get('filesystem')}; {figures.get('threads')} threads; "
            f"presses measured: {figures.get('presses_measured')})"
        )
    missed = [key for key in KEYS if verdict(key, figures.get(key), figures=figures) == "MISSED"]
    if missed and not as_json:
        print(f"missed: {', '.join(missed)}")
    return 0


def main_wirings(wiring, quick=False, as_json=False, state_dir=None):
    """`tileclock bench --wiring ...`: the service's presses for each wiring named in `wiring`
    (`all`: every one), side by side."""
    from ..device.wiring import WIRINGS
    from .wirings import compare
    from .wirings import table as wirings_table

    names = list(WIRINGS) if "all" in wiring else list(dict.fromkeys(wiring))
    idle_s, presses = PLANS["quick" if quick else "full"][:2]
    found = compare(names, min(idle_s, 10), presses, Progress(len(names)), state_dir)
    load = os.getloadavg()[0]
    if as_json:
        print(json.dumps({"wirings": found, "load_average": load}))
    else:
        print(wirings_table(found))
        print(
            f"(bus times worked out from each bus's bytes and transactions at its clock; load average {load:.1f})"
        )
    return 0
