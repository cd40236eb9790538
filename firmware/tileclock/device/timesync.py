"""The clock's time of day, which follows the director's laptop (chrony, docs/hall.md "One time
for the hall").

A round set for 14:00:00 (`set start=`) starts at 14:00:00 by this clock's own wall clock, which
chrony keeps on the laptop's; the game itself counts on the monotonic clock, as always. Here:
whether the kernel says the wall clock is synchronised (`adjtimex`, read-only, no privileges),
the wall clock at a monotonic instant, and chrony's own figures (`chronyc -c tracking`) for
`doctor` and the hall's page.
"""

import ctypes
import ctypes.util
import functools
import shutil
import subprocess
import threading
import time

from ..clock.timecode import NS_PER_MS

#: adjtimex's answer when the kernel's clock is not synchronised (linux/timex.h, TIME_ERROR)
TIME_ERROR = 5
#: how long `chronyc` may take to answer
CHRONYC_S = 2.0


@functools.cache
def _libc():
    # found once: `find_library` runs `ldconfig`, too slow for the loop (a call asks at its raise)
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def synchronised():
    """True if the kernel says the wall clock is synchronised (chrony sets this once it follows
    its server), False if it says not, None where it cannot be asked (not Linux)."""
    try:
        libc = _libc()
        timex = ctypes.create_string_buffer(512)  # struct timex, zeroed: modes 0 reads only
        state = libc.adjtimex(timex)
    except (OSError, AttributeError):
        return None
    return None if state < 0 else state != TIME_ERROR


def system_wall(monotonic_ns=time.monotonic_ns, wall_ns=time.time_ns, synced=synchronised):
    """`wall(now_ns)`: the time of day (ms since 1970 UTC) at monotonic `now_ns`, from this
    machine's wall clock, or None while the kernel says it is not synchronised (a Pi has no
    real-time clock: unsynchronised, its wall clock may be days out)."""

    def wall(now_ns):
        if synced() is False:
            return None
        return (wall_ns() - (monotonic_ns() - now_ns)) // NS_PER_MS

    return wall


def virtual_wall(epoch_ms, monotonic_ns):
    """A simulated clock's wall clock (`Parts.wall`: the time of day in ns now): `epoch_ms` when
    its monotonic clock (`monotonic_ns()`, a `VirtualTime`) reads 0."""
    return lambda: epoch_ms * NS_PER_MS + monotonic_ns()


def tracking(run=subprocess.run):
    """chrony's view of this clock (`chronyc -c tracking`), as a dict, or None with no chrony:
    `source` (its server), `stratum`, `offset_us` (this clock's wall clock minus the server's
    time, µs), `error_us` (the most it may be out: half the round trip plus the dispersion, µs),
    `synced` (chrony's leap status is not "Not synchronised")."""
    tool = shutil.which("chronyc")
    if tool is None:
        return None
    try:
        answer = run([tool, "-c", "tracking"], capture_output=True, text=True, timeout=CHRONYC_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_tracking(answer.stdout) if answer.returncode == 0 else None


class TimeReport:
    """chrony's figures for the clock's state on the hall's broker, read at most every `every_s`
    (a `chronyc` a record would cost the Pi more than the record): `offset_us`, `error_us`,
    `synced`; None while chrony does not answer (or has not answered yet).

    It is asked on the loop's thread, which must never wait for a process: a read that is due is
    started on a thread of its own (`start(target)`, one at a time), and the figures it finds are
    given from the next call on."""

    def __init__(self, every_s=60.0, read=tracking, monotonic=time.monotonic, start=None):
        self.every_s, self.read, self.monotonic = every_s, read, monotonic
        self.start = start or _start_thread
        self._at, self._said = None, None
        self._reading = threading.Lock()  # held while a read is under way

    def __call__(self):
        now = self.monotonic()
        if (self._at is None or now - self._at >= self.every_s) and self._reading.acquire(blocking=False):
            self._at = now
            self.start(self._read)
        return self._said

    def _read(self):
        try:
            seen = self.read()
            self._said = None if seen is None else {k: seen[k] for k in ("offset_us", "error_us", "synced")}
        finally:
            self._reading.release()


def _start_thread(target):
    threading.Thread(target=target, name="chronyc", daemon=True).start()


def parse_tracking(text):
    """`chronyc -c tracking`'s one CSV line as `tracking()` gives it; None if it is not one."""
    fields = text.strip().split(",")
    if len(fields) < 14:
        return None
    try:
        system_s, delay_s, dispersion_s = float(fields[4]), float(fields[10]), float(fields[11])
        stratum = int(fields[2])
    except ValueError:
        return None
    return {
        "source": fields[1],
        "stratum": stratum,
        # chrony's "System time" is the correction still to make: negative while the clock is fast
        "offset_us": round(-system_s * 1e6),
        "error_us": round((delay_s / 2 + dispersion_s) * 1e6),
        "synced": fields[13].strip() != "Not synchronised" and stratum < 16,
    }
