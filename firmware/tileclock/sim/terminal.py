"""`tileclock sim` with no script: the clock live in a terminal of any size from 80x24 up.

The layout is picked for the terminal, and picked again when it is resized:

- wide (134x37 and up): both panels' real frames side by side, each character cell 2x2 pixels;
- stacked (66x38 and up): the real frames one above the other, each cell 2x4 pixels (braille);
- compact (anything smaller): each panel as text, its own time in big digits, in the panels' words
  (the turn pointers and the open call's own line as the panel has them).

Under the panels, one line says the state and the buttons held, and one line what to press.
Terminals report key presses, not releases, so a tap is a press of 0.1 s, the capital letter holds
a button down and `u` lets go of every button held. A key held down repeats (the terminal's
auto-repeat): a key that comes again within `REPEAT_S` of itself is taken for a repeat and does
nothing, and a hold is never let go by its own key, so no repeat can tap STOP three times (a call)
or let a long STOP hold go (the end asked). `d` stands for the director answering the call, as the
hall's page would (`call taken SEQ`, then `call done SEQ`). `--speed N` runs the clock N times real
time. The screen is redrawn in place (the alternate screen, as a full-screen program uses), and
left as it was on `q`, Ctrl-C or a closed terminal.
"""

import os
import select
import signal
import sys
import termios
import time
import tty

from ..clock.timecode import NS_PER_S
from ..device.screen.face import HINT_WORDS, STATE_WORDS, band_text, call_mark_text, top_left_text
from ..wire.protocol import with_crc
from ..wire.records import SIDES
from .script import PRESS_NS
from .simulator import Simulator

KEYS = {"a": "A", "l": "B", " ": "STOP"}
HOLD_KEYS = {"A": "A", "L": "B", "S": "STOP"}
RELEASE_KEY = "u"  # lets go of every button held
DIRECTOR_KEY = "d"  # the director answers the open call: taken, then done
#: seconds (real time) within which a key that comes again is its auto-repeat: terminals repeat a
#: held key every 30-100 ms after a first delay of 250 ms or more (so a key held down acts at most
#: twice: as typed, and at its first repeat), and a finger taps one key again no sooner than 150 ms
REPEAT_S = 0.15
#: What to press, longest first: the first that fits the terminal's width is shown.
HELPS = (
    "a l space: tap A B STOP   A L S: hold it down (u lets all go)   d: the director answers a call   q: quit",
    "a l space: tap   A L S: hold down   u: let go   d: director answers   q: quit",
    "a l space: tap  A L S: hold  u: let go  d: director  q: quit",
    "a l spc: tap A L S: hold u: up d: TD q: quit",
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


def status_text(view, held, speed=1.0):
    """One line of plain text, in the panels' words: the state, each side's time and penalty, buttons
    held, and the clock's speed when it is not real time."""
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
    if speed != 1:
        parts.append(f"speed x{speed:g}")
    return "   ".join(parts)


def big(text):
    """`text` (digits, `:` and `-`) in big digits: five lines."""
    return [" ".join(_BIG[ch][row] for ch in text) for row in range(5)]


def panel_text(view, side, width):
    """One panel as text, `width` wide inside its box: top line (a pointer at its left while this
    side's clock runs, as the panel's), the open call's own line, its own time big, its band."""
    opponent = "B" if side == "A" else "A"
    mine, theirs = view.side(side), view.side(opponent)
    pointer = "> " if view.run == opponent else ""
    theirs_text = f"{pointer}{opponent} {theirs.shown}" + (f" -{theirs.pen}" if theirs.pen else "")
    top = ("> " if view.run == side else "") + top_left_text(view)
    lines = [top + theirs_text.rjust(width - len(top)), (call_mark_text(view) or "").rjust(width)]
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


def screen_text(frames, view, held, columns, rows=24, speed=1.0):
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
    lines += [status_text(view, held, speed), help_line]
    return [line[:columns] for line in lines[-rows:]]


class KeyPad:
    """The terminal's keys as the clock's buttons, and `d` as the director answering a call.

    `key` is handed each key typed with the clock's time and the real time it came at (the
    auto-repeat is told by the real time: at `--speed 10` it still comes every 30-100 ms)."""

    def __init__(self, sim):
        self.sim = sim
        self.held = set()  # buttons held down by their capital letter until `u`
        self.releases = []  # (t_ns, button) of taps still down
        self._last = (None, -REPEAT_S)  # the last key typed and its real time (s)

    def key(self, key, t_ns, real_s):
        """Act on `key` typed at the clock's `t_ns`, `real_s` seconds (real time) since any origin."""
        repeat = key == self._last[0] and real_s - self._last[1] < REPEAT_S
        self._last = (key, real_s)
        if repeat:  # the terminal's auto-repeat of a key held down: never a tap, a hold or an answer
            return
        down = self.held | {button for _, button in self.releases}
        if key in KEYS and KEYS[key] not in down:
            self.sim.set_button(KEYS[key], True, t_ns)
            self.releases.append((t_ns + PRESS_NS, KEYS[key]))
        elif key in HOLD_KEYS and HOLD_KEYS[key] not in down:
            self.sim.set_button(HOLD_KEYS[key], True, t_ns)
            self.held.add(HOLD_KEYS[key])
        elif key == RELEASE_KEY:
            for button in sorted(self.held):
                self.sim.set_button(button, False, t_ns)
            self.held.clear()
        elif key == DIRECTOR_KEY:
            self.answer_call(t_ns)

    def answer_call(self, t_ns):
        """The director's answer to the open call, as the hall's page sends it: `taken` first, then
        `done`; nothing if no call is open."""
        call = self.sim.clock.play.calls.open
        if call is not None:
            self.sim.send(with_crc(f"call {'done' if call.taken else 'taken'} {call.seq}"), t_ns)

    def next_release(self):
        """When the first tap still down is let go (the clock's ns), or None."""
        return min((t for t, _ in self.releases), default=None)

    def release_due(self, t_ns):
        """Let go of each tap due by `t_ns`, at its own time."""
        for release_ns, button in sorted(self.releases):
            if release_ns <= t_ns:
                self.sim.set_button(button, False, release_ns)
        self.releases = [(t, b) for t, b in self.releases if t > t_ns]

    def advance(self, t_ns):
        """Run the clock on to `t_ns`, letting go of each tap due by then at its own time first: a
        slow redraw can carry the clock past a tap's release, and its time cannot go back."""
        self.release_due(t_ns)
        self.sim.catch_up(t_ns)


class _Closed(Exception):
    """The terminal went away (SIGHUP)."""


def run_interactive(config, stdin=None, stdout=None, speed=1.0):
    """Run the clock, `speed` times real time, keys as buttons, until `q`, Ctrl-C or the terminal closes.

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

    def clock_now():
        return int((time.monotonic_ns() - start) * speed)

    sim = Simulator(config)
    keys = KeyPad(sim)
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
            now = clock_now()
            keys.advance(now)
            records = sim.serial_lines()
            if plain:
                stdout.writelines(line + "\n" for line in records)
            else:
                size = os.get_terminal_size(stdout.fileno())
                lines = screen_text(sim.daemon.frames, sim.view(), keys.held, size.columns, size.lines, speed)
                stdout.write("\x1b[H" + "\r\n".join(line + "\x1b[K" for line in lines) + "\x1b[J")
            stdout.flush()
            due = [t for t in (keys.next_release(), sim.daemon.reactor.next_deadline()) if t is not None]
            timeout = max(0, min(due, default=now + NS_PER_S) - now) / NS_PER_S / speed
            ready, _, _ = select.select([fd, wake_read], [], [], timeout)
            now = clock_now()
            keys.release_due(now)
            if wake_read in ready:
                os.read(wake_read, 64)
                if not plain:
                    stdout.write("\x1b[2J")
            if fd in ready:
                key = os.read(fd, 1).decode(errors="ignore")
                if key in ("q", "\x03", "\x04", ""):  # "": the terminal closed
                    break
                keys.key(key, now, time.monotonic())
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
