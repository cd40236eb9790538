"""Bytes the panels' bus carries: per one-second tick and per switch, over a simulated game.

Three counts on the same frames, both panels: what tileclock's page-diff
drivers send, the floor (the bytes of the panels' memory that really change,
with no addressing at all), and what luma.oled's stock driver sends (the whole
frame on every `display()`). Each is counted as it would go over the Pi's own
I2C bus (luma on smbus2: one transaction per command and per data block), and
turned into bus time at the config's `screens.i2c_hz`.

Run as `python -m tileclock.bench.busbytes [SCRIPT]`; the figures are in docs/screens.md.
"""

import random
import sys
from collections import Counter

from ..device.config_schema import Config
from ..device.hardware.oled import RecordingBus, pack_pages, pi_i2c
from ..device.wiring import bus_ns
from ..sim.script import parse_script
from ..sim.simulator import Simulator

FULL_FRAME = 1024  # what luma.oled sends for every display() of a 128x64 panel


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


class _Beside:
    """Follows the frames the clock shows and counts, for each wake, the floor and luma's stock cost."""

    def __init__(self, config):
        from luma.oled.device import sh1106, ssd1306

        stock = {"ssd1306": ssd1306, "sh1106": sh1106}
        self.bus = RecordingBus(keep=False)
        self.devices = {
            spec.faces: stock[spec.driver](pi_i2c(self.bus, spec.address), rotate=spec.rotate)
            for spec in config.panels
        }
        self.pages = {}  # side -> the pages the panel holds
        self.shown = {}  # side -> the frame it shows now
        self.floor = 0

    def frames(self, now_ns, frames):
        self.shown.update(frames)

    def settle(self):
        """Send what changed since the last call to the stock drivers; count the floor."""
        for side, frame in self.shown.items():
            pages = pack_pages(frame)
            held = self.pages.get(side)
            if held == pages:
                continue
            if held is not None:
                self.floor += sum(
                    a != b
                    for old, new in zip(held, pages, strict=True)
                    for a, b in zip(old, new, strict=True)
                )
            self.devices[side].display(frame)
            self.pages[side] = pages


def measure(script_text, config=Config()):
    """Average bus bytes and transactions (both panels) for a tick and for a switch: ours, the
    floor and luma's stock driver; and our bus time at `config.i2c_hz`."""
    script = parse_script(script_text)
    beside = _Beside(config)
    sim = Simulator(config, refresh_on_ticks=True, on_frames=beside.frames)
    beside.settle()  # the first frames, before any count
    buses = list(sim.buses.values())
    totals = {"tick": Counter(), "switch": Counter()}

    def snapshot():
        return {
            "bytes": sum(bus.bytes_on_wire() for bus in buses),
            "transactions": sum(bus.transactions for bus in buses),
            "stock_bytes": beside.bus.bytes_on_wire(),
            "floor_bytes": beside.floor,
        }

    running = [sim.clock.run]

    def count(before, timed):
        """Count the wake just made: a switch if the running side changed in it (a press is taken
        once its contact has held past the glitch filter, often in a later, timed wake), else a
        tick if it was a timed wake; an edge that switched nothing is not counted."""
        beside.settle()
        after = snapshot()
        switched = sim.clock.run not in (running[0], None)
        running[0] = sim.clock.run
        kind = "switch" if switched else "tick" if timed else None
        if kind is None:
            return
        totals[kind]["n"] += 1
        for key in after:
            totals[kind][key] += after[key] - before[key]

    for t_ns, button, down in script.edges:
        before = snapshot()
        for _ in sim.ticks(t_ns):
            count(before, timed=True)
            before = snapshot()
        sim.set_button(button, down, t_ns)
        count(before, timed=False)
    sim.close()
    figures = {"ticks": totals["tick"]["n"], "switches": totals["switch"]["n"]}
    for kind, total in totals.items():
        n = max(total["n"], 1)
        for key in ("bytes", "transactions", "floor_bytes", "stock_bytes"):
            figures[f"{key}_per_{kind}"] = total[key] / n
        figures[f"bus_ms_per_{kind}"] = (
            bus_ns(total["bytes"] / n, total["transactions"] / n, config.i2c_hz) / 1e6
        )
    figures["i2c_hz"] = config.i2c_hz
    return figures


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = open(argv[0]).read() if argv else sample_game()
    figures = measure(text)
    hz = figures["i2c_hz"]
    print(f"{figures['ticks']} ticks and {figures['switches']} switches; bytes on the wire, both panels")
    print(f"{'update':8} {'tileclock':>10} {'floor':>8} {'luma stock':>11} {'transactions':>13}  bus time")
    for kind in ("tick", "switch"):
        ours, floor, stock = (figures[f"{key}_per_{kind}"] for key in ("bytes", "floor_bytes", "stock_bytes"))
        transactions = figures[f"transactions_per_{kind}"]
        times = ", ".join(
            f"{bus_ns(ours, transactions, speed) / 1e6:.1f} ms at {speed // 1000} kHz"
            for speed in sorted({hz, 100_000, 400_000})
        )
        print(f"{kind:8} {ours:10.1f} {floor:8.1f} {stock:11.1f} {transactions:13.1f}  {times}")


if __name__ == "__main__":
    main()
