"""`tileclock run`: the clock as a service, on the Pi's parts (or simulated ones with `--simulate`).

One loop (`Daemon.run_forever`) does all the work. Two helper threads only
post to its queue: the pin backend's (button edges, stamped by the kernel)
and a reader that wakes the loop when the serial line has data. systemd hears
READY=1 once the parts are set up and the first game is on the screens, and
WATCHDOG=1 from the loop after each check that the clock is healthy.
"""

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

    def __init__(self, config, state_dir=DEFAULT_STATE_DIR, simulate=False, environ=os.environ):
        self.running = RunningClock(config, device_parts(config, state_dir, simulate))
        self.daemon = self.running.daemon
        journal = self.running.journal
        if journal.damage:
            log.warning("journal damaged (%s); kept aside as %s", journal.damage, journal.kept_aside)
        self.notifier = Notifier(environ)
        self.daemon.heartbeat_ns = self.notifier.watchdog_interval_ns
        self._stop = threading.Event()
        self._last_ping_ns = None

    def run(self, script=None):
        """Keep time until asked to stop; returns the exit code.

        `script` (a parsed simulator script, with `--simulate`) presses the simulated buttons in
        real time, counted from the start, as a player would.
        """
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        threading.Thread(target=self._wake_on_serial, name="serial-waker", daemon=True).start()
        self.notifier.ready()  # the clock booted when it was built: its first game is on the screens
        if script is not None:
            threading.Thread(target=self._play, args=(script,), name="script", daemon=True).start()
        try:
            self.daemon.run_forever(should_stop=self._stop.is_set, on_wake=self._after_wake, boot=False)
        finally:
            self.notifier.stopping()
            self.running.close()
        return 0

    def stop(self):
        self._stop.set()
        self.daemon.wake(time.monotonic_ns())

    def _on_signal(self, signum, frame):
        self.stop()

    def _after_wake(self):
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

    def _play(self, script):
        start_ns = self.running.started_ns
        for t_ns, button, down in script.edges:
            if self._stop.wait(max(0, start_ns + t_ns - time.monotonic_ns()) / 1e9):
                return
            self.running.press(button, down)

    def _wake_on_serial(self):
        """Wake the loop when the line has data; the loop itself reads it."""
        while not self._stop.is_set():
            fd = self.running.link.fileno()
            if fd is None:
                self._stop.wait(1.0)
                continue
            try:
                readable, _, _ = select.select([fd], [], [], 1.0)
            except (OSError, ValueError):
                self._stop.wait(1.0)  # the loop closed or reopened the port meanwhile
                continue
            if readable:
                self.daemon.wake(time.monotonic_ns())
                self._stop.wait(0.02)  # let the loop read it before looking again
