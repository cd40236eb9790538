"""`tileclock sim` in a real pseudo-terminal of 80x24, 120x40 and 200x50, read back as a terminal shows it."""

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pyte
import pytest

from tileclock.sim.terminal import HELPS
from tileclock.wire.protocol import unframe


def as_from_a_terminal():
    """In the child: the pty its controlling terminal, and SIGINT at its default, as a shell at a
    terminal starts it (a background job, `make test &` or nohup, starts with SIGINT ignored, and
    the simulator would never hear the Ctrl-C typed at its terminal)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """`tileclock sim` on a pty of `columns` x `rows`, its screen kept by pyte."""

    def __init__(self, columns, rows, args=()):
        self.master, slave = os.openpty()
        self.resize(columns, rows, slave)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tileclock", "sim", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,  # its own session, this pty its controlling terminal
            preexec_fn=as_from_a_terminal,
            env=dict(os.environ, TERM="xterm"),
        )
        self.slave = slave
        self.output = b""

    def resize(self, columns, rows, fd=None):
        fcntl.ioctl(fd or self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        if fd is None:
            self.stream.feed(b"\x1b[2J")

    def read(self, wait_s):
        while select.select([self.master], [], [], wait_s)[0]:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the program closed the terminal
                return
            if not data:
                return
            self.output += data
            self.stream.feed(data)
            wait_s = 0.05

    def lines(self):
        return [line.rstrip() for line in self.screen.display]

    def wait_for(self, text, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read(0.2)
            if any(text in line for line in self.lines()):
                return self.lines()
        raise AssertionError(f"{text!r} never showed; the screen:\n" + "\n".join(self.lines()))

    def wait_for_none(self, text, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read(0.2)
            if not any(text in line for line in self.lines()):
                return self.lines()
        raise AssertionError(f"{text!r} never went; the screen:\n" + "\n".join(self.lines()))

    def type(self, keys):
        os.write(self.master, keys)

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def terminal():
    opened = []

    def open_one(columns, rows, *args):
        opened.append(Terminal(columns, rows, args))
        return opened[-1]

    yield open_one
    for one in opened:
        one.close()


def row_of(lines, text):
    return next(index for index, line in enumerate(lines) if text in line)


def check_fits(lines, columns):
    """Both panels shown whole, one help line that fits, nothing past the screen's edge."""
    assert (
        sum("Panel facing A" in line for line in lines) == 1
        and sum("Panel facing B" in line for line in lines) == 1
    )
    assert any(line.strip() in HELPS for line in lines)
    assert all(len(line) <= columns for line in lines)


def test_at_80x24_both_panels_show_as_text_and_a_tap_starts_the_clock(terminal):
    term = terminal(80, 24)
    lines = term.wait_for("READY")
    check_fits(lines, 80)
    assert row_of(lines, "Panel facing A") == row_of(lines, "Panel facing B") == 0  # side by side
    term.type(b"l")  # a tap of B starts A's clock
    lines = term.wait_for("RUNNING   >A 24:5")
    assert "[ YOUR TURN ]" in lines[row_of(lines, "YOUR TURN")]
    assert lines[1].startswith("|> ")  # A's own turn pointer, at the left of A's panel's top line
    term.type(b"S")  # hold STOP: the clock stops, and the line says what is held
    lines = term.wait_for("held: STOP")
    assert "STOPPED" in lines[row_of(lines, "held: STOP")]
    term.type(b"\x03")  # Ctrl-C: a clean stop, the terminal as it was
    assert term.process.wait(timeout=20) == 0
    term.read(0.2)
    assert b"Traceback" not in term.output and term.output.rstrip(b"\r\n").endswith(b"\x1b[?25h\x1b[?1049l")
    assert termios.tcgetattr(term.slave)[3] & termios.ICANON  # line editing back on


def test_at_120x40_the_real_frames_stack_and_redraw_in_place(terminal):
    term = terminal(120, 40)
    lines = term.wait_for("READY")
    check_fits(lines, 120)
    top = row_of(lines, "Panel facing A")
    assert row_of(lines, "Panel facing B") > top
    term.type(b"a")  # a tap of A starts B's clock: a redraw every second
    term.wait_for("RUNNING    A 25:00   >B 24:5")
    time.sleep(1.5)
    lines = term.wait_for("RUNNING")
    assert row_of(lines, "Panel facing A") == top  # nothing scrolled
    assert b"\n" not in term.output.split(b"\x1b[H")[-1].split(b"\x1b[J")[0].replace(b"\r\n", b"")
    term.type(b"q")
    assert term.process.wait(timeout=20) == 0


def test_at_200x50_the_frames_sit_side_by_side_and_a_resize_picks_a_new_layout(terminal):
    term = terminal(200, 50)
    lines = term.wait_for("READY")
    check_fits(lines, 200)
    assert row_of(lines, "Panel facing A") == row_of(lines, "Panel facing B")
    assert any("█" in line for line in lines)  # the panels' pixels, as blocks
    term.resize(80, 24)
    lines = term.wait_for("READY")
    check_fits(lines, 80)
    os.close(term.master)  # the terminal closes: the clock stops by itself
    term.master = -1
    assert term.process.wait(timeout=20) == 0


def test_live_at_speed_20_a_minute_of_play_reaches_overtime_in_3_seconds(terminal):
    term = terminal(80, 24, "--speed", "20", "--time", "A=1:00")
    term.wait_for("speed x20")
    term.type(b"l")  # A's minute runs, 20 times real time
    # overtime: a minute of the clock's time gone, within wait_for's 20 s (not the 60 s of x1)
    lines = term.wait_for("RUNNING   >A -")
    line = lines[row_of(lines, "RUNNING   >A -")]
    minutes, seconds = map(int, re.search(r">A -(\d+):(\d\d)", line).groups())
    steps = max(1, minutes + (seconds > 0))  # 10 points a minute over, or part of one
    assert f"(-{10 * steps})" in line  # the penalty beside the time, for the time shown
    term.type(b"q")
    assert term.process.wait(timeout=20) == 0


def test_a_key_repeated_as_a_held_key_repeats_acts_once(terminal):
    """A burst of one key, as a terminal's auto-repeat sends it: one hold, one tap, no call."""
    term = terminal(80, 24)
    term.wait_for("READY")
    term.type(b"l")
    term.wait_for("RUNNING   >A")
    term.type(b" " * 30)  # space held down: STOP tapped (the clock stops), but never three taps
    term.wait_for("STOPPED")
    term.type(b"S" * 30)  # Shift+S held down: STOP down once, and kept down
    lines = term.wait_for("held: STOP")
    assert any("u: let go" in line for line in lines)
    term.type(b"u")
    lines = term.wait_for_none("held:")
    assert lines[row_of(lines, "u: let go") - 1].startswith("STOPPED ")  # the status line
    assert not any("CALLED TD" in line for line in lines)
    term.type(b"q")
    assert term.process.wait(timeout=20) == 0


def test_with_its_output_piped_it_prints_each_record_plainly_and_keys_still_work(tmp_path):
    """`make sim | tee log`: the keys from the terminal, on stdout one record a line and no escapes."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "tileclock", "sim"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    os.close(slave)
    try:
        out = [process.stdout.readline() for _ in range(2)]  # boot, new_game: it reads keys now
        os.write(master, b"l")  # tap B: A's clock starts
        while b'"ev":"start"' not in out[-1] and len(out) < 10:
            out.append(process.stdout.readline())
        os.write(master, b"q")
        rest, err = process.communicate(timeout=20)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    out = b"".join(out) + rest
    records = [unframe(line) for line in out.decode("ascii").splitlines()]
    assert [r["ev"] for r in records[:3]] == ["boot", "new_game", "start"] and records[2]["run"] == "A"
    assert b"\x1b" not in out and process.returncode == 0
    assert b"one line a record" in err
