"""`tileclock sim` with no script: the clock live in a terminal.

The two panels' real frames are drawn with block characters (each character
cell shows 2x2 pixels), side by side, with a line of plain text under them.
Terminals report key presses, not releases, so a tap is a press of 0.1 s and
the capital letter holds a button down until it is typed again.
"""

import os
import select
import sys
import termios
import time
import tty

from ..clock.records import SIDES
from ..clock.timecode import NS_PER_S
from ..device.render import HINT_WORDS
from .script import PRESS_NS
from .simulator import Simulator

KEYS = {"a": "A", "l": "B", " ": "STOP"}
HOLD_KEYS = {"A": "A", "L": "B", "S": "STOP"}
HELP = "a: tap A   l: tap B   space: tap STOP   A/L/S: hold or release A/B/STOP   q: quit"

# 2x2 pixel quadrants -> character, indexed by (top-left, top-right, bottom-left, bottom-right) bits
_QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"


def frame_to_text(frame):
    """A 1-bit PIL image as lines of quadrant block characters, two pixels a cell each way."""
    width, height = frame.size
    pixels = frame.load()
    lines = []
    for y in range(0, height, 2):
        row = []
        for x in range(0, width, 2):
            bits = (
                (pixels[x, y] and 1)
                | (pixels[x + 1, y] and 2)
                | (pixels[x, y + 1] and 4)
                | (pixels[x + 1, y + 1] and 8)
            )
            row.append(_QUADRANTS[bits])
        lines.append("".join(row))
    return lines


def status_text(view, held):
    """One line of plain text: the state, each side's time and penalty, buttons held."""
    parts = [view.state.upper()]
    for side in SIDES:
        mine = view.side(side)
        mark = ">" if view.run == side else " "
        pen = f" ({-mine.pen})" if mine.pen else ""
        parts.append(f"{mark}{side} {mine.shown}{pen}")
    if held:
        parts.append("held: " + " ".join(sorted(held)))
    if view.hint:
        parts.append(HINT_WORDS[view.hint].lower())
    return "   ".join(parts)


def screen_text(frames, view, held, columns):
    """The whole terminal screen: both panels (side by side when they fit) and the text lines."""
    a, b = frame_to_text(frames["A"]), frame_to_text(frames["B"])
    border = "+" + "-" * len(a[0]) + "+"
    if columns >= 2 * len(border) + 2:
        lines = ["  Panel facing A".ljust(len(border) + 2) + "Panel facing B", border + "  " + border]
        lines += [f"|{left}|  |{right}|" for left, right in zip(a, b, strict=True)]
        lines.append(border + "  " + border)
    else:
        lines = ["Panel facing A", border] + [f"|{row}|" for row in a] + [border]
        lines += ["Panel facing B", border] + [f"|{row}|" for row in b] + [border]
    return lines + ["", status_text(view, held), HELP]


def run_interactive(config, stdin=None, stdout=None):
    """Run the clock in real time, keys as buttons, until `q`."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if not stdin.isatty():
        print("tileclock sim: no terminal here; use --script FILE to run a script", file=sys.stderr)
        return 2
    start = time.monotonic_ns()
    sim = Simulator(config)
    releases = []  # (t_ns, button) of taps still down
    held = set()
    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    stdout.write("\x1b[?25l\x1b[2J")
    try:
        tty.setcbreak(fd)
        while True:
            now = time.monotonic_ns() - start
            due = [t for t, _ in releases] + [sim.daemon.next_deadline() or now + NS_PER_S]
            timeout = max(0, min(due) - now) / NS_PER_S
            ready, _, _ = select.select([fd], [], [], timeout)
            now = time.monotonic_ns() - start
            for t_ns, button in sorted(releases):
                if t_ns <= now:
                    sim.set_button(button, False, t_ns)
            releases = [(t, b) for t, b in releases if t > now]
            if ready:
                key = os.read(fd, 1).decode(errors="ignore")
                if key in ("q", "\x03", "\x04"):
                    break
                if key in KEYS:
                    sim.set_button(KEYS[key], True, now)
                    releases.append((now + PRESS_NS, KEYS[key]))
                elif key in HOLD_KEYS:
                    button = HOLD_KEYS[key]
                    sim.set_button(button, button not in held, now)
                    held ^= {button}
            sim.catch_up(now)
            sim.serial_lines()
            columns = os.get_terminal_size(stdout.fileno()).columns
            lines = screen_text(sim.daemon.frames, sim.view(), held, columns)
            stdout.write("\x1b[H" + "\n".join(line + "\x1b[K" for line in lines))
            stdout.flush()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        stdout.write("\x1b[?25h\n")
        sim.close()
    return 0
