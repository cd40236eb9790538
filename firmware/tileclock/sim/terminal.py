"""`tileclock sim` with no script: the clock live in a terminal of any size from 80x24 up.

The layout is picked for the terminal, and picked again when it is resized:

- wide (134x37 and up): both panels' real frames side by side, each character cell 2x2 pixels;
- stacked (66x38 and up): the real frames one above the other, each cell 2x4 pixels (braille);
- compact (anything smaller): each panel as text, its own time in big digits, in the panels' words.

Under the panels, one line says the state and the buttons held, and one line what to press.
Terminals report key presses, not releases, so a tap is a press of 0.1 s and the capital letter
holds a button down until it is typed again. The screen is redrawn in place (the alternate screen,
as a full-screen program uses), and left as it was on `q`, Ctrl-C or a closed terminal.
"""

import os
import select
import signal
import sys
import termios
import time
import tty

from ..clock.timecode import NS_PER_S
from ..device.screen.face import HINT_WORDS, STATE_WORDS, band_text, top_left_text
from ..wire.records import SIDES
from .script import PRESS_NS
from .simulator import Simulator

KEYS = {"a": "A", "l": "B", " ": "STOP"}
HOLD_KEYS = {"A": "A", "L": "B", "S": "STOP"}
#: What to press, longest first: the first that fits the terminal's width is shown.
HELPS = (
    "a: tap A   l: tap B   space: tap STOP   A/L/S: hold or release A/B/STOP   q: quit",
    "a/l/space: tap A/B/STOP   A/L/S: hold/release   q: quit",
    "a l space: tap  A L S: hold  q: quit",
)
HELP = HELPS[0]
WIDE, STACKED = (134, 37), (66, 38)  # the least (columns, rows) each layout needs

# 2x2 pixel quadrants -> character, indexed by (top-left, top-right, bottom-left, bottom-right) bits
_QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"
_QUADRANT_BITS = {(0, 0): 1, (1, 0): 2, (0, 1): 4, (1, 1): 8}
# braille dots: (dx, dy) -> bit, for a cell of 2x4 pixels
_BRAILLE = {
    (0, 0): 0x01,
    (0, 1): 0x02,
    (0, 2): 0x04,
    (1, 0): 0x08,
    (1, 1): 0x10,
    (1, 2): 0x20,
    (0, 3): 0x40,
    (1, 3): 0x80,
}
# big digits for the compact view, 3 cells wide and 5 tall
_BIG = {
    "0": ("███", "█ █", "█ █", "█ █", "███"), "1": (" █ ", "██ ", " █ ", " █ ", "███"),
    "2": ("███", "  █", "███", "█  ", "███"), "3": ("███", "  █", " ██", "  █", "███"),
    "4": ("█ █", "█ █", "███", "  █", "  █"), "5": ("███", "█  ", "███", "  █", "███"),
    "6": ("███", "█  ", "███", "█ █", "███"), "7": ("███", "  █", "  █", "  █", "  █"),
    "8": ("███", "█ █", "███", "█ █", "███"), "9": ("███", "█ █", "███", "  █", "███"),
    ":": ("   ", " █ ", "   ", " █ ", "   "), "-": ("   ", "   ", "███", "   ", "   "),
}  # fmt: skip  # a glyph a line reads as the digit it draws


def _cells(frame, bits, characters):
    """A 1-bit image as lines of characters, one per cell of pixels; `bits` maps (dx, dy) in a cell to its bit."""
    width, height = frame.size
    cell_w, cell_h = max(dx for dx, _ in bits) + 1, max(dy for _, dy in bits) + 1
    pixels = frame.load()
    return [
        "".join(characters(sum(bit for (dx, dy), bit in bits.items() if pixels[x + dx, y + dy])) for x in range(0, width, cell_w))
        for y in range(0, height, cell_h)
    ]  # fmt: skip  # a line of cells a row of cells


def frame_to_text(frame):
    """A 1-bit PIL image as lines of quadrant block characters, two pixels a cell each way."""
    return _cells(frame, _QUADRANT_BITS, _QUADRANTS.__getitem__)


def frame_to_braille(frame):
    """A 1-bit PIL image as lines of braille characters, 2x4 pixels a cell (half the rows of blocks)."""
    return _cells(frame, _BRAILLE, lambda bits: chr(0x2800 + bits))


def status_text(view, held):
    """One line of plain text, in the panels' words: the state, each side's time and penalty, buttons held."""
    parts = [STATE_WORDS[view.state] or "RUNNING"]
    for side in SIDES:
        mine = view.side(side)
        mark = ">" if view.run == side else " "
        pen = f" ({-mine.pen})" if mine.pen else ""
        parts.append(f"{mark}{side} {mine.shown}{pen}")
    if held:
        parts.append("held: " + " ".join(sorted(held)))
    if view.hint:
        parts.append(HINT_WORDS[view.hint])
    return "   ".join(parts)


def big(text):
    """`text` (digits, `:` and `-`) in big digits: five lines."""
    return [" ".join(_BIG[ch][row] for ch in text) for row in range(5)]


def panel_text(view, side, width):
    """One panel as text, `width` wide inside its box: top line, its own time big, its band."""
    opponent = "B" if side == "A" else "A"
    mine, theirs = view.side(side), view.side(opponent)
    pointer = "> " if view.run == opponent else ""
    theirs_text = f"{pointer}{opponent} {theirs.shown}" + (f" -{theirs.pen}" if theirs.pen else "")
    top = top_left_text(view)
    lines = [top + theirs_text.rjust(width - len(top))]
    pen = f" -{mine.pen}" if mine.pen else ""
    lines += [(row + (pen if index == 4 else "")).center(width) for index, row in enumerate(big(mine.shown))]
    band, solid = band_text(view, side)
    lines.append(f"[ {band} ]".center(width, "#") if solid else band.center(width))
    return lines


def boxed(title, lines, width):
    """`lines` in a box `width` wide inside, with `title` in its top border."""
    return [f"+{f' {title} '.center(width, '-')}+", *(f"|{line[:width].ljust(width)}|" for line in lines), "+" + "-" * width + "+"]  # fmt: skip  # reads as the box it draws


def layout_for(columns, rows):
    """`wide`, `stacked` or `compact`: the richest layout that fits a terminal of that size."""
    if columns >= WIDE[0] and rows >= WIDE[1]:
        return "wide"
    if columns >= STACKED[0] and rows >= STACKED[1]:
        return "stacked"
    return "compact"


def screen_text(frames, view, held, columns, rows=24):
    """The whole terminal screen, at most `rows` lines of at most `columns` characters."""
    layout = layout_for(columns, rows)
    if layout == "wide":
        a, b = (boxed(f"Panel facing {side}", frame_to_text(frames[side]), 64) for side in SIDES)
        lines = [left + "  " + right for left, right in zip(a, b, strict=True)]
    elif layout == "stacked":
        lines = [
            line
            for side in SIDES
            for line in boxed(f"Panel facing {side}", frame_to_braille(frames[side]), 64)
        ]
    else:
        width = max(24, min(38, (columns - 2) // 2 - 2))  # two boxes and the gap between them fit
        a, b = (boxed(f"Panel facing {side}", panel_text(view, side, width), width) for side in SIDES)
        lines = [left + "  " + right for left, right in zip(a, b, strict=True)]
    help_line = next((text for text in HELPS if len(text) <= columns), HELPS[-1])
    lines += [status_text(view, held), help_line]
    return [line[:columns] for line in lines[-rows:]]


class _Closed(Exception):
    """The terminal went away (SIGHUP)."""


def run_interactive(config, stdin=None, stdout=None):
    """Run the clock in real time, keys as buttons, until `q`, Ctrl-C or the terminal closes.

    With stdout not a terminal (`make sim | tee log`), the keys still come from the terminal and
    the output is plain: each serial record as a line, as `--script` prints them, no screen drawn."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if not stdin.isatty():
        print(
            "tileclock: sim needs a terminal here; or run a script: tileclock sim --script FILE",
            file=sys.stderr,
        )
        return 2
    plain = not stdout.isatty()
    if plain:
        print(f"tileclock sim: output is not a terminal: one line a record. {HELP}", file=sys.stderr)
    start = time.monotonic_ns()
    sim = Simulator(config)
    releases = []  # (t_ns, button) of taps still down
    held = set()
    fd = stdin.fileno()
    saved = termios.tcgetattr(fd)
    wake_read, wake_write = os.pipe()  # a resize wakes the loop, to draw the screen afresh
    os.set_blocking(wake_write, False)
    previous = {
        signal.SIGWINCH: signal.signal(signal.SIGWINCH, lambda *_: os.write(wake_write, b"w")),
        signal.SIGHUP: signal.signal(signal.SIGHUP, _hang_up),
    }
    if not plain:
        stdout.write("\x1b[?1049h\x1b[?25l\x1b[2J")  # the alternate screen, no cursor
    try:
        tty.setcbreak(fd)
        while True:
            now = time.monotonic_ns() - start
            sim.catch_up(now)
            records = sim.serial_lines()
            if plain:
                stdout.writelines(line + "\n" for line in records)
            else:
                size = os.get_terminal_size(stdout.fileno())
                lines = screen_text(sim.daemon.frames, sim.view(), held, size.columns, size.lines)
                stdout.write("\x1b[H" + "\r\n".join(line + "\x1b[K" for line in lines) + "\x1b[J")
            stdout.flush()
            due = [t for t, _ in releases] + [sim.daemon.reactor.next_deadline() or now + NS_PER_S]
            timeout = max(0, min(due) - now) / NS_PER_S
            ready, _, _ = select.select([fd, wake_read], [], [], timeout)
            now = time.monotonic_ns() - start
            for t_ns, button in sorted(releases):
                if t_ns <= now:
                    sim.set_button(button, False, t_ns)
            releases = [(t, b) for t, b in releases if t > now]
            if wake_read in ready:
                os.read(wake_read, 64)
                if not plain:
                    stdout.write("\x1b[2J")
            if fd in ready:
                key = os.read(fd, 1).decode(errors="ignore")
                if key in ("q", "\x03", "\x04", ""):  # "": the terminal closed
                    break
                if key in KEYS:
                    sim.set_button(KEYS[key], True, now)
                    releases.append((now + PRESS_NS, KEYS[key]))
                elif key in HOLD_KEYS:
                    button = HOLD_KEYS[key]
                    sim.set_button(button, button not in held, now)
                    held ^= {button}
    except (KeyboardInterrupt, _Closed):
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.close(wake_read)
        os.close(wake_write)
        try:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            if plain:  # what the last wake made, then the closing records
                stdout.writelines(line + "\n" for line in sim.serial_lines())
            else:
                stdout.write("\x1b[?25h\x1b[?1049l")  # the cursor and the screen as they were
            stdout.flush()
        except (OSError, termios.error):  # the terminal is gone: nothing to restore, nowhere to write
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        sim.close()
    return 0


def _hang_up(signum, frame):
    raise _Closed
