"""`tileclock bench --wiring`: the same presses through the service for each way of wiring the panels.

For each wiring (device/wiring.py: both panels on one I2C bus, one a bus, or
SPI at 8 MHz through luma's own SPI interface) the service runs on simulated
panels wired so, and its timings give the two latencies a player sees (the
turn mark shown, the whole panels) and the bus time a switch and a tick take,
worked out from the bytes and transactions each bus carried at its clock.
"""

from .report import _shown
from .service import measure_service

#: the figures each wiring gets, as the table names them
COLUMNS = (
    ("press_to_turn_shown_p99_ms", "turn shown p99"),
    ("press_to_turn_shown_median_ms", "median"),
    ("press_to_panel_p99_ms", "panels p99"),
    ("press_to_panel_median_ms", "median"),
    ("turn_bus_ms_per_switch", "turn bus"),
    ("bus_ms_per_switch", "bus a switch"),
    ("bus_ms_per_tick", "bus a tick"),
    ("boot_to_clock_s", "boot to clock s"),
    ("wakeups_per_s", "wake-ups/s"),
)


def compare(wirings, idle_s, presses, progress, state_parent=None):
    """Each wiring's figures, by name."""
    found = {}
    for number, wiring in enumerate(wirings, start=1):
        progress.say(
            f"wiring {number}/{len(wirings)}: {wiring}; {idle_s} s with A running, {presses:,} presses"
        )
        found[wiring] = measure_service(idle_s, presses, progress, state_parent, wiring=wiring)
    return found


def table(found):
    """The wirings side by side (times in ms unless said)."""
    lines = [f"{'wiring':15}" + "".join(f"{title:>16}" for _, title in COLUMNS)]
    for wiring, figures in found.items():
        lines.append(f"{wiring:15}" + "".join(f"{_shown(figures.get(key), 2):>16}" for key, _ in COLUMNS))
    return "\n".join(lines)
