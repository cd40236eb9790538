"""The clock's health for the hall's page (`health` in its state, device/links/hall_state.py):
a compact dict, read at most every `EVERY_S` so that 200 clocks cost the hall a state message
each per half minute at most, and each one a few reads of /proc and the card.

What it says, each field None where it is not known: `v` the software version; `up_s` the
machine's uptime (/proc/uptime) and `run_s` this run's; `free_mb` the card's free space and
`journal_kb` the journal's size; `wifi` the first wireless interface's signal in
/proc/net/wireless (`dbm`, and `link` quality as the driver says it); `sync` whether the kernel
says the wall clock is synchronised (chrony's own figures are the state's `time`); `power` the
Pi's supply (`device/power.py`: its monitor `src`, its `flags`, and `low` while at fault). The
last restart's reason (`restart`) is the records' own, added by the state (hall_state.py).

Every read made on the loop's thread is a file or a system call of microseconds; the journal's
size, a walk over up to thousands of segments on an SD card, is taken on a thread of its own (one
walk at a time, its figure given from the next read on), as chrony's figures are
(`timesync.TimeReport`); nothing here starts a process.
"""

import os
import re
import threading
import time

from .. import __version__
from .timesync import synchronised

#: how often the health is read again (the state is published only when it changed)
EVERY_S = 30.0


def wifi_signal(root="/"):
    """The first wireless interface's signal from `root`/proc/net/wireless: {"if", "dbm", "link"},
    or None (no Wi-Fi, or not Linux)."""
    try:
        with open(os.path.join(root, "proc", "net", "wireless"), encoding="ascii") as file:
            lines = file.read().splitlines()[2:]  # two lines of headings
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        fields = rest.split()
        if len(fields) < 3:
            continue
        try:
            link, level = int(float(fields[1])), int(float(fields[2]))
        except ValueError:
            continue
        if level > 63:  # an older driver's unsigned byte: 216 is -40 dBm
            level -= 256
        if not (-127 <= level <= 0 and 0 <= link <= 255):
            continue
        return {"if": interface_label(name.strip()), "dbm": level, "link": link}
    return None


def interface_label(name):
    """An interface's name as the hall takes a label (`wire/state.py`): letters, digits, `_` and
    `-`, 32 at most, a letter or digit first (`wlan0.1` is sent as `wlan0_1`)."""
    label = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:32]
    return label if label[:1].isalnum() and label[:1].isascii() else f"w{label}"[:32]


def uptime_s(root="/"):
    """The machine's uptime in whole seconds from `root`/proc/uptime, or None."""
    try:
        with open(os.path.join(root, "proc", "uptime"), encoding="ascii") as file:
            return int(float(file.read().split()[0]))
    except (OSError, ValueError, IndexError):
        return None


def free_mb(folder):
    """The free space (for an ordinary user) on `folder`'s file system in MB, or None."""
    if folder is None:
        return None
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize // 1_000_000


def folder_kb(folder):
    """The size of the files in `folder` and below in kB, or None."""
    if folder is None:
        return None
    total = 0
    try:
        for parent, _dirs, files in os.walk(folder):
            for name in files:
                try:
                    total += os.stat(os.path.join(parent, name)).st_size
                except OSError:
                    continue
    except OSError:
        return None
    return total // 1000


class Health:
    """`health()`: the clock's health as a compact dict, read again at most every `every_s`.

    `root`: where /proc is read (a test's tree); `journal_dir`: the journal's folder (None: in
    memory); `power`: the loop's `power.PowerWatch`, or None; `started`: () -> this run's start in
    `monotonic`'s seconds; `synced`: () -> the kernel's synchronised flag; `start(target)`: runs
    the journal's walk off the loop's thread (a thread of its own unless a test says)."""

    def __init__(
        self,
        root="/",
        journal_dir=None,
        power=None,
        every_s=EVERY_S,
        monotonic=time.monotonic,
        synced=synchronised,
        version=__version__,
        start=None,
    ):
        self.root, self.journal_dir, self.power = root, journal_dir, power
        self.start = start or _start_thread
        self._journal_kb = None  # the last walk's figure
        self._walking = threading.Lock()  # held while a walk is under way
        self.every_s, self.monotonic, self.synced, self.version = every_s, monotonic, synced, version
        self._started = monotonic()
        self._at, self._said = None, None
        self.reads = 0  # how many times it was read (the rate the hall pays)

    def __call__(self):
        now = self.monotonic()
        if self._at is None or now - self._at >= self.every_s:
            self._at = now
            self._said = self.read(now)
            self.reads += 1
        return self._said

    def read(self, now):
        """The figures now (the journal's size as of the last walk, and a new walk started)."""
        if self.journal_dir is not None and self._walking.acquire(blocking=False):
            self.start(self._walk)
        said = {
            "v": self.version,
            "up_s": uptime_s(self.root),
            "run_s": int(now - self._started),
            "free_mb": free_mb(self.journal_dir),
            "journal_kb": self._journal_kb,
            "wifi": wifi_signal(self.root),
            "sync": self.synced(),
        }
        if self.power is not None:
            state = self.power.state
            said["power"] = {"src": state.source, "flags": state.flags, "low": self.power.failing is not None}
        return said

    def _walk(self):
        try:
            self._journal_kb = folder_kb(self.journal_dir)
        finally:
            self._walking.release()


def _start_thread(target):
    threading.Thread(target=target, name="journal-size", daemon=True).start()
