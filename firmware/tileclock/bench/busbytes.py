"""Bytes the panels' bus carries: per one-second tick and per switch, over a simulated game.

Run as `python -m tileclock.bench.busbytes [SCRIPT]`; the figures are in docs/screens.md.
"""

import random
import sys

from ..device.config import Config
from ..sim.script import parse_script
from ..sim.simulator import Simulator

FULL_FRAME = 1024  # what luma.oled sends for every display() of a 128x64 panel
#: Clock ticks the wire at 9 bits a byte (8 data bits and the acknowledge).
BITS_PER_BYTE = 9


def sample_game(seed=7, minutes=40):
    """A game script: turns of 5 to 60 s, a challenge now and then."""
    rng = random.Random(seed)
    lines, t, side = ["0 press B"], 0.0, "A"
    while t < minutes * 60:
        t += rng.uniform(5, 60)
        if rng.random() < 0.1:
            lines.append(f"{t:.3f} press STOP")
            t += rng.uniform(10, 40)
        lines.append(f"{t:.3f} press {side}")
        side = "B" if side == "A" else "A"
    return "\n".join(lines) + "\n"


def measure(script_text, config=Config()):
    """Average bus bytes (both panels) for a tick and for a switch, and the wake counts."""
    script = parse_script(script_text)
    sim = Simulator(config, refresh_on_ticks=True)
    buses = sim.buses.values()
    total = lambda: sum(bus.bytes_on_wire() for bus in buses)  # noqa: E731
    ticks = switches = 0
    tick_bytes = switch_bytes = 0
    for t_ns, button, down in script.edges:
        before = total()
        for _ in sim.ticks(t_ns):
            ticks += 1
            tick_bytes += total() - before
            before = total()
        before = total()
        sim.set_button(button, down, t_ns)
        if down and button != "STOP":
            switches += 1
            switch_bytes += total() - before
    sim.close()
    return {
        "ticks": ticks,
        "switches": switches,
        "bytes_per_tick": tick_bytes / max(ticks, 1),
        "bytes_per_switch": switch_bytes / max(switches, 1),
        "full_frames_per_update": 2 * FULL_FRAME,
    }


def bus_ms(nbytes, hz):
    """Milliseconds of I2C bus time for `nbytes` at `hz`."""
    return nbytes * BITS_PER_BYTE / hz * 1000


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = open(argv[0]).read() if argv else sample_game()
    figures = measure(text)
    for key, value in figures.items():
        print(f"{key:24} {value:10.1f}" if isinstance(value, float) else f"{key:24} {value:10d}")
    for name in ("bytes_per_tick", "bytes_per_switch", "full_frames_per_update"):
        nbytes = figures[name]
        print(
            f"{name:24} {bus_ms(nbytes, 100_000):7.1f} ms at 100 kHz {bus_ms(nbytes, 400_000):6.1f} ms at 400 kHz"
        )


if __name__ == "__main__":
    main()
