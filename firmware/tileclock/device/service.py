"""`tileclock run`: the clock as a service, on the Pi's parts (or simulated ones with `--simulate`).

One loop (`Daemon.run_forever`) does all the work. Two helper threads only
post to its queue: the pin backend's (button edges, stamped by the kernel)
and a waker that wakes the loop when the serial line has data. Every thread
blocks with no timeout, so the process wakes only when there is work: a
button edge, a byte on the line, or the loop's next deadline (the next
displayed second, a checkpoint, a retry, the watchdog). systemd hears READY=1
once the parts are set up and the first game is on the screens, and
WATCHDOG=1 from the loop after each check that the clock is healthy.
"""

import gc
import logging
import os
import select
import signal
import threading
import time

from .assembly import RunningClock, device_parts
from .sdnotify import Notifier

log = logging.getLogger(__name__)

DEFAULT_STATE_DIR = "/var/lib/tileclock"


class Service:
    """The clock built from a config on the Pi's parts; `run()` keeps time until SIGTERM or SIGINT."""

    def __init__(self, config, state_dir=DEFAULT_STATE_DIR, simulate=False, environ=os.environ, timings=None):
        self.running = RunningClock(config, device_parts(config, state_dir, simulate))
        self.daemon = self.running.daemon
        if timings:
            from .timings import WakeTimings

            self.daemon.timings = WakeTimings(timings, buses=self.running.buses)
        self.notifier = Notifier(environ)
        self.daemon.heartbeat_ns = self.notifier.watchdog_interval_ns
        self._stop = threading.Event()
        self._last_ping_ns = None

    def run(self, script=None, stay=False):
        """Keep time until asked to stop; returns the exit code.

        `script` (a parsed simulator script, with `--simulate`) presses the simulated buttons in
        real time, counted from the start, as a player would; the clock stops when the script
        ends (its last line's time), unless `stay`.
        """
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        self.waker = SerialWaker(self.running.link, self.daemon.wake)
        self.notifier.ready()  # the clock booted when it was built: its first game is on the screens
        # Everything made so far (the libraries, the parts, the recovered game) lives as long as the
        # process: kept out of the collector's full passes, which would otherwise walk some 28,000
        # objects each time (about 10 ms here, several times that on a Pi) in the middle of a press.
        gc.freeze()
        if script is not None:
            threading.Thread(target=self._play, args=(script, stay), name="script", daemon=True).start()
        try:
            self.daemon.run_forever(should_stop=self._stop.is_set, on_wake=self._after_wake, boot=False)
        finally:
            self.notifier.stopping()
            self.waker.stop()
            self.running.close()
            if self.daemon.timings:
                self.daemon.timings.save()
        return 0

    def stop(self):
        self._stop.set()
        self.daemon.wake(time.monotonic_ns())

    def _on_signal(self, signum, frame):
        self.stop()

    def _after_wake(self):
        self.waker.loop_woke()
        interval = self.notifier.watchdog_interval_ns
        if interval is None:
            return
        now = time.monotonic_ns()
        if self._last_ping_ns is not None and now - self._last_ping_ns < interval:
            return
        if self.daemon.healthy(now):
            self.notifier.watchdog()
            self._last_ping_ns = now
        else:
            log.error("health check failed: not pinging the watchdog")

    def _play(self, script, stay):
        start_ns = self.running.started_ns

        def wait_until(t_ns):
            return self._stop.wait(max(0, start_ns + t_ns - time.monotonic_ns()) / 1e9)

        for t_ns, button, down in script.steps():
            if wait_until(t_ns):
                return
            if button == "send":
                self.daemon.post_command(down.encode("ascii"), time.monotonic_ns())  # a command line
            else:
                self.running.press(button, down)
        if not stay and not wait_until(script.end_ns):
            log.info("the script ended at %.3f s: stopping", script.end_ns / 1e9)
            self.stop()


def _identity(fd):
    """The open file behind descriptor `fd` (its number, device and inode), or None if it is not
    open: a port reopened on the same number is another file, which a number alone cannot tell."""
    if fd is None:
        return None
    try:
        found = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return fd, found.st_dev, found.st_ino


class SerialWaker:
    """A thread that wakes the loop when the serial line has data, and costs nothing otherwise.

    It blocks on the port and on a pipe, with no timeout. Once it has woken the loop it leaves the
    port alone (unread data would wake it again at once) until the loop, having read, calls
    `loop_woke()`; that also tells it when the port was reopened (another file, even on the same
    descriptor number). `stop()`
    ends it through the pipe.
    """

    def __init__(self, link, wake):
        self.link = link
        self.wake = wake
        self.watched = None  # what it waits on (`_identity`), or None while it waits for the loop
        self._stopping = False
        self._read, self._write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="serial-waker", daemon=True)
        self._thread.start()

    def loop_woke(self):
        """The loop has done a wake (and read what was waiting): watch the port again if need be."""
        if self.watched != _identity(self.link.fileno()):
            self._poke()

    def stop(self):
        self._stopping = True
        self._poke()
        self._thread.join(timeout=5)
        os.close(self._read)
        os.close(self._write)

    def _poke(self):
        try:
            os.write(self._write, b"!")
        except OSError:
            pass  # stopped already

    def _run(self):
        watch = True
        while not self._stopping:
            fd = self.link.fileno() if watch else None
            self.watched = _identity(fd)
            try:
                ready = select.select([self._read] if fd is None else [self._read, fd], [], [])[0]
            except OSError:  # the loop closed the port under it
                self.watched = None  # first: a `loop_woke` from now on pokes it
                # the loop may have opened it again already (perhaps on the same number) and said
                # so before this: watch the new one; else wait for the loop's word
                watch = _identity(self.link.fileno()) is not None
                continue
            except ValueError:  # a descriptor select cannot take: wait for the loop's word
                self.watched = None
                watch = False
                continue
            if self._read in ready:
                os.read(self._read, 512)
                watch = True
            elif fd in ready:
                self.watched = None  # first, so that the loop's `loop_woke` after this wake pokes it
                watch = False
                self.wake(time.monotonic_ns())
