"""The whole clock on simulated parts, in virtual time.

Button edges go through gpiozero mock pins (stamped by a `VirtualTime`), frames
through luma's own SSD1306/SH1106 drivers and I2C interface onto a recording
bus (so every byte a real panel would get is counted), and records through a
pyserial `loop://` port and back out. Nothing here reads the real clock: the
caller says what time it is.
"""

import uuid

from .. import __version__
from ..clock.core import GameClock
from ..clock.protocol import VERSION
from ..device.hardware.buttons import ButtonBoard
from ..device.hardware.oled import RecordingBus
from ..device.hardware.screens import PanelOutput, open_device
from ..device.hardware.serial_link import SerialLink
from ..device.hardware.virtual import VirtualFactory, VirtualTime
from ..device.journal import Journal
from ..device.loop import Daemon
from ..device.render import Panel


class Simulator:
    """A clock built from `config` on simulated GPIO, panels and serial line."""

    def __init__(
        self,
        config,
        refresh_on_ticks=True,
        on_frames=None,
        time=None,
        serial_url=None,
        journal=None,
        boot_id=None,
        checkpoints=False,
    ):
        self.time = time or VirtualTime(0)
        self.journal = journal if journal is not None else Journal()
        checkpoint_ms = config.checkpoint_s * 1000 if checkpoints else None  # scripts read better without
        self.clock = GameClock(
            config.profile,
            config.timing,
            config.times_s,
            first_seq=self.journal.next_seq,
            checkpoint_ms=checkpoint_ms,
        )
        self.buses = {}
        self.panels = []
        for spec in config.panels:
            bus = self.buses[spec.faces] = RecordingBus()
            device = open_device(spec, bus=bus)
            self.panels.append(PanelOutput(Panel(faces=spec.faces), device, spec.contrast, config.idle))
        self.link = SerialLink(self.journal, serial_url or "loop://", config.serial_baud)
        self.link.pump()  # open it now, so the first records go straight out
        # a simulator is a fresh power-on unless told it is the same boot (and given the same time)
        boot = dict(boot_info(config), boot_id=boot_id or uuid.uuid4().hex)
        self.daemon = Daemon(
            self.clock, self.panels, self.journal, self.link, refresh_on_ticks, on_frames, boot
        )
        self.factory = VirtualFactory(self.time)
        self.board = ButtonBoard(config.pins, self.daemon.post_edge, pin_factory=self.factory)
        self._received = b""
        self.daemon.boot(self.time())
        self._read_port()

    def run_to(self, t_ns):
        """Let the clock run up to (not including) `t_ns`, waking at each of its deadlines."""
        while (deadline := self.daemon.next_deadline()) is not None and deadline < t_ns:
            self.time.set(deadline)
            self.daemon.pump(deadline)
            self._read_port()

    def set_button(self, button, down, t_ns):
        """Make or break `button`'s contact at `t_ns`, through its GPIO pin."""
        self.run_to(t_ns)
        self.time.set(t_ns)
        pin = self.board.buttons[button].pin
        if down:
            pin.drive_low()  # buttons pull up; pressed connects the pin to ground
        else:
            pin.drive_high()
        self.daemon.pump(t_ns)
        self._read_port()

    def finish(self, t_ns):
        """Run on to `t_ns` and publish the final `status` record."""
        self.run_to(t_ns)
        self.time.set(t_ns)
        self.daemon.finish(t_ns)
        self._read_port()

    def _read_port(self):
        # the loop:// port holds only 4 kB: read it after every wake, as a director's computer would
        if self.link.url.startswith("loop://") and self.link.port is not None:
            self._received += self.link.port.read(self.link.port.in_waiting or 0)

    def serial_lines(self):
        """The complete lines that came out of the serial port since the last call."""
        *lines, self._received = self._received.split(b"\n")
        return [line.decode("ascii") for line in lines]

    def close(self):
        self.board.close()
        self.link.close()
        self.journal.close()


def boot_info(config):
    """What the `boot` record says of this clock."""
    return {"board": config.board, "firmware": __version__, "rules": config.rules, "protocol": VERSION}
