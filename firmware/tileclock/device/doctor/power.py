"""`tileclock doctor` on the Pi's power supply: which monitor it read (the kernel's `rpi_volt`
hwmon, or the firmware's `get_throttled`) and what it says (`device/power.py`)."""

from ..power import UNDER_VOLTAGE, UNDER_VOLTAGE_OCCURRED, describe, find_source, read_state
from .checks import OK, WARN, Check

WHAT = "power supply"
SUPPLY_FIX = (
    "a 5.1 V supply of 2.5 A (3 A for a Pi 4, 5 A for a Pi 5) on a short, thick cable; "
    "a phone charger or a long thin USB cable sags under load"
)


def check_power(root="/", on_pi=False):
    """What the Pi's power monitor under `root` says; None off a Pi with no monitor (a laptop)."""
    source = find_source(root)
    if source is None:
        if not on_pi:
            return None
        return Check(
            WARN,
            WHAT,
            "no power monitor found (no rpi_volt hwmon, no get_throttled): an under-voltage goes unseen",
            "load the raspberrypi-hwmon driver (Debian's and Raspberry Pi OS's kernels have it)",
        )
    state = read_state(source)
    where = f"{state.source} ({source.path})"
    if state.flags is None:
        return Check(WARN, WHAT, f"{where} cannot be read: {state.error}", "reboot; if it stays, see dmesg")
    if state.flags & (UNDER_VOLTAGE | UNDER_VOLTAGE_OCCURRED):
        return Check(WARN, WHAT, f"{where}: {describe(state.flags)} (flags {state.flags:x})", SUPPLY_FIX)
    return Check(OK, WHAT, f"{where}: {describe(state.flags)} (flags {state.flags:x})")
