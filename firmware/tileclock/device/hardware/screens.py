"""The OLED panels: build each luma device from the config, ship frames, spare the pixels.

A panel that stops answering (an OSError or a luma error from its bus) never
stops the clock: `failing` is set, the daemon records a fault, and every later
refresh tries again, from a full frame.

Burn-in: a static clock left between rounds burns its digits into the OLED.
While no clock runs and no button has been touched for `dim_after_s`, the
panels dim and the picture moves a pixel or two each `shift_every_s`; after
`blank_after_s` they go dark. Any edge wakes them.
"""

import logging
from dataclasses import replace

from luma.core.error import Error as LumaError

from ..screen.face import draw_marks, render, turn_marks
from ..screen.idle import IdlePolicy

log = logging.getLogger(__name__)


class PanelOutput:
    """One panel: its `Panel` layout, its luma device, its contrast and the idle policy.

    Give `device`, or `opener` to open it when first needed and again after it failed
    (a panel missing at power-on is then a fault that is retried, not a crash).
    """

    def __init__(self, panel, device=None, contrast=0xCF, idle=IdlePolicy(), opener=None, bus=None):
        self.panel = panel
        self._configured_large = panel.large  # the config's [speech] large, for this panel's side
        #: which bus it is on (panels on different buses can be written at once)
        self.bus = bus
        self.device = device
        self.opener = opener
        self.contrast = contrast
        self.idle = idle
        self.last_frame = None
        self._last_bytes = None  # last_frame's pixels, kept to compare the next frame with
        self.frames_sent = 0
        self.faults = 0
        self.failing = None  # the last error, while the panel does not answer
        self._mode = None  # (dimmed, blank) as last set on the device
        self._marks = []  # the turn marks' boxes in the frame the panel holds
        self._pending = None  # (frame, its turn marks, mode, its pixels) prepared and not sent yet
        self._turn_failed = False  # this wake's turn marks did not go: its frame waits too

    @property
    def faces(self):
        """The side the panel faces (`A`, `B`)."""
        return self.panel.faces

    def show_large(self, directed):
        """Show the large-digits face if `directed` (a director's `set large=`: "A", "B", "AB" or
        "") names this panel's side; None: as the config says. The next frame is drawn so."""
        large = self._configured_large if directed is None else self.faces in directed
        if large != self.panel.large:
            self.panel = replace(self.panel, large=large)

    def next_change(self, idle_ns):
        """How long after an idleness of `idle_ns` the picture changes by itself (it dims, moves,
        goes dark: the idle policy's), or None."""
        return self.idle.next_change(idle_ns)

    def show(self, view, idle_ns=None):
        """Render `view` and send it unless the panel already shows exactly that. Returns the frame."""
        self.send_turn(view, idle_ns)
        frame = self.prepare(view, idle_ns)
        self.send()
        return frame

    def send_turn(self, view, idle_ns=None):
        """If whose turn it is changed, send that at once: only what changed inside the turn marks
        (where they were and are), drawn alone, before the frame is drawn at all."""
        self._turn_failed = False
        part = getattr(self.device, "display_part", None)
        dimmed, shift, blank = self.idle.phase(idle_ns)
        if part is None or self.last_frame is None or self._mode != (dimmed, blank):
            return  # (a panel whose content is unknown, or about to change mode, gets its frame whole)
        marks = turn_marks(view, self.panel, shift)
        if marks == self._marks:
            return
        try:
            part(draw_marks(view, self.panel, shift), self._marks + marks)
        except (OSError, LumaError) as error:
            self._failed(error)
            self._turn_failed = True  # (one fault a wake: the frame waits for the next try)
            return
        self._marks = marks

    def prepare(self, view, idle_ns=None):
        """Render `view` (nothing is sent yet: `send`). Returns the frame."""
        dimmed, shift, blank = self.idle.phase(idle_ns)
        frame = render(view, self.panel, shift)
        marks = turn_marks(view, self.panel, shift)
        pixels = frame.tobytes()
        same = self.last_frame is not None and pixels == self._last_bytes
        self._pending = (
            None if same and self._mode == (dimmed, blank) else (frame, marks, (dimmed, blank), pixels)
        )
        return frame

    def send(self):
        """Send the prepared frame: what changed since the last (the whole of it after a fault)."""
        if self._pending is None:
            return
        frame, marks, mode, pixels = self._pending
        self._pending = None
        if self._turn_failed:
            self._turn_failed = False
            return
        try:
            if self.device is None:
                self.device = self.opener()
            if self._mode != mode:
                dimmed, blank = mode
                self.device.contrast(self.idle.dim_contrast if dimmed else self.contrast)
                (self.device.hide if blank else self.device.show)()
                self._mode = mode
            self.device.display(frame)
        except (OSError, LumaError, ImportError) as error:  # ImportError: spidev missing off the Pi
            self._failed(error)
            return
        self.failing = None
        self.last_frame, self._last_bytes = frame, pixels
        self._marks = marks
        self.frames_sent += 1

    def _failed(self, error):
        """The panel did not answer: a fault; its content is unknown, so the next frame goes whole."""
        self.faults += 1
        self.failing = str(error) or type(error).__name__
        self.last_frame = None
        self._mode = None
        self._marks = []
        if self.opener is not None:
            self.device = None  # open it afresh next time: the bus may have been reset
        forget = getattr(self.device, "forget", None)
        if forget:
            forget()
        log.warning("panel facing %s did not answer: %s", self.panel.faces, error)


def open_device(spec, bus=None, spi_hz=8_000_000):
    """The luma device for a panel's config: its driver on I2C or SPI (at `spi_hz`).

    `bus` replaces the real bus (the simulator passes a `RecordingBus` for an I2C panel, a
    `RecordingSPI` for an SPI one, each driven as luma drives the Pi's).
    """
    from luma.core.interface.serial import i2c, spi

    from .oled import DRIVERS, pi_i2c, pi_spi

    if bus is not None:
        interface = pi_spi(bus, spec, spi_hz) if spec.interface == "spi" else pi_i2c(bus, spec.address)
    elif spec.interface == "i2c":
        interface = i2c(port=spec.port, address=spec.address)
    else:
        interface = spi(
            port=spec.port,
            device=spec.spi_device,
            bus_speed_hz=spi_hz,
            gpio_DC=spec.dc_pin,
            gpio_RST=spec.reset_pin,
        )
    return DRIVERS[spec.driver](interface, rotate=spec.rotate)


class RecordingPanels:
    """Opens simulated panels: luma's drivers on recording buses (I2C or SPI, as the panel's config
    says), one a side, kept across reopenings, so every byte a real panel would get is counted
    (`buses`). `keep` keeps every write too (tests look at them; a long run only counts)."""

    def __init__(self, keep=True, spi_hz=8_000_000):
        self.buses = {}
        self.keep = keep
        self.spi_hz = spi_hz

    def __call__(self, spec):
        from .oled import RecordingBus, RecordingSPI

        kind = RecordingSPI if spec.interface == "spi" else RecordingBus
        return open_device(spec, bus=self.buses.setdefault(spec.faces, kind(self.keep)), spi_hz=self.spi_hz)
