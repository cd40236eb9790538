"""The director's link under load: a resend catch-up over a slow line, and a hall of clocks at once.

Run as `python -m tileclock.bench.director [resend|fleet] [options]`; the figures are in
docs/performance.md. Both print figures and assert nothing; the tests run small versions
that assert nothing is lost.

- `resend`: a clock whose journal holds N records, on a pseudo-terminal paced at R bytes a second
  (115200 baud is 11,520 B/s), and a fresh collector: every record must arrive once; the figure is
  the bytes on the wire against the bytes of the records themselves, and the requests made.
- `fleet`: C clocks on pseudo-terminals, each sending a whole game at once, into one collector
  process (`tileclock collect`): nothing lost or duplicated; the delay from a game's `end` record
  written to its row in `results.csv` (p50, p99), and the collector's CPU while idle.
"""

import argparse
import csv
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tty
from dataclasses import replace

from ..clock.timecode import NS_PER_S
from ..device.config_schema import Config
from ..device.hardware.virtual import VirtualTime
from ..device.identity import ID_FILE
from ..device.journal import Journal
from ..sim.simulator import Simulator
from ..wire.protocol import FrameError, unframe

S = NS_PER_S
TICK_S = 0.01


class PacedLine:
    """A serial line between two pseudo-terminals (a clock's end and a director's end), carrying
    the clock's bytes to the director at `rate` bytes a second, and commands back unpaced.

    The relay reads only what the rate allows, so the clock's writes meet a full line, as on a
    real UART. `sent` counts the bytes that reached the director.
    """

    def __init__(self, folder, rate):
        self.rate = rate
        self.sent = 0
        self.commands = []  # the command lines the director sent
        self._command_bytes = b""
        self.clock_path, self._clock_master = self._pty(folder, "clock-end")
        self.director_path, self._director_master = self._pty(folder, "director-end")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, name="paced-line", daemon=True)
        self._thread.start()

    @staticmethod
    def _pty(folder, name):
        master, slave = os.openpty()
        tty.setraw(slave)
        path = os.path.join(folder, name)
        os.symlink(os.ttyname(slave), path)
        return path, (master, slave)

    def _relay(self):
        clock, director = self._clock_master[0], self._director_master[0]
        allowance, last = 0.0, time.monotonic()
        while not self._stop.is_set():
            ready, _, _ = select.select([clock, director], [], [], TICK_S)
            now = time.monotonic()
            allowance = min(allowance + (now - last) * self.rate, self.rate * TICK_S * 4)
            last = now
            if director in ready:
                data = os.read(director, 4096)
                os.write(clock, data)
                *lines, self._command_bytes = (self._command_bytes + data).split(b"\n")
                self.commands += [line.decode("ascii", "replace") for line in lines]
            if clock in ready and allowance >= 1:
                data = os.read(clock, int(allowance))
                allowance -= len(data)
                self._write_all(director, data)
                self.sent += len(data)
            elif clock in ready:
                time.sleep(TICK_S)  # wait for the rate to allow more

    @staticmethod
    def _write_all(fd, data):
        while data:
            data = data[os.write(fd, data) :]

    def close(self):
        self._stop.set()
        self._thread.join()
        for master, slave in (self._clock_master, self._director_master):
            os.close(master)
            os.close(slave)


def long_journal(state_dir, records):
    """Fill `state_dir` with a clock's state whose journal holds at least `records` records:
    games of 30 turns each, played in virtual time."""
    sim = Simulator(
        replace(Config(), panels=()), refresh_on_ticks=False, journal=Journal()
    )  # no panels: quicker
    t = 0

    def press(button, hold_s=0.1):
        nonlocal t
        sim.set_button(button, True, t)
        sim.set_button(button, False, t + int(hold_s * S))
        t += int((hold_s + 1) * S)

    while sim.journal.next_seq < records:
        for turn in range(30):
            press("B" if turn % 2 == 0 else "A")
            t += 20 * S
        press("STOP")
        press("STOP", 2.5)  # end the game: hold, let go,
        press("STOP")  # confirm
        press("STOP", 2.5)  # and start the next
        sim.serial_lines()
    os.makedirs(state_dir, exist_ok=True)
    with open(os.path.join(state_dir, "journal.log"), "w", encoding="ascii") as file:
        file.write("".join(line + "\n" for line in sim.journal.lines))
    with open(os.path.join(state_dir, ID_FILE), "w", encoding="ascii") as file:
        file.write(sim.clock_id + "\n")
    sim.close()


def resend_catch_up(records=10_000, rate=11_520, folder=None, timeout_s=900):
    """A fresh `tileclock collect` on a clock with `records` records, over a line paced at `rate` B/s.

    Returns the figures: records in the clock's journal and collected (each once, in order),
    bytes on the wire and of the records, the overhead, the resend requests, the time taken.
    """
    folder = folder or tempfile.mkdtemp(prefix="tileclock-resend-")
    state, out = os.path.join(folder, "state"), os.path.join(folder, "out")
    long_journal(state, records)
    line = PacedLine(folder, rate)
    clock = Simulator(Config(), serial_url=line.clock_path, state_dir=state, time=VirtualTime(0))
    collector = subprocess.Popen(
        [sys.executable, "-m", "tileclock", "collect", line.director_path, "--out", out, "--idle-exit", "60"],
        stdout=subprocess.DEVNULL,
    )
    started = checked = time.monotonic()
    collected = []
    try:
        while time.monotonic() - started < timeout_s:
            fd = clock.link.fileno()
            select.select([fd] if fd is not None else [], [], [], TICK_S)
            clock.daemon.pump(clock.time())
            if time.monotonic() - checked > 0.5:
                checked = time.monotonic()
                collected = _collected_lines(out)
                if len(collected) >= clock.journal.next_seq:
                    break
    finally:
        took = time.monotonic() - started
        collector.terminate()
        collector.wait(timeout=30)
        line.close()
        clock.close()
    lines = clock.journal.lines
    collected = _collected_lines(out)
    record_bytes = sum(len(text) + 1 for text in lines)
    figures = {
        "records": len(lines),
        "collected": len(collected),
        "every_record_once_in_order": collected == lines,
        "record_bytes": record_bytes,
        "wire_bytes": line.sent,
        "overhead_pct": round(100 * (line.sent - record_bytes) / record_bytes, 2),
        "resend_requests": sum(command.startswith("resend") for command in line.commands),
        "seconds": round(took, 1),
    }
    shutil.rmtree(folder, ignore_errors=True)
    return figures


def _collected_lines(out):
    """Every line collect wrote into game files and beside them, in seq order."""
    lines = []
    for folder, _, names in os.walk(out):
        for name in names:
            if name.endswith(".log") and name.startswith(("game-", "before-games-")):
                with open(os.path.join(folder, name), encoding="ascii") as file:
                    lines += file.read().splitlines()
    whole = []
    for text in lines:
        try:
            whole.append((unframe(text)["seq"], text))
        except FrameError:
            pass  # a line being written as we read
    return [text for _, text in sorted(whole)]


def fleet(clocks=200, folder=None, idle_s=3.0):
    """`clocks` clocks on pseudo-terminals, each sending a whole game at once, into one `tileclock
    collect` process. Returns the figures: games and records sent and collected, duplicates, the
    end-record-to-results.csv delay p50 and p99 in ms, and the collector's CPU while idle."""
    folder = folder or tempfile.mkdtemp(prefix="tileclock-fleet-")
    game = [unframe(text) for text in _one_game()]
    ends, paths = [], []
    for n in range(clocks):
        master, slave = os.openpty()
        tty.setraw(slave)
        path = os.path.join(folder, f"tty{n}")
        os.symlink(os.ttyname(slave), path)
        ends.append((master, slave))
        paths.append(path)
    out = os.path.join(folder, "out")
    collector = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tileclock",
            "collect",
            *paths,
            "--out",
            out,
            "--idle-exit",
            str(3 * idle_s + 30),
        ],
        stdout=subprocess.DEVNULL,
    )
    threads = [threading.Thread(target=_drain, args=(master,), daemon=True) for master, _ in ends]
    for thread in threads:
        thread.start()
    time.sleep(2.0)  # let it open every port
    sent, end_written = [], {}
    for n, (master, _) in enumerate(ends):
        lines = _renamed(game, f"fleet{n:04d}", str(n + 1))
        sent += lines
        data = "".join(text + "\n" for text in lines).encode("ascii")
        _write_all(master, data)
        end_written[f"fleet{n:04d}"] = time.monotonic()
    delays = _watch_results(os.path.join(out, "results.csv"), end_written, timeout_s=60)
    cpu_before, wall_before = _cpu_seconds(collector.pid), time.monotonic()
    time.sleep(idle_s)
    idle_cpu = 100 * (_cpu_seconds(collector.pid) - cpu_before) / (time.monotonic() - wall_before)
    collector.terminate()
    collector.wait(timeout=30)
    collected = _collected_lines(out)
    for master, slave in ends:
        os.close(master)
        os.close(slave)
    ordered = sorted(delays.values())
    figures = {
        "clocks": clocks,
        "records_sent": len(sent),
        "records_collected": len(collected),
        "nothing_lost_or_twice": sorted(collected) == sorted(sent),
        "results_rows": len(delays),
        "end_to_results_p50_ms": round(ordered[len(ordered) // 2] * 1000, 1) if ordered else None,
        "end_to_results_p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000, 1)
        if ordered
        else None,
        "idle_cpu_percent": round(idle_cpu, 2),
    }
    shutil.rmtree(folder, ignore_errors=True)
    return figures


def _one_game():
    sim = Simulator(Config(), refresh_on_ticks=False)
    t = 0
    for turn in range(30):
        sim.set_button("B" if turn % 2 == 0 else "A", True, t)
        sim.set_button("B" if turn % 2 == 0 else "A", False, t + S // 10)
        t += 20 * S
    for hold_s in (0.1, 2.5, 0.1):  # stop; hold, let go and confirm: the end
        sim.set_button("STOP", True, t)
        sim.set_button("STOP", False, t + int(hold_s * S))
        t += 3 * S
    lines = list(sim.journal.lines)
    sim.close()
    return lines


def _renamed(game, clock_id, board):
    """The game's records as another clock with another board name would have sent them."""
    from ..wire.protocol import frame

    lines = []
    for record in game:
        record = dict(record, clock=clock_id)
        record.pop("crc", None)
        if record["ev"] == "boot":
            record["board"] = board
        lines.append(frame(json.dumps(record, separators=(",", ":"))))
    return lines


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data) :]


def _drain(master):
    try:
        while os.read(master, 4096):
            pass
    except OSError:
        pass


def _watch_results(path, end_written, timeout_s):
    """Seconds from each clock's end record written to its row in results.csv."""
    delays, deadline = {}, time.monotonic() + timeout_s
    while len(delays) < len(end_written) and time.monotonic() < deadline:
        try:
            with open(path, newline="", encoding="utf-8") as file:
                rows = list(csv.DictReader(file))
        except FileNotFoundError:
            rows = []
        now = time.monotonic()
        for row in rows:
            clock = row.get("clock")  # None while the sheet is being written (its header half there)
            if clock not in delays and clock in end_written:
                delays[clock] = now - end_written[clock]
        time.sleep(0.01)
    return delays


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tileclock.bench.director", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="which", required=True)
    resend = commands.add_parser("resend", help="a fresh collector on a long journal over a slow line")
    resend.add_argument("--records", type=int, default=10_000)
    resend.add_argument("--rate", type=int, default=11_520, help="bytes a second (115200 baud: 11520)")
    hall = commands.add_parser("fleet", help="many clocks into one collector at once")
    hall.add_argument("--clocks", type=int, default=200)
    args = parser.parse_args(argv)
    figures = resend_catch_up(args.records, args.rate) if args.which == "resend" else fleet(args.clocks)
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
