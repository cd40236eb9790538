"""Virtual time for gpiozero's mock pins, so simulated presses carry exact, chosen timestamps.

gpiozero's `MockPin` stamps each change with the real `monotonic()`; here the
factory's ticks come from a `VirtualTime` the simulator steps, so a 40-minute
game runs in milliseconds and every edge lands on the instant the script says.
"""

import threading
import time
import uuid

from gpiozero.pins.mock import MockFactory, MockPin, PinState


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


class VirtualPin(MockPin):
    """A mock pin whose changes are stamped by its factory's virtual time."""

    # gpiozero's private hooks, read in its source for 2.0, 2.0.1 and 2.0.1.post3 (identical there;
    # pyproject.toml keeps gpiozero below 2.1): MockPin.drive_high/drive_low call `_change_state(value)`
    # and, when it returns True, `_call_when_changed()`, which hands `self._last_change` to the
    # device as the edge's ticks. This override stamps `_last_change` (and the `states` history,
    # `PinState(elapsed, value)`) from the factory's ticks instead of `time.monotonic()`.
    def _change_state(self, value):
        if self._state == value:
            return False
        t = self._factory.ticks()
        self._state = value
        self.states.append(PinState(t - self._last_change, value))
        self._last_change = t
        return True

    # A change is stamped and handed to the device as one step, under the factory's `edge_lock`,
    # so that `VirtualFactory.flush_edges` can wait for an edge stamped before it to be posted.
    def drive_high(self):
        with self._factory.edge_lock:
            super().drive_high()

    def drive_low(self):
        with self._factory.edge_lock:
            super().drive_low()


class VirtualFactory(MockFactory):
    """gpiozero's mock factory, ticking in integer nanoseconds of a `VirtualTime`."""

    def __init__(self, time, **kwargs):
        self.time = time
        #: held while a pin's change is stamped and passed on (a pin changed in the callback may take it again)
        self.edge_lock = threading.RLock()
        super().__init__(pin_class=VirtualPin, **kwargs)

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
        return later - earlier

    @staticmethod
    def ticks_to_ns(ticks):
        """Ticks here are already integer nanoseconds."""
        return ticks
