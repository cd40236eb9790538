"""Scripts for the simulator: timed button edges as text.

One line is `<time> <verb> <button> [<seconds>]`: `down X` and `up X` are raw
contact edges, `press X` is down then up 0.1 s later, `hold X S` is down then
up S seconds later, `until` (no button) runs the clock on to that time.
`#` starts a comment. Times are seconds (`95.25`) or `m:ss[.fff]`, never
decreasing from one line to the next.
"""

from dataclasses import dataclass

from ..clock.records import BUTTONS
from ..clock.timecode import NS_PER_MS, parse_seconds

PRESS_NS = 100 * NS_PER_MS


class ScriptError(ValueError):
    """A line the simulator cannot run; the message gives its number and text."""


@dataclass(frozen=True)
class Script:
    """A parsed script: every raw edge in time order, and when the run ends."""

    edges: list  # (t_ns, button, down)
    end_ns: int


def parse_script(text):
    """Parse a whole script; ScriptError names the first bad line."""
    edges = []
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
            continue
        if verb not in ("down", "up", "press", "hold"):
            fail("expected down, up, press, hold or until")
        if not args or args[0].upper() not in BUTTONS:
            fail("expected a button: A, B or STOP")
        button = args[0].upper()
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
    edges.sort(key=lambda edge: edge[0])  # stable: same-instant edges keep script order
    end_ns = max([end_ns] + [t for t, _, _ in edges])
    return Script(edges, end_ns)
