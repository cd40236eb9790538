"""`tileclock collect`: the director's side of the record line, for one clock or many at once.

For each port it verifies every line, keeps records in seq order, asks the
clock to resend any gap (and asks again if the answer does not come), writes
each game to its own file as it arrives (the framed lines, exactly as sent),
adds a CSV row for each game that ends, and survives a cable pulled and put
back by opening the port again. `tileclock collect` shows a live table of
every clock and a progress line.
"""

import csv
import os
import sys
import time

import serial

from ..clock.history import GameSplitter
from ..clock.protocol import FrameError, unframe
from .history import CSV_FIELDS, summary_row

RESEND_AGAIN_S = 2.0
REOPEN_S = 1.0


class ClockFeed:
    """One clock's port: reading, checking, ordering, resend requests, files."""

    def __init__(self, port, outdir, clock=time.monotonic):
        self.port_name = port
        self.outdir = outdir
        self.clock = clock
        self.port = None
        self.board = None
        self.expected = 0  # the next seq to write
        self.pending = {}  # seq -> (record, line) received ahead of a gap
        self.asked = {}  # first missing seq -> when a resend was asked
        self.last = None  # the last record written
        self.bad_lines = 0
        self.duplicates = 0
        self.written = 0
        self.down = None  # why the port is not open
        self._reopen_at = 0.0
        self._incoming = b""
        self._game_file = None
        self._file_game = None  # the game whose file is open
        self._splitter = GameSplitter()
        self._unsettled = {}  # seq -> line of a record the splitter has not placed yet (a boot)
        self._before_game = []
        self._unboarded = []  # (record, line) written before the boot record named the board

    # --- the port

    def poll(self):
        """Read what has arrived, handle it, and ask for any gap; returns the number of lines read."""
        if self.port is None and not self._open():
            return 0
        try:
            data = self.port.read(self.port.in_waiting or 0)
        except (serial.SerialException, OSError) as error:
            self._lost(error)
            return 0
        self._incoming += data
        *lines, self._incoming = self._incoming.split(b"\n")
        for raw in lines:
            self._line(raw)
        self._ask_for_gaps()
        return len(lines)

    def send(self, text):
        if self.port is None:
            return
        try:
            self.port.write(text.encode("ascii") + b"\n")
        except (serial.SerialException, OSError) as error:
            self._lost(error)

    def _open(self):
        now = self.clock()
        if now < self._reopen_at:
            return False
        try:
            self.port = serial.serial_for_url(self.port_name, baudrate=115200, timeout=0, write_timeout=1)
        except (serial.SerialException, OSError, ValueError) as error:
            self.down = str(error)
            self._reopen_at = now + REOPEN_S
            return False
        self.down = None
        self._incoming = b""  # a line cut by the pull is lost: the seq check will ask for it
        if self.written or self.pending:
            self.asked.clear()
        self.send("status")  # says where the clock is, so a gap since the pull shows at once
        return True

    def _lost(self, error):
        self.down = str(error) or type(error).__name__
        try:
            self.port.close()
        except (serial.SerialException, OSError):
            pass
        self.port = None
        self._reopen_at = self.clock() + REOPEN_S

    # --- records

    def _line(self, raw):
        try:
            record = unframe(raw.decode("ascii"))
        except (UnicodeDecodeError, FrameError):
            self.bad_lines += 1
            return
        seq = record["seq"]
        if seq < self.expected or seq in self.pending:
            self.duplicates += 1
            return
        self.pending[seq] = (record, raw.decode("ascii"))
        while self.expected in self.pending:
            record, line = self.pending.pop(self.expected)
            self.asked.pop(self.expected, None)
            self._write(record, line)
            self.expected += 1

    def _ask_for_gaps(self):
        if not self.pending:
            return
        first = self.expected
        last = min(self.pending) - 1
        if last < first:
            return
        now = self.clock()
        if now - self.asked.get(first, -RESEND_AGAIN_S) >= RESEND_AGAIN_S:
            self.asked[first] = now
            self.send(f"resend {first} {last}")

    def _write(self, record, line):
        if record["ev"] == "boot":
            self.board = str(record.get("board", "?"))
            for held in self._unboarded:
                self._to_game_file(*held)
            self._unboarded = []
        if self.board is None:
            self._unboarded.append((record, line))
        else:
            self._to_game_file(record, line)
        self.last = record
        self.written += 1

    def _to_game_file(self, record, line):
        """Each game's file holds its records from `new_game` on, led by the `boot` that opened it.

        Which game a record belongs to is `clock/history.py`'s to say: a `boot` in the middle of a
        game (the clock restarted and took the game up again) stays in that game's file.
        """
        self._unsettled[record["seq"]] = line
        for game, settled in self._splitter.add(record):
            line = self._unsettled.pop(settled["seq"])
            if game is None:
                self._before_game.append(line)  # records of a game begun before we listened
                continue
            if game is not self._file_game:
                self._open_game_file(game)
            self._game_file.write(line + "\n")
            self._game_file.flush()
            if settled["ev"] == "end":
                self._add_result(summary_row(game, self.board))

    def _open_game_file(self, game):
        folder = os.path.join(self.outdir, f"board-{self.board}")
        os.makedirs(folder, exist_ok=True)
        if self._game_file:
            self._game_file.close()
        self._game_file = open(os.path.join(folder, f"game-{game.seq}.log"), "a", encoding="ascii")
        self._file_game = game
        for held in self._before_game:
            self._game_file.write(held + "\n")
        self._before_game = []

    def _add_result(self, row):
        path = os.path.join(self.outdir, "results.csv")
        new = not os.path.exists(path)
        with open(path, "a", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=CSV_FIELDS)
            if new:
                writer.writeheader()
            writer.writerow(row)

    def close(self):
        if self._game_file:
            self._game_file.close()
        if self.port:
            self.port.close()

    # --- the live table

    def row(self):
        """One line of the live table."""
        last = self.last
        if last is None:
            return f"{'?':>6}  {'(no record yet)':40}  {self._link()}"
        mark = {side: "*" if last["run"] == side else " " for side in "AB"}
        sides = "  ".join(f"{mark[s]}{s} {last[s]['shown']:>7} {-last[s]['pen']:4d}" for s in "AB")
        return f"{self.board or '?':>6}  {last['state']:8}  {sides}  seq {last['seq']:<6} {self._link()}"

    def _link(self):
        if self.down:
            return f"DOWN ({self.down[:30]})"
        gap = f" waiting for {min(self.pending) - self.expected} records" if self.pending else ""
        return "ok" + gap


def collect(ports, outdir, stop_after_idle_s=None, out=sys.stdout, clock=time.monotonic, sleep=time.sleep):
    """Collect from `ports` into `outdir` until interrupted (or idle `stop_after_idle_s`); returns the feeds."""
    os.makedirs(outdir, exist_ok=True)
    feeds = [ClockFeed(port, outdir, clock) for port in ports]
    live = out.isatty()
    last_data = clock()
    try:
        while True:
            got = sum(feed.poll() for feed in feeds)
            if got:
                last_data = clock()
            _show(feeds, out, live)
            if stop_after_idle_s is not None and clock() - last_data >= stop_after_idle_s:
                break
            if not got:
                sleep(0.05)
    except KeyboardInterrupt:
        pass
    finally:
        for feed in feeds:
            feed.close()
        _show(feeds, out, live, final=True)
    return feeds


def _show(feeds, out, live, final=False):
    header = f"{'board':>6}  {'state':8}  {'A':>7} {'pen':>4}   {'B':>7} {'pen':>4}   last"
    rows = [header] + [feed.row() for feed in feeds]
    total = sum(feed.written for feed in feeds)
    bad = sum(feed.bad_lines for feed in feeds)
    progress = f"{total} records from {len(feeds)} clock(s); {bad} bad lines dropped"
    if live:
        out.write("\x1b[H\x1b[J" + "\n".join(rows) + "\n" + progress + "\n")
    elif final:
        out.write("\n".join(rows) + "\n" + progress + "\n")
    out.flush()
