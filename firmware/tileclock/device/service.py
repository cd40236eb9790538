"""`tileclock run`: the clock as a service, on the Pi's parts (or simulated ones with `--simulate`).

One loop (`Daemon.run_forever`) does all the work. Two helper threads only
post to its inbox: the pin backend's (button edges, stamped by the kernel)
and a waker that wakes the loop when the serial line has data (the serial
link is registered with the loop, which runs the waker: `wakers.FdWaker`);
SIGTERM and SIGINT are registered with it too. Every thread
blocks with no timeout, so the process wakes only when there is work: a
button edge, a byte on the line, or the loop's next deadline (the next
displayed second, a checkpoint, a retry, the watchdog). systemd hears READY=1
once the parts are set up and the first game is on the screens, and
WATCHDOG=1 from the loop after each check that the clock is healthy.
"""

import gc
import logging
import os
import signal
import threading
import time

from .assembly import RunningClock, device_parts
from .sdnotify import Notifier

log = logging.getLogger(__name__)

DEFAULT_STATE_DIR = "/var/lib/tileclock"


class Service:
    """The clock built from a config on the Pi's parts; `run()` boots it and keeps time until
    SIGTERM or SIGINT."""

    def __init__(self, config, state_dir=DEFAULT_STATE_DIR, simulate=False, environ=os.environ, timings=None):
        parts = device_parts(config, state_dir, simulate)
        self.notifier = Notifier(environ)
        wake_timings = None
        if timings:
            from .timings import WakeTimings

            wake_timings = WakeTimings(timings, buses=parts.buses)
        self.running = RunningClock(
            config, parts, heartbeat_ns=self.notifier.watchdog_interval_ns, timings=wake_timings
        )
        self.daemon = self.running.daemon
        self._stop = threading.Event()
        self._last_ping_ns = None

    def run(self, script=None, stay=False):
        """Keep time until asked to stop; returns the exit code.

        `script` (a parsed simulator script, with `--simulate`) presses the simulated buttons in
        real time, counted from the start, as a player would; the clock stops when the script
        ends (its last line's time), unless `stay`.
        """
        self.running.boot()
        for signum in (signal.SIGTERM, signal.SIGINT):
            self.daemon.reactor.register_signal(signum, self._stop.set)  # the loop wakes, and stops
        self.notifier.ready()  # the clock has booted: its first game is on the screens
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
            self.running.close()
            if self.daemon.timings:
                self.daemon.timings.save()
        return 0

    def stop(self):
        """Stop keeping time (from any thread): the loop wakes and `run` returns."""
        self._stop.set()
        self.daemon.inbox.wake(time.monotonic_ns())

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

    def _play(self, script, stay, now_ns=time.monotonic_ns):
        """Press the buttons as `script` says, on the clock since the start (see `Pace`)."""
        pace = Pace(self.running.started_ns)
        for t_ns, button, down in script.steps():
            if self._stop.wait(pace.wait_s(t_ns, now_ns())):
                return
            if button == "send":
                self.daemon.inbox.post_command(down.encode("ascii"), now_ns())  # a command line
            elif button == "power":
                self.running.set_power(down)  # simulated parts' flags (--simulate)
            else:
                self.running.press(button, down)
            pace.done(t_ns, now_ns())
        if self._stop.wait(pace.wait_s(script.end_ns, now_ns())):
            return
        if stay:
            log.info("the script ended at %.3f s: staying until stopped (--stay)", script.end_ns / 1e9)
        else:
            log.info("the script ended at %.3f s: stopping", script.end_ns / 1e9)
            self.stop()


class Pace:
    """When each step of a script is due in real time: at its time since `start_ns`, or later by as
    much as an earlier step was late. A thread woken late (a loaded machine) would otherwise make
    the steps it missed at once: a 0.1 s press squeezed under the glitch window is no press at
    all. Kept late, every step stands at least its script's gap after the one before."""

    def __init__(self, start_ns):
        self.start_ns = start_ns
        self.late_ns = 0

    def wait_s(self, t_ns, now_ns):
        """Seconds from `now_ns` until the step at script time `t_ns` is due (0: now)."""
        return max(0, self.start_ns + self.late_ns + t_ns - now_ns) / 1e9

    def done(self, t_ns, now_ns):
        """The step at script time `t_ns` was made at `now_ns`: the steps after it keep its lateness."""
        self.late_ns = max(self.late_ns, now_ns - self.start_ns - t_ns)
