"""The Pi's own word on its power supply: under-voltage and throttling, read from sysfs.

Two places say it, and the clock reads the first that is there (under `root`, `/` on a Pi;
`[clock] power_root` points it at a fake tree in a test):

- the kernel's `rpi_volt` hwmon (Debian's and Raspberry Pi OS's kernels, `raspberrypi-hwmon`):
  `/sys/class/hwmon/hwmon*/name` reads `rpi_volt`, and its `in0_lcrit_alarm` reads `1` while the
  firmware saw an under-voltage at its last poll (the driver asks every 2 s, clearing the
  firmware's sticky bits each time), else `0`;
- the firmware's `get_throttled` (`/sys/devices/platform/soc/soc:firmware/get_throttled`, the
  Raspberry Pi kernel only, deprecated there): the firmware's flags in hex, no `0x` (`50005`):
  bit 0 under-voltage now, bit 1 the ARM's frequency capped, bit 2 throttled, bit 3 the soft
  temperature limit, and bits 16-19 the same "has occurred" since they were last cleared. On an
  older kernel each read is a mailbox call to the firmware that can fail (EIO, ETIMEDOUT).

Both files are read-only (0444). The hwmon's read takes microseconds (its value is the driver's
last poll), and the loop makes it only on a wake that has nothing more urgent (`PowerWatch`);
`get_throttled`'s may wait on the firmware's mailbox (up to a second, then ETIMEDOUT), so the
loop reads it through `ReadAhead`, on a thread of its own.

The hwmon's alarm is as of the driver's last poll, every 2 s, and that poll clears the
firmware's "has occurred" bits: an under-voltage shorter than about two seconds that falls
between two of the clock's checks can be missed by both sources where the driver is loaded.
"""

import errno
import glob
import os
import threading
from dataclasses import dataclass

from ..clock.timecode import NS_PER_S

UNDER_VOLTAGE = 1 << 0
CAPPED = 1 << 1
THROTTLED = 1 << 2
SOFT_TEMPERATURE = 1 << 3
#: the "has occurred" bits are the "now" bits shifted by this much
OCCURRED_SHIFT = 16
UNDER_VOLTAGE_OCCURRED = UNDER_VOLTAGE << OCCURRED_SHIFT
FLAG_WORDS = {
    UNDER_VOLTAGE: "under-voltage",
    CAPPED: "frequency capped",
    THROTTLED: "throttled",
    SOFT_TEMPERATURE: "soft temperature limit",
}
#: the most bits get_throttled has (0-3 now, 16-19 occurred); anything above is not its answer
FLAGS_MASK = 0xF000F

HWMON_GLOB = "sys/class/hwmon/hwmon*"
HWMON_NAME = "rpi_volt"
HWMON_ALARM = "in0_lcrit_alarm"
FIRMWARE_FILE = "sys/devices/platform/soc/soc:firmware/get_throttled"

#: a check is due this long after the last; it is made at the loop's next wake after that
CHECK_NS = 2 * NS_PER_S  # the hwmon driver polls the firmware every 2 s
#: an idle loop (no other wake) is woken for a check this long after the last
IDLE_CHECK_NS = 10 * NS_PER_S


def describe(flags):
    """The flags in words: `under-voltage, throttled` (now), `under-voltage earlier` (only occurred)."""
    words = [word for bit, word in FLAG_WORDS.items() if flags & bit]
    words += [
        f"{word} earlier"
        for bit, word in FLAG_WORDS.items()
        if flags & (bit << OCCURRED_SHIFT) and not flags & bit
    ]
    return ", ".join(words) or "fine"


def _read_text(path):
    """A sysfs file's text as the kernel gives it (one value, a newline); OSError as it raises."""
    with open(path, encoding="ascii") as file:
        return file.read()


class HwmonAlarm:
    """The kernel's `rpi_volt` hwmon: its alarm, as flags (1: under-voltage now and occurred)."""

    source = "rpi_volt"

    def __init__(self, path):
        self.path = path

    def read(self):
        """The flags; OSError when the file cannot be read, ValueError when it is not `0` or `1`."""
        text = _read_text(self.path).strip()
        if text not in ("0", "1"):
            raise ValueError(f"{self.path} reads {text!r}, not 0 or 1")
        return (UNDER_VOLTAGE | UNDER_VOLTAGE_OCCURRED) if text == "1" else 0


class FirmwareFlags:
    """The firmware's `get_throttled` file: its hex flags."""

    source = "get_throttled"

    def __init__(self, path):
        self.path = path

    def read(self):
        """The flags; OSError when the file cannot be read, ValueError when it is not hex flags."""
        text = _read_text(self.path).strip()
        try:
            flags = int(text, 16)
        except ValueError:
            raise ValueError(f"{self.path} reads {text!r}, not hex flags") from None
        if flags < 0 or flags & ~FLAGS_MASK:
            raise ValueError(f"{self.path} reads {text!r}, not get_throttled's flags")
        return flags


class SimulatedPower:
    """The simulator's power flags, set by a script's `power` line (`tileclock sim --script`)."""

    source = "simulated"
    path = "(simulated)"

    def __init__(self, flags=0):
        self.flags = flags

    def read(self):
        return self.flags


class PendingRead(Exception):
    """A read under way on its own thread, nothing read yet (`ReadAhead`)."""


class ReadAhead:
    """A monitor whose read may wait (`get_throttled`: the firmware's mailbox), read on a thread
    of its own so that the loop never waits: each `read()` starts a new read (one at a time) and
    gives the last one's flags, or raises as it raised; PendingRead before the first is done."""

    def __init__(self, source, start=None):
        self.source, self.path = source.source, source.path
        self._inner, self.start = source, start or _start_thread
        self._last = None  # (flags, None) or (None, the exception)
        self._reading = threading.Lock()

    def read(self):
        if self._reading.acquire(blocking=False):
            self.start(self._read)
        if self._last is None:
            raise PendingRead(self.path)
        flags, error = self._last
        if error is not None:
            raise error
        return flags

    def _read(self):
        try:
            self._last = (self._inner.read(), None)
        except (OSError, ValueError) as error:
            self._last = (None, error)
        finally:
            self._reading.release()


def _start_thread(target):
    threading.Thread(target=target, name="get_throttled", daemon=True).start()


def find_source(root="/"):
    """The first power monitor under `root`: the `rpi_volt` hwmon, else `get_throttled`; None
    where neither is (not a Pi, or a kernel that has neither)."""
    for folder in sorted(glob.glob(os.path.join(root, HWMON_GLOB))):
        try:
            name = _read_text(os.path.join(folder, "name")).strip()
        except OSError:
            continue
        alarm = os.path.join(folder, HWMON_ALARM)
        if name == HWMON_NAME and os.path.exists(alarm):
            return HwmonAlarm(alarm)
    firmware = os.path.join(root, FIRMWARE_FILE)
    if os.path.exists(firmware):
        return FirmwareFlags(firmware)
    return None


@dataclass(frozen=True)
class PowerState:
    """What the last read said: its source (`rpi_volt`, `get_throttled`, `simulated`, or None:
    none found), the flags (None before a read, or when it failed), and the error of a read that failed."""

    source: str | None
    flags: int | None = None
    error: str | None = None

    @property
    def under_voltage(self):
        return bool(self.flags and self.flags & UNDER_VOLTAGE)

    def summary(self):
        """A compact dict for the clock's state on the hall's broker (`health.power`)."""
        said = {"source": self.source}
        if self.flags is not None:
            said["flags"] = self.flags
        if self.error is not None:
            said["error"] = self.error[:80]
        return said


def read_state(source):
    """One read of `source` (None: no monitor) as a `PowerState`; never raises."""
    if source is None:
        return PowerState(None)
    try:
        return PowerState(source.source, source.read())
    except PendingRead:
        return PowerState(source.source)  # nothing known yet: no flags, no error
    except OSError as error:
        name = errno.errorcode.get(error.errno or 0, "error")
        return PowerState(source.source, error=f"{name} reading {source.path}")
    except ValueError as error:
        return PowerState(source.source, error=str(error))


class PowerWatch:
    """The loop's part that watches the power supply (a `parts.Watch`): checked on the loop's
    first wake `CHECK_NS` after the last check (a running clock's tick, most often: no wake of its
    own), and waking an idle loop `IDLE_CHECK_NS` after it.

    A new under-voltage (the now bit rising, or the occurred bit rising between two checks: a dip
    shorter than a check, where the firmware's sticky bits still hold it) makes it `failing`, which the loop records as a `fault` of part `power`
    and shows on the panels (`LOW POWER`) until a check finds none; a read that fails is kept in
    `state` (doctor and the hall's page say it), not a fault of the supply.
    """

    part = "power"

    def __init__(self, source=None, every_ns=CHECK_NS, idle_ns=IDLE_CHECK_NS):
        self.source = source
        self.every_ns, self.idle_ns = every_ns, idle_ns
        self.state = PowerState(source.source if source else None)
        self._checked_ns = None  # the last check, or None: the first is due at once
        self._failing = None

    @property
    def failing(self):
        """Why the supply is at fault (`under-voltage (get_throttled 50005)`), or None."""
        return self._failing

    def due(self, now_ns):
        """Whether a check is due at `now_ns` (a wake)."""
        if self.source is None:
            return False
        return self._checked_ns is None or now_ns - self._checked_ns >= self.every_ns

    def next_wake_ns(self, woke_ns):
        """When an idle loop must wake for a check (None without a monitor)."""
        if self.source is None:
            return None
        return woke_ns if self._checked_ns is None else self._checked_ns + self.idle_ns

    def check(self, now_ns):
        """Read the flags if a check is due; `failing` then says what they mean."""
        if not self.due(now_ns):
            return
        self._checked_ns = now_ns
        before = self.state.flags
        self.state = read_state(self.source)
        flags = self.state.flags
        if flags is None:
            return  # a failed read says nothing of the supply: what was said stands
        old = before or 0
        rose = (flags & ~old) & (UNDER_VOLTAGE | UNDER_VOLTAGE_OCCURRED)
        if flags & UNDER_VOLTAGE or rose:
            self._failing = f"{describe(flags)} ({self.state.source} {flags:x})"
        else:
            self._failing = None
