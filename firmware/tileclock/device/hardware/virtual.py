"""Virtual time for gpiozero's mock pins, so simulated presses carry exact, chosen timestamps.

gpiozero's `MockPin` stamps each change with the real `monotonic()`; here the
factory's ticks come from a `VirtualTime` the simulator steps, so a 40-minute
game runs in milliseconds and every edge lands on the instant the script says.
"""

import threading
import time
import uuid

from gpiozero.pins.mock import MockFactory

from ...clock.timecode import NS_PER_S


class VirtualTime:
    """A monotonic nanosecond clock that moves only when told to.

    `boot_id` names its epoch, as the kernel's boot id names the real one: a new
    `VirtualTime` is a fresh power-on.
    """

    def __init__(self, start_ns=0, boot_id=None):
        self.now_ns = start_ns
        self.boot_id = boot_id or uuid.uuid4().hex

    def __call__(self):
        return self.now_ns

    def set(self, t_ns):
        """Move to `t_ns`; time never goes backwards."""
        if t_ns < self.now_ns:
            raise ValueError(f"virtual time cannot go back from {self.now_ns} to {t_ns}")
        self.now_ns = t_ns


class MonotonicTime:
    """The real monotonic clock, shaped like `VirtualTime` (mock pins in real time: `--simulate`, the benchmark)."""

    @property
    def boot_id(self):
        """The kernel's id of this boot: the same after a process restart, new after a power cut."""
        try:
            with open("/proc/sys/kernel/random/boot_id") as file:
                return file.read().strip()
        except OSError:
            return None

    @property
    def now_ns(self):
        return time.monotonic_ns()

    def __call__(self):
        return time.monotonic_ns()

    def set(self, t_ns):
        """Real time moves by itself."""


class VirtualFactory(MockFactory):
    """gpiozero's own mock factory and mock pins, with each edge stamped by a `VirtualTime`.

    gpiozero's `MockPin` hands its device the real `time.monotonic()` of a change as the edge's
    ticks; the simulator's presses happen at virtual instants instead. A mock pin calls its
    `when_changed` on the thread that drives it, inside `drive_low()`/`drive_high()`, so the
    button stamps the edge with this factory's `edge_ns`, the virtual time at that call, and
    gpiozero's ticks are set aside. Only public API is used: the factory's `ticks`/`ticks_diff`
    (which every factory defines) and the pins' `drive_low`/`drive_high`, through `drive`.
    """

    def __init__(self, time, **kwargs):
        self.time = time
        #: held while a pin is driven and its edge stamped and passed on (`flush_edges`); a pin
        #: driven from the edge's own callback takes it again
        self.edge_lock = threading.RLock()
        self._driving = threading.local()  # how deep this thread is in `drive` (0: not in it)
        super().__init__(**kwargs)

    def drive(self, pin, down):
        """Make (`down`) or break the contact of the button on `pin`, an input pulled up: pressed is low.

        The change is stamped and handed to the device as one step, under `edge_lock`, so that
        `flush_edges` can wait for an edge stamped before it to be posted.
        """
        with self.edge_lock:
            self._driving.depth = getattr(self._driving, "depth", 0) + 1
            try:
                pin.drive_low() if down else pin.drive_high()
            finally:
                self._driving.depth -= 1

    def flush_edges(self):
        """Return once every edge stamped so far has been passed on to its device.

        In real time (`tileclock run --simulate`) a pin is changed from another thread: without this,
        the loop could wake between an edge's stamp and its post, miss it, and take it at its next
        wake, late. The loop calls this on each wake, after reading the time; an edge stamped before
        then holds `edge_lock` until it is posted.
        """
        with self.edge_lock:
            pass

    def ticks(self):
        return self.time.now_ns

    @staticmethod
    def ticks_diff(later, earlier):
        return (later - earlier) / NS_PER_S

    def edge_ns(self, ticks):
        """The edge's time: the virtual time of the call (gpiozero's real-time `ticks` set aside).

        Only an edge made through `drive` is taken, as strict as a real backend, whose every edge
        `flush_edges` covers: a pin driven directly (`pin.drive_low()`) would be stamped and posted
        outside `edge_lock`, and the loop could read the time, miss the edge and take it late."""
        if not getattr(self._driving, "depth", 0):
            raise RuntimeError(
                "a virtual pin changed outside VirtualFactory.drive: drive it through the factory"
            )
        return self.time.now_ns
