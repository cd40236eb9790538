"""Who a clock is: an id two clocks never share, carried by every record it makes.

A board's name (`board = "12"`) is a label the director gives it and may give
twice; the clock id tells the streams apart. On a Pi it comes from the SoC's
serial number (else the OS's machine id), hashed and shortened, so it survives
a new card; a simulated clock keeps one in its state directory. The config's
`clock.id` overrides both. Pi OS's kernel shows the serial in /proc/cpuinfo;
Debian's mainline kernel (the tileclock image) only in the device tree, where
the Pi's firmware puts the same number: the same Pi gets the same id on both.
"""

import hashlib
import logging
import os
import re
import secrets

from ..wire.protocol import is_label

log = logging.getLogger(__name__)

__all__ = ["board_serial", "hardware_clock_id", "is_label", "new_clock_id", "stored_clock_id"]

#: The file in the state directory that keeps a clock id made at random.
ID_FILE = "clock-id"
ID_HEX_DIGITS = 12  # 48 bits: 200 clocks share one with odds of about 1 in 10^10
#: where the Pi's firmware writes the serial number into the device tree (a NUL-ended string)
DT_SERIAL = "/sys/firmware/devicetree/base/serial-number"


def new_clock_id():
    """A clock id made at random (a clock that keeps no state)."""
    return secrets.token_hex(ID_HEX_DIGITS // 2)


def board_serial(cpuinfo="/proc/cpuinfo", dt_serial=DT_SERIAL):
    """The Pi's serial number in lower-case hex (from `cpuinfo`, else the device tree), or None
    (no serial, or all zeros: some boards and emulators)."""
    return _pi_serial(cpuinfo) or _dt_serial(dt_serial)


def hardware_clock_id(cpuinfo="/proc/cpuinfo", machine_id="/etc/machine-id", dt_serial=DT_SERIAL):
    """The id from this board's serial number (a Pi's, in `cpuinfo` or the device tree), else from
    the OS's machine id; None if there is none of them."""
    source = board_serial(cpuinfo, dt_serial) or _read(machine_id)
    if not source:
        return None
    return hashlib.sha256(f"tileclock:{source}".encode()).hexdigest()[:ID_HEX_DIGITS]


def stored_clock_id(state_dir):
    """The id kept in `state_dir`, made at random the first time.

    If the folder cannot be written, the clock still starts, with an id that
    lasts until it stops (and says so in the log).
    """
    path = os.path.join(state_dir, ID_FILE)
    kept = _read(path)
    if is_label(kept):
        return kept
    if kept is not None:
        log.warning("%s holds %r, not a clock id: making a new one", path, kept[:40])
    made = new_clock_id()
    try:
        temporary = path + ".new"
        with open(temporary, "w", encoding="ascii") as file:
            file.write(made + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:
        log.warning("cannot keep the clock id in %s (%s): it lasts until the clock stops", path, error)
    return made


def _pi_serial(cpuinfo):
    text = _read(cpuinfo) or ""
    match = re.search(r"^Serial\s*:\s*([0-9a-fA-F]+)\s*$", text, re.MULTILINE)
    if not match or not match.group(1).strip("0"):
        return None  # no serial, or all zeros (some boards and emulators)
    return match.group(1).lower()


def _dt_serial(path):
    text = (_read(path) or "").strip("\0").strip()
    if not re.fullmatch(r"[0-9a-fA-F]{1,32}", text) or not text.strip("0"):
        return None
    return text.lower()


def _read(path):
    try:
        with open(path, encoding="ascii", errors="replace") as file:
            return file.read().strip()
    except OSError:
        return None
