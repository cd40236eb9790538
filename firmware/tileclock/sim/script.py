"""Scripts for the simulator: timed button edges as text.

One line is `<time> <verb> <button> [<seconds>]`: `down X` and `up X` are raw
contact edges, `press X` is down then up 0.1 s later, `hold X S` is down then
up S seconds later, `until` (no button) runs the clock on to that time, and
`send TEXT` hands the clock a director's command line as the serial line would
(its CRC is added: `30 send adjust A -60000`), and `power FLAGS` sets the Pi's power flags as the
firmware's `get_throttled` gives them, in hex (`40 power 50005`: under-voltage now; `power 0`:
fine again), which the clock reads at its next check (device/power.py). `#` starts a comment. Times are seconds (`95.25`) or `m:ss[.fff]`, never
decreasing from one line to the next.
"""

from dataclasses import dataclass, field

from ..clock.timecode import NS_PER_MS, parse_seconds
from ..device.power import FLAGS_MASK
from ..wire.protocol import with_crc
from ..wire.records import BUTTONS

PRESS_NS = 100 * NS_PER_MS


class ScriptError(ValueError):
    """A line the simulator cannot run; the message gives its number and text."""


@dataclass(frozen=True)
class Script:
    """A parsed script: every raw edge in time order, and when the run ends."""

    edges: list  # (t_ns, button, down)
    end_ns: int
    #: what a user may not have meant, though it runs (a button still down at the end)
    notes: tuple = ()
    commands: list = field(default_factory=list)  # (t_ns, command line with its CRC)
    power: list = field(default_factory=list)  # (t_ns, get_throttled's flags)

    def steps(self):
        """Edges, commands and power flags in time order: (t_ns, button, down), (t_ns, "send", line)
        or (t_ns, "power", flags)."""
        steps = self.edges + [(t, "send", line) for t, line in self.commands]
        return sorted(steps + [(t, "power", flags) for t, flags in self.power], key=lambda step: step[0])


def parse_script(text):
    """Parse a whole script; ScriptError names the first bad line.

    Nothing is guessed: a button is `A`, `B` or `STOP` as written, a contact goes down only when
    it is up (and up only when down), and a script with no lines is refused.
    """
    edges, commands, power = [], [], []
    until_lines = 0
    lines_of_edges = []  # the line number of each edge, to name it if the edges do not balance
    last_ns = 0
    end_ns = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue

        def fail(why, number=number, raw=raw):
            raise ScriptError(f"line {number}: {why}: {raw.strip()!r}")

        words = line.split()
        try:
            t_ns = parse_seconds(words[0])
        except ValueError as error:
            fail(str(error))
        if t_ns < last_ns:
            fail("time goes backwards")
        last_ns = t_ns
        verb, args = (words[1] if len(words) > 1 else ""), words[2:]
        if verb == "until":
            if args:
                fail("until takes no button")
            end_ns = max(end_ns, t_ns)
            until_lines += 1
            continue
        if verb == "send":
            if not args:
                fail("send takes a command, e.g. send adjust A -60000")
            if not all(word.isascii() for word in args):  # the serial line carries ASCII only
                fail("send takes a command in ASCII, as the serial line carries it")
            commands.append((t_ns, with_crc(" ".join(args))))
            continue
        if verb == "power":
            flags = _power_flags(args)
            if flags is None:
                fail("power takes get_throttled's flags in hex, e.g. power 50005 (under-voltage) or power 0")
            power.append((t_ns, flags))
            continue
        if verb not in ("down", "up", "press", "hold"):
            fail("expected down, up, press, hold, send, power or until")
        if not args or args[0] not in BUTTONS:
            hint = (
                f" (buttons are written in capitals: {args[0].upper()})"
                if args and args[0].upper() in BUTTONS
                else ""
            )
            fail(f"expected a button: A, B or STOP{hint}")
        button = args[0]
        wanted = 2 if verb == "hold" else 1
        if len(args) != wanted:
            fail(f"{verb} takes {'a button and seconds' if verb == 'hold' else 'one button'}")
        if verb == "down":
            edges.append((t_ns, button, True))
        elif verb == "up":
            edges.append((t_ns, button, False))
        else:
            if verb == "hold":
                try:
                    length_ns = parse_seconds(args[1])
                except ValueError as error:
                    fail(str(error))
            else:
                length_ns = PRESS_NS
            edges.append((t_ns, button, True))
            edges.append((t_ns + length_ns, button, False))
        lines_of_edges += [(number, raw.strip())] * (len(edges) - len(lines_of_edges))
    if not edges and not until_lines and not commands and not power:
        raise ScriptError(
            "the script has no lines to run (a line is `<time> <verb> [<button>]`, e.g. `0 press B`)"
        )
    order = sorted(range(len(edges)), key=lambda index: edges[index][0])  # stable: same instant, script order
    held = _check_balanced([edges[index] for index in order], [lines_of_edges[index] for index in order])
    edges = [edges[index] for index in order]
    end_ns = max([end_ns] + [t for t, _, _ in edges] + [t for t, _ in commands + power])
    notes = tuple(
        f"line {number}: {button} is still down when the script ends" for button, number in held.items()
    )
    return Script(edges, end_ns, notes, commands, power)


def _power_flags(args):
    """get_throttled's flags from a `power` line's one word (hex, `0x` allowed), or None."""
    if len(args) != 1:
        return None
    try:
        flags = int(args[0], 16)
    except ValueError:
        return None
    return flags if 0 <= flags and not flags & ~FLAGS_MASK else None


def _check_balanced(edges, lines):
    """A contact goes down only when it is up, and up only when it is down (as a real one does)."""
    down = {}  # button -> the line that put it down
    for (_, button, is_down), (number, raw) in zip(edges, lines, strict=True):
        if is_down == (button in down):
            state = "down" if is_down else "up"
            raise ScriptError(f"line {number}: {button} is already {state} then: {raw!r}")
        if is_down:
            down[button] = number
        else:
            del down[button]
    return down
