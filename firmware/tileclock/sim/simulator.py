"""The whole clock on simulated parts, in virtual time.

Button edges go through gpiozero mock pins (stamped by a `VirtualTime`), frames
through luma's own SSD1306/SH1106 drivers and I2C interface onto a recording
bus (so every byte a real panel would get is counted), and records through a
pyserial `loop://` port and back out. Nothing here reads the real clock: the
caller says what time it is.
"""

from ..device.assembly import RunningClock, simulated_parts
from ..device.hardware.virtual import VirtualTime
from ..device.power import SimulatedPower


class Simulator(RunningClock):
    """A clock built from `config` on simulated GPIO, panels and serial line, booted, and driven in
    virtual time.

    `time` (default: a fresh `VirtualTime` at 0), `serial_url` (default `loop://`), `state_dir`
    or `journal` (default: in memory, with a new clock id) replace the simulated parts' defaults;
    `boot_id` says which power-on this is (default: the time source's own); `wall` () -> the time
    of day in ns (default: `SIM_EPOCH_NS` plus the virtual time); `speech` a `say(utterance, t_ns)`
    for what the clock says (a `speaker.WavWriter`), called as the clock says it.
    """

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
        state_dir=None,
        wall=None,
        speech=None,
    ):
        parts = simulated_parts(time or VirtualTime(0), serial_url or "loop://", journal, state_dir, wall)
        self._received = b""
        super().__init__(
            config,
            parts,
            boot_id=boot_id,
            checkpoints=checkpoints,  # scripts read better without
            refresh_on_ticks=refresh_on_ticks,
            on_frames=on_frames,
            speech=speech,
        )
        self.boot()  # a simulator is made to be driven at once: its game is on the panels at `time`
        self._read_port()

    def ticks(self, t_ns):
        """Let the clock run up to (not including) `t_ns`, waking at each of its deadlines;
        yields after each wake."""
        while (deadline := self.daemon.reactor.next_deadline()) is not None and deadline < t_ns:
            self.time.set(deadline)
            self.daemon.pump(deadline)
            self._read_port()
            yield deadline

    def run_to(self, t_ns):
        """Let the clock run up to (not including) `t_ns`, waking at each of its deadlines."""
        for _ in self.ticks(t_ns):
            pass

    def catch_up(self, t_ns):
        """Run on to `t_ns` and wake the loop there (a live caller whose time moved on)."""
        self.run_to(t_ns)
        self.time.set(max(t_ns, self.time()))
        self.daemon.pump(self.time())
        self._read_port()

    def set_button(self, button, down, t_ns):
        """Make or break `button`'s contact at `t_ns`, through its GPIO pin."""
        self.run_to(t_ns)
        self.time.set(t_ns)
        self.press(button, down)
        self.daemon.pump(t_ns)
        self._read_port()

    def send(self, line, t_ns):
        """Hand the clock a director's command `line` at `t_ns`, as if it came over the serial line."""
        self.run_to(t_ns)
        self.time.set(t_ns)
        self.daemon.pump(t_ns)
        self.daemon.command_lines([line.encode("ascii")], t_ns)
        self._read_port()

    def set_power(self, flags, t_ns):
        """Set the Pi's power flags (`get_throttled`'s) at `t_ns`: the clock reads them at its next
        check (`power.PowerWatch`), as it would a supply's. The simulator has no power monitor until
        its first `power` line (a script without one wakes as it did)."""
        self.run_to(t_ns)
        self.time.set(t_ns)
        if self.power.source is None:
            self.power.source = SimulatedPower()
        super().set_power(flags)
        self.daemon.pump(t_ns)
        self._read_port()

    def finish(self, t_ns):
        """Run on to `t_ns` and publish the final `status` record (dated `t_ns`). A contact that
        changed so late that its change is not decided by then (a release at the script's last
        instant) holds the status back until it is, a glitch window later, as on the clock."""
        self.run_to(t_ns)
        self.time.set(t_ns)
        self.daemon.finish(t_ns)
        decided_by = self.clock.contacts_decided_by()
        if decided_by is not None:
            self.run_to(decided_by + 1)
        self._read_port()

    def view(self):
        """What the clock shows now."""
        return self.clock.view(self.time())

    def _read_port(self):
        # the loop:// port holds only 4 kB: read it after every wake, as a director's computer would
        if self.link.url.startswith("loop://") and self.link.port is not None:
            self._received += self.link.port.read(self.link.port.in_waiting or 0)

    def serial_lines(self):
        """The complete lines that came out of the serial port since the last call."""
        *lines, self._received = self._received.split(b"\n")
        return [line.decode("ascii") for line in lines]
