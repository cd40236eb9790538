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

from .. import __version__
from ..clock.core import GameClock
from ..clock.protocol import VERSION
from .hardware.buttons import ButtonBoard
from .hardware.pins import pin_factory
from .hardware.screens import PanelOutput, open_device
from .hardware.serial_link import SerialLink
from .journal import Journal
from .loop import Daemon
from .render import Panel
from .sdnotify import Notifier

log = logging.getLogger(__name__)

DEFAULT_STATE_DIR = "/var/lib/tileclock"


class StartError(RuntimeError):
    """The service cannot start: the message says why and what to do."""


def boot_id():
    """The kernel's id of this boot: the same after a process restart, new after a power cut."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as file:
            return file.read().strip()
    except OSError:
        return None


class Service:
    """The clock's parts, built from a config; `run()` keeps time until SIGTERM or SIGINT."""

    def __init__(self, config, state_dir=DEFAULT_STATE_DIR, simulate=False, environ=os.environ):
        os.makedirs(state_dir, exist_ok=True)
        self.journal = Journal(os.path.join(state_dir, "journal.log"))
        if self.journal.damage:
            log.warning(
                "journal damaged (%s); kept aside as %s", self.journal.damage, self.journal.kept_aside
            )
        self.clock = GameClock(
            config.profile,
            config.timing,
            config.times_s,
            first_seq=self.journal.next_seq,
            checkpoint_ms=config.checkpoint_s * 1000,
        )
        self.panels = []
        for spec in config.panels:
            if simulate:
                from .hardware.oled import RecordingBus

                opener = lambda spec=spec: open_device(spec, bus=RecordingBus())  # noqa: E731
            else:
                opener = lambda spec=spec: open_device(spec)  # noqa: E731
            self.panels.append(PanelOutput(Panel(faces=spec.faces), None, spec.contrast, config.idle, opener))
        self.link = SerialLink(self.journal, config.serial_port, config.serial_baud)
        boot = {
            "board": config.board,
            "firmware": __version__,
            "rules": config.rules,
            "protocol": VERSION,
            "boot_id": boot_id(),
        }
        self.daemon = Daemon(self.clock, self.panels, self.journal, self.link, boot_info=boot)
        backend = "mock" if simulate else config.pin_backend
        try:
            self.board = ButtonBoard(config.pins, self.daemon.post_edge, pin_factory=pin_factory(backend))
        except Exception as error:  # each gpiozero backend fails in its own way
            self.journal.close()
            raise StartError(
                f"cannot use the buttons with pin backend {backend!r} ({error}); "
                "`tileclock doctor` says why; off a Pi use --simulate"
            ) from error
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
        start_ns = time.monotonic_ns()
        self.daemon.boot(start_ns)
        self.notifier.ready()
        if script is not None:
            threading.Thread(target=self._play, args=(script, start_ns), name="script", daemon=True).start()
        try:
            self.daemon.run_forever(should_stop=self._stop.is_set, on_wake=self._after_wake, boot=False)
        finally:
            self.notifier.stopping()
            self.board.close()
            self.link.close()
            self.journal.close()
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

    def _play(self, script, start_ns):
        for t_ns, button, down in script.edges:
            if self._stop.wait(max(0, start_ns + t_ns - time.monotonic_ns()) / 1e9):
                return
            pin = self.board.buttons[button].pin
            pin.drive_low() if down else pin.drive_high()

    def _wake_on_serial(self):
        """Wake the loop when the line has data; the loop itself reads it."""
        while not self._stop.is_set():
            fd = self.link.fileno()
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
