"""What history and a flooded line cost the clock, measured on the service itself.

- Start-up with a long history: `tileclock run --simulate` on a state directory
  holding no game, one whole game and 1,000 (bench/history.py): time to
  READY=1 and peak resident memory a second after, each the median of five
  starts taken by turns.
- The director's tools on that history: peak resident memory of `tileclock
  export` (every game, to a folder) and `tileclock replay` (the last game).
- An earlier version's single-file journal of 300 games taken over into segments
  at the service's first start: the time to READY=1 and the peak resident memory.
- A flood: 500 `resend 0` requests in 5 s on the record line of a clock whose
  journal holds 2,000 records, while its buttons are pressed every 250 ms:
  the service's peak resident memory, and the time from each press's edge to
  its record arriving on the line (read by this process, as a director's
  computer would).
"""

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

from ..clock.timecode import NS_PER_MS
from ..wire.protocol import unframe
from . import procstat
from .history import make_history, make_legacy, sample_game
from .service import as_the_unit_runs_it

STARTS = 5
FLOOD_REQUESTS, FLOOD_S, FLOOD_PRESS_EVERY_S, FLOOD_AT_S = 500, 5.0, 0.25, 4.0


class Service:
    """`tileclock run --simulate` on `state_dir`, its record line on a pty this process reads."""

    def __init__(self, folder, state_dir, script=None):
        self.director, clock_end = os.openpty()
        self.clock_end = clock_end
        config = os.path.join(folder, "config.toml")
        with open(config, "w") as file:
            file.write(f'[buttons]\nmin_turn_ms = 0\n[serial]\nport = "{os.ttyname(clock_end)}"\n')
        notify_path = os.path.join(folder, f"notify-{time.monotonic_ns()}")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(notify_path)
        env = dict(os.environ, NOTIFY_SOCKET=notify_path)
        env.pop("WATCHDOG_USEC", None)
        command = [sys.executable, "-m", "tileclock", "run", "--simulate", "--config", config]
        command += ["--state-dir", state_dir] + (["--script", script, "--stay"] if script else [])
        self.spawned = time.monotonic()
        self.child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        as_the_unit_runs_it(self.child.pid)
        if not select.select([self.notify], [], [], 60)[0]:
            self.stop()
            raise RuntimeError("the service did not say READY=1 within 60 s")
        self.startup_s = time.monotonic() - self.spawned
        self.notify.recv(4096)

    def lines(self, until, timeout_s=30):
        """Read the record line until `until(lines)` (each line with its arrival time, monotonic ns)."""
        got, partial, deadline = [], b"", time.monotonic() + timeout_s
        while time.monotonic() < deadline and not until(got):
            if select.select([self.director], [], [], 0.05)[0]:
                now = time.monotonic_ns()
                partial += os.read(self.director, 65536)
                *whole, partial = partial.split(b"\n")
                got += [(line.decode("ascii", "replace"), now) for line in whole]
        return got

    def peak_rss_mb(self):
        return procstat.peak_rss_mb(self.child.pid)

    def stop(self):
        if self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)
            try:
                self.child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
        self.notify.close()
        os.close(self.director)
        os.close(self.clock_end)


def start_figures(folder, state_dirs, progress=None, names=None, starts=STARTS):
    """For each state directory: the median time to READY=1 and peak resident memory a second
    after, over `starts` starts, taken by turns so that the machine's load falls on each alike;
    and every start's own figures (each said on `progress` as it is taken)."""
    startups, rss = {d: [] for d in state_dirs}, {d: [] for d in state_dirs}
    names = names or state_dirs
    for number in range(starts):
        for state_dir in state_dirs:
            service = Service(folder, state_dir)
            time.sleep(1.0)
            startups[state_dir].append(service.startup_s)
            rss[state_dir].append(service.peak_rss_mb())
            service.stop()
        if progress:
            progress.say(
                f"start {number + 1}/{starts} (load average {os.getloadavg()[0]:.1f}): "
                + ", ".join(
                    f"{name} {startups[d][-1]:.3f} s {rss[d][-1]:.1f} MB"
                    for name, d in zip(names, state_dirs, strict=True)
                )
            )
    return [
        (statistics.median(startups[d]), statistics.median(rss[d]), startups[d], rss[d]) for d in state_dirs
    ]


_PEAK_AT_EXIT = """
import atexit, runpy, sys
def peak():
    with open("/proc/self/status") as status:
        print(next(line for line in status if line.startswith("VmHWM:")), file=sys.stderr)
atexit.register(peak)
sys.argv = ["tileclock", *sys.argv[1:]]
runpy.run_module("tileclock", run_name="__main__")
"""


def tool_peak_rss_mb(*arguments):
    """Peak resident memory of one `tileclock` command: its own VmHWM, read as it exits (the
    kernel's rusage of a child would count the memory of this process it was forked from)."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_AT_EXIT, *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"tileclock {' '.join(arguments)} failed: {done.stderr[-300:]}")
    return int(done.stderr.strip().splitlines()[-1].split()[1]) / 1024


def measure_history(progress, scratch, games=1000):
    """Start-up and memory with no history and with `games` games, and export and replay on them."""
    figures = {}
    game = sample_game()
    empty, one, full = (os.path.join(scratch, name) for name in ("empty", "one", "full"))
    make_history(one, 1, game)
    made = make_history(full, games, game)
    size_mb = sum(e.stat().st_size for e in os.scandir(os.path.join(full, "journal"))) / 2**20
    progress.say(
        f"{games:,} games written ({made:,} records, {size_mb:.0f} MB); starting on none, one and them"
    )
    names = ("0_games", "1_game", f"{games}_games")
    starts = start_figures(scratch, [empty, one, full], progress, ("none", "one game", f"{games:,} games"))
    for (startup_s, rss_mb, each_s, each_mb), name in zip(starts, names, strict=True):
        figures[f"startup_s_{name}"], figures[f"rss_mb_{name}"] = startup_s, rss_mb
        figures[f"startup_s_{name}_runs"], figures[f"rss_mb_{name}_runs"] = each_s, each_mb
    figures["history_records"], figures["history_mb"] = made, size_mb
    progress.say(
        "READY after "
        + ", ".join(f"{start[0]:.3f} s" for start in starts)
        + "; peak memory "
        + ", ".join(f"{start[1]:.1f} MB" for start in starts)
        + f" (medians of {STARTS} starts: none, one game, {games:,}); now export and replay"
    )
    out = os.path.join(scratch, "export")
    figures[f"export_rss_mb_{games}_games"] = tool_peak_rss_mb(
        "export", "--no-pictures", "--journal", full, out
    )
    figures[f"replay_rss_mb_{games}_games"] = tool_peak_rss_mb("replay", full, "--at", "10:00")
    return figures


def measure_takeover(progress, scratch, games=300):
    """The service's first start on an earlier version's single-file journal of `games` games: the
    time to READY=1 (the take-over included) and its peak resident memory."""
    state = os.path.join(scratch, "legacy")
    made = make_legacy(state, games, sample_game())
    size_mb = os.path.getsize(os.path.join(state, "journal.log")) / 2**20
    progress.say(
        f"an old single-file journal: {games} games, {made:,} records, {size_mb:.0f} MB; taking it over"
    )
    service = Service(scratch, state)
    try:
        time.sleep(1.0)
        rss = service.peak_rss_mb()
    finally:
        service.stop()
    progress.say(f"taken over: READY after {service.startup_s:.3f} s, peak memory {rss:.1f} MB")
    return {"takeover_s": service.startup_s, "takeover_rss_mb": rss, "takeover_mb": size_mb}


def measure_flood(progress, scratch, records=2000):
    """The service's memory and press-to-line times while its line asks `resend 0` over and over."""
    game = sample_game()
    state = os.path.join(scratch, "flood")
    made = make_history(state, max(1, -(-records // len(game))), game)  # at least `records`
    presses = int(FLOOD_S / FLOOD_PRESS_EVERY_S)
    script = os.path.join(scratch, "flood-presses.txt")
    with open(script, "w") as file:
        file.write("0.5 hold STOP 2.5\n")  # the history's last game has ended: a new one
        for index in range(presses):
            button = "B" if index % 2 == 0 else "A"
            file.write(f"{FLOOD_AT_S + index * FLOOD_PRESS_EVERY_S:.3f} press {button}\n")
    service = Service(scratch, state, script)
    origin = []

    def flood():
        for _ in range(FLOOD_REQUESTS):
            try:
                os.write(service.director, b"resend 0\n")
            except OSError:
                return  # the service was stopped meanwhile
            time.sleep(FLOOD_S / FLOOD_REQUESTS)

    threading.Timer(max(0.0, FLOOD_AT_S - service.startup_s), flood).start()
    seen = {"lines": 0, "presses": set()}

    def all_presses_out(got):
        for line, _ in got[seen["lines"] :]:  # only the new lines: the flood brings thousands
            if _seq(line) >= made and ('"ev":"switch"' in line or '"ev":"start"' in line):
                seen["presses"].add(_seq(line))  # once each: `resend 0` sends them again too
        seen["lines"] = len(got)
        return len(seen["presses"]) >= presses

    try:
        arrived = service.lines(all_presses_out, timeout_s=FLOOD_S + 30)
        rss = service.peak_rss_mb()
    finally:
        service.stop()
    latencies, resent, first_seen = [], 0, set()
    for line, at in arrived:
        try:
            record = unframe(line)
        except ValueError:
            continue
        if record["seq"] < made or record["seq"] in first_seen:
            resent += 1  # a resent copy (`resend 0` asks for this run's records too)
        elif first_seen.add(record["seq"]) or "mono_ns" in record:
            origin.append(record["mono_ns"])  # the game's start, on the monotonic clock both processes read
        elif record["ev"] in ("start", "switch", "resume") and origin:
            latencies.append((at - (origin[-1] + record["at_ns"])) / NS_PER_MS)
    progress.say(
        f"flood: {resent:,} lines resent for {FLOOD_REQUESTS} requests; {len(latencies)} presses timed"
    )
    latencies.sort()
    return {
        "flood_rss_mb": rss,
        "flood_press_to_line_max_ms": latencies[-1] if latencies else None,
        "flood_presses_timed": len(latencies),
        "flood_lines_resent": resent,
        "flood_journal_records": made,
    }


def measure_card_writes(progress, scratch, hours=1, turn_s=20):
    """What the journal writes to a card in an hour of play, counted by the block device itself:
    a small ext4 filesystem on a loop device (as the Pi's card is ext4), a game with a press every
    `turn_s` seconds and the service's checkpoints, in virtual time (the writes depend on the
    records and their fsyncs, not on the clock on the wall). Needs root to mount; else None."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
        progress.say("card writes: not measured (mounting a loop filesystem needs root and mkfs.ext4)")
        return {}
    from ..device.config_schema import Config
    from ..device.hardware.virtual import VirtualTime
    from ..device.journal import Journal
    from ..sim.simulator import Simulator

    image, mount = os.path.join(scratch, "card.img"), os.path.join(scratch, "card")
    os.mkdir(mount)
    subprocess.run(["truncate", "-s", "64M", image], check=True)
    subprocess.run(["mkfs.ext4", "-q", image], check=True, capture_output=True)
    if subprocess.run(["mount", "-o", "loop", image, mount], capture_output=True).returncode:
        progress.say("card writes: not measured (this machine cannot mount a loop filesystem)")
        return {}
    try:
        device = os.path.basename(
            subprocess.run(
                ["findmnt", "-n", "-o", "SOURCE", mount], capture_output=True, text=True
            ).stdout.strip()
        )
        sim = Simulator(
            Config(),
            time=VirtualTime(0),
            refresh_on_ticks=False,
            checkpoints=True,
            journal=Journal.open(os.path.join(mount, "journal")),
        )
        before = _block_writes(device)
        t, turns = 0, hours * 3600 // turn_s
        for turn in range(turns):
            button = "B" if turn % 2 == 0 else "A"
            sim.set_button(button, True, t)
            sim.set_button(button, False, t + NS_PER_MS * 100)
            t += turn_s * 10**9
        sim.run_to(t)
        records = sim.journal.next_seq
        sim.close()
        os.sync()
        writes, kib = (now - then for now, then in zip(_block_writes(device), before, strict=True))
    finally:
        subprocess.run(["umount", mount], capture_output=True)
    progress.say(f"card writes: {records:,} records in {hours} h: {writes:,} writes, {kib:,} KiB")
    return {
        "card_records_per_hour": records / hours,
        "card_writes_per_hour": writes / hours,
        "card_kib_per_hour": kib / hours,
    }


def _block_writes(device):
    """(write requests completed, KiB written) of a block device, from /sys/block/DEV/stat."""
    with open(f"/sys/block/{device}/stat") as file:
        fields = file.read().split()
    return int(fields[4]), int(fields[6]) // 2  # sectors of 512 bytes


def _seq(line):
    """The seq a framed line starts with (-1 if it does not)."""
    head = line[7:20].partition(",")[0] if line.startswith('{"seq":') else ""
    return int(head) if head.isdigit() else -1


def run(progress, state_parent):
    """Every storage figure (a scratch folder on a disk is made in `state_parent` and removed)."""
    scratch = tempfile.mkdtemp(prefix="tileclock-bench-storage-", dir=state_parent)
    try:
        progress.say(f"history and flood on {procstat.filesystem(scratch)[0]} in {scratch}")
        figures = measure_history(progress, scratch)
        figures.update(measure_takeover(progress, scratch))
        figures.update(measure_flood(progress, scratch))
        figures.update(measure_card_writes(progress, scratch))
        return figures
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
