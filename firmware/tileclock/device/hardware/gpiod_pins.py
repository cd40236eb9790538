"""A gpiozero pin factory on the kernel's GPIO character device, through the `gpiod` 2.x bindings.

The kernel (uAPI v2) stamps each edge at the interrupt, in CLOCK_MONOTONIC
nanoseconds, and hands it over on a file descriptor. This factory requests its
lines in one request (inputs with the pull the device asks for and edge
detection on both edges), and one thread blocks on that request's descriptor
with no timeout: it wakes only when an edge arrives, or when a pipe tells it
the request changed or the factory closed. Each edge reaches the device with
the kernel's timestamp as its ticks (integer nanoseconds), so however busy the
clock is, a press is charged from the instant the contact moved. The loop can
also take every queued edge itself when it wakes (`flush_edges`), so it never
has to wait for the reader thread to catch up with the kernel.

gpiozero's lgpio backend, by contrast, polls its lines every 0.5 ms in lgpio's
alert thread: about 2,000 wake-ups a second for the life of the process.
"""

import ctypes
import glob
import logging
import os
import select
import threading
import time
from datetime import timedelta

from gpiozero.exc import PinInvalidBounce, PinInvalidEdges, PinInvalidFunction, PinInvalidPull, PinSetInput
from gpiozero.pins.local import LocalPiFactory, LocalPiPin

log = logging.getLogger(__name__)

#: Labels of the Raspberry Pi's main GPIO controller (Pi 0-3, Pi 4, Pi 5), whose line offsets are BCM numbers.
PI_CHIP_LABELS = ("pinctrl-bcm2835", "pinctrl-bcm2711", "pinctrl-rp1")
CONSUMER = "tileclock"
PR_SET_NAME = 15  # prctl(2)


def chip_paths():
    """The GPIO character devices this machine has, in number order."""
    return sorted(glob.glob("/dev/gpiochip*"), key=lambda path: int(path[len("/dev/gpiochip") :] or 0))


def find_chip(gpiod, paths=None):
    """The path of the chip that carries the header's GPIOs: the first with a Pi controller's label,
    else the first chip (a Pi 5's numbering moved between kernels, so the label decides)."""
    paths = chip_paths() if paths is None else paths
    for path in paths:
        try:
            with gpiod.Chip(path) as chip:
                if chip.get_info().label in PI_CHIP_LABELS:
                    return path
        except OSError:
            continue
    if not paths:
        raise FileNotFoundError("no /dev/gpiochip* on this machine")
    return paths[0]


def name_this_thread(name):
    """Name the calling thread in /proc (`task/TID/comm`, 15 bytes at most), so `top -H`, the bench and
    the kernel check can tell it from the others (Linux; elsewhere nothing happens)."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_NAME, name.encode()[:15])
    except (OSError, AttributeError):
        pass


class GpiodFactory(LocalPiFactory):
    """gpiozero's pins on `gpiod` 2.x: kernel edge events, kernel timestamps, no polling.

    `chip` is a path such as `/dev/gpiochip0` (default: the Pi's GPIO controller).
    `gpiod` is the bindings module (tests pass a stand-in with the same API);
    `revision` a Pi revision code, for use off a Pi.
    """

    def __init__(self, chip=None, gpiod=None, revision=None):
        super().__init__()
        if gpiod is None:
            import gpiod
        self.gpiod = gpiod
        self._revision = revision
        self.chip_path = chip or find_chip(gpiod)
        self.pin_class = GpiodPin
        self.failure = None  # the error that stopped edge events (the chip went away), if any
        self.on_failure = None  # called with that error, from the edge reader's thread
        self._lines = {}  # line offset -> GpiodPin, for every pin this factory holds
        self._request = None
        self._lock = threading.RLock()
        self._reader_moved = threading.Condition(self._lock)  # the reader changed what it polls
        self._polled = None  # the request whose descriptor the reader polls (or is about to)
        self._retiring = False  # a request is being released: the reader must let go of its fd
        self._changing = threading.RLock()  # one change of the request at a time (see `_release`)
        self._wake_read, self._wake_write = os.pipe()
        self._closing = False
        self._reader = threading.Thread(target=self._read_edges, name="gpiod-edges", daemon=True)
        self._reader.start()

    def _get_revision(self):
        return self._revision if self._revision is not None else super()._get_revision()

    @staticmethod
    def ticks():
        """Integer nanoseconds of CLOCK_MONOTONIC: the clock the kernel stamps edges with."""
        return time.monotonic_ns()

    @staticmethod
    def ticks_diff(later, earlier):
        return (later - earlier) / 1e9

    @staticmethod
    def edge_ns(ticks):
        """An edge's time: its ticks, the kernel's integer nanoseconds."""
        return ticks

    def close(self):
        """Release the lines and stop the edge reader."""
        with self._lock:
            self._closing = True
        self._poke()
        if threading.current_thread() is not self._reader:
            self._reader.join()  # it returns at the poke; only then may the request's file be freed
        with self._changing:
            super().close()
            with self._lock:
                self._release()
        for fd in (self._wake_read, self._wake_write):
            os.close(fd)
        self._wake_read = self._wake_write = None

    # -- the one request for every line --------------------------------------------------------

    def _configure(self, pin):
        """(Re)apply `pin`'s settings: reconfigure the request, or request the lines afresh when the
        set of lines changed."""
        with self._changing, self._lock:
            added = pin._offset not in self._lines
            self._lines[pin._offset] = pin
            if self._closing:
                return
            config = {offset: line._settings() for offset, line in self._lines.items()}
            if self._request is not None and not added:
                self._request.reconfigure_lines(config)
            else:
                self._release()
                self._request = self.gpiod.request_lines(self.chip_path, config=config, consumer=CONSUMER)
                self.failure = None
        self._poke()  # the reader watches the new request's descriptor from now on

    def _forget(self, pin):
        with self._changing, self._lock:
            if self._lines.pop(pin._offset, None) is None:
                return
            self._release()
            if self._lines and not self._closing:
                config = {offset: line._settings() for offset, line in self._lines.items()}
                self._request = self.gpiod.request_lines(self.chip_path, config=config, consumer=CONSUMER)
        self._poke()

    def _release(self):
        """Release the request, once the reader is out of its `poll()` on the descriptor (lock held).

        A `poll()` holds a reference on every file it waits on, so a request closed under a
        blocked reader stays alive in the kernel with its lines requested until the next edge, and
        requesting them again meanwhile fails with EBUSY. So the reader is woken first and lets go
        of the descriptor; the wait gives up the lock meanwhile (and `_changing` keeps any other
        change out until this one is done).
        """
        request = self._request
        if request is None:
            return
        if self._reader.is_alive() and threading.current_thread() is not self._reader:
            self._retiring = True
            self._poke()
            self._reader_moved.wait_for(lambda: self._polled is not request)
            self._retiring = False
        try:
            request.release()
        except Exception:  # the chip is gone: nothing left to free
            pass
        self._request = None

    def _value(self, offset):
        with self._lock:
            return self._request.get_value(offset) == self.gpiod.line.Value.ACTIVE

    def _set_value(self, offset, value):
        Value = self.gpiod.line.Value
        with self._lock:
            self._request.set_value(offset, Value.ACTIVE if value else Value.INACTIVE)

    def _poke(self):
        if self._wake_write is not None:
            os.write(self._wake_write, b"!")

    # -- the edge reader ------------------------------------------------------------------------

    def _read_edges(self):
        """Block on the request's descriptor (and the wake pipe) with no timeout; pass each edge on."""
        name_this_thread("gpiod-edges")
        poller = select.poll()
        poller.register(self._wake_read, select.POLLIN)
        watched = None
        try:
            while True:
                with self._lock:
                    if self._closing:
                        return
                    request = self._request
                    if request is None or self.failure is not None or self._retiring:
                        request = None  # nothing to watch, or a request on its way out: let go of it
                    fd = request.fd if request is not None else None
                    if fd != watched:
                        if watched is not None:
                            poller.unregister(watched)
                        if fd is not None:
                            poller.register(fd, select.POLLIN | select.POLLPRI)
                        watched = fd
                    self._polled = request
                    self._reader_moved.notify_all()
                for ready, _ in poller.poll():  # no timeout: an edge or a poke wakes it
                    if ready == self._wake_read:
                        os.read(self._wake_read, 512)
                    elif ready == watched:
                        self._take_edges(request)
        finally:  # out of poll() for good: nothing it held may keep a request alive
            with self._lock:
                self._polled = None
                self._reader_moved.notify_all()

    def flush_edges(self):
        """Pass on, on the caller's thread, every edge the kernel has queued for these lines.

        The loop calls this on each wake, after reading the time. The kernel stamps an edge at the
        interrupt and queues it from its interrupt thread, which runs at real-time priority ahead
        of ours, so an edge stamped before that instant is either still in the kernel's queue (read
        here, without blocking) or being passed on by the reader thread, which holds the same lock
        until it has posted what it read. Once this returns, all of them are in the loop's queue:
        the loop need not give the reader time to catch up after a deadline.
        """
        self._take_edges()

    def _take_edges(self, request=None):
        """Read the queued edges of `request` (the reader's; None: the live one) without blocking and
        pass each on, all under the lock (see `flush_edges`); a read that fails stops the edges for
        good, and is reported once."""
        with self._lock:
            if request is None:
                request = self._request
            if request is None or request is not self._request or self._closing or self.failure is not None:
                return  # nothing requested, re-requested meanwhile, closing, or already failed
            while True:
                try:
                    if not request.wait_edge_events(0):
                        return  # the kernel's queue is empty
                    events = request.read_edge_events()
                except Exception as error:  # the chip went away, or its lines were taken from under us
                    self.failure = error
                    log.error("GPIO edges on %s stopped: %s", self.chip_path, error)
                    break
                self._pass_on(events)
        if self.on_failure:
            self.on_failure(self.failure)

    def _pass_on(self, events):
        """Each edge to its pin's device, stamped with the kernel's timestamp (under the lock)."""
        Rising = self.gpiod.EdgeEvent.Type.RISING_EDGE
        for event in events:
            pin = self._lines.get(event.line_offset)
            if pin is not None and pin._watching:
                pin._call_when_changed(event.timestamp_ns, 1 if event.event_type == Rising else 0)


class GpiodPin(LocalPiPin):
    """One GPIO line in its factory's request."""

    _EDGES = ("none", "falling", "rising", "both")
    _PULLS = ("up", "down", "floating")

    def __init__(self, factory, info):
        super().__init__(factory, info)
        self._offset = self._number
        self._function = "input"
        self._pull = info.pull or "floating"
        self._edges = "both"
        self._bounce = None
        self._output = False
        self._watching = False
        factory._configure(self)

    def close(self):
        self.when_changed = None
        self.factory._forget(self)

    def _settings(self):
        """This line's `gpiod.LineSettings`, from what gpiozero set."""
        line = self.factory.gpiod.line
        settings = self.factory.gpiod.LineSettings
        if self._function == "output":
            return settings(
                direction=line.Direction.OUTPUT,
                output_value=line.Value.ACTIVE if self._output else line.Value.INACTIVE,
            )
        bias = {"up": line.Bias.PULL_UP, "down": line.Bias.PULL_DOWN, "floating": line.Bias.DISABLED}
        edge = {
            "none": line.Edge.NONE,
            "falling": line.Edge.FALLING,
            "rising": line.Edge.RISING,
            "both": line.Edge.BOTH,
        }
        return settings(
            direction=line.Direction.INPUT,
            bias=bias[self._pull],
            edge_detection=edge[self._edges] if self._watching else line.Edge.NONE,
            debounce_period=timedelta(seconds=self._bounce or 0),
        )

    def _get_function(self):
        return self._function

    def _set_function(self, value):
        if value not in ("input", "output"):
            raise PinInvalidFunction(f'invalid function "{value}" for pin {self!r}')
        self._function = value
        self.factory._configure(self)

    def _get_state(self):
        return self.factory._value(self._offset)

    def _set_state(self, value):
        if self._function == "input":
            raise PinSetInput(f"cannot set state of pin {self!r}")
        self._output = bool(value)
        self.factory._set_value(self._offset, self._output)

    def _get_pull(self):
        return self._pull

    def _set_pull(self, value):
        if value not in self._PULLS:
            raise PinInvalidPull(f'invalid pull "{value}" for pin {self!r}')
        self._pull = value
        self.factory._configure(self)

    def _get_bounce(self):
        return self._bounce

    def _set_bounce(self, value):
        if value is not None and value < 0:
            raise PinInvalidBounce("bounce must be 0 or greater")
        self._bounce = value
        self.factory._configure(self)

    def _get_edges(self):
        return self._edges

    def _set_edges(self, value):
        if value not in self._EDGES:
            raise PinInvalidEdges(f'invalid edges "{value}" for pin {self!r}')
        self._edges = value
        self.factory._configure(self)

    def _enable_event_detect(self):
        self._watching = True
        self.factory._configure(self)

    def _disable_event_detect(self):
        self._watching = False
        self.factory._configure(self)
