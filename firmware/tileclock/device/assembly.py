"""The clock put together, in one place: a config and the parts it runs on in, a running clock out.

The service (on the Pi's parts, or simulated ones with `--simulate`), the
simulator, the live terminal and the benchmarks all build the clock here, so
the parts are wired one way and the `boot` record says the same things
whichever way the clock was started.
"""

import functools
import logging
import os
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import __version__
from ..clock.core import GameClock
from ..wire.protocol import VERSION
from .hardware.buttons import ButtonBoard
from .hardware.pins import pin_factory
from .hardware.screens import PanelOutput, RecordingPanels, open_device
from .hardware.virtual import MonotonicTime, VirtualFactory
from .health import Health
from .identity import hardware_clock_id, new_clock_id, stored_clock_id
from .journal import Journal
from .journal.retention import Retention
from .links.serial import SerialLink
from .loop import Daemon
from .parts import TimeSource
from .power import FirmwareFlags, PowerWatch, ReadAhead, SimulatedPower, find_source
from .screen.text import Panel
from .speaker import Espeak, Speaker
from .timesync import TimeReport, synchronised, system_wall
from .wakers import Inbox
from .wiring import bus_of

if TYPE_CHECKING:  # paho is loaded only for a clock with a [hall] section (`_hall_link`)
    from .links.hall import HallLink

JOURNAL_DIR = "journal"
#: the single-file journal of earlier versions, taken over into segments on first start
LEGACY_FILE = "journal.log"
#: a simulated clock's time of day at its virtual time 0 (2026-01-01 00:00 UTC), unless told another
SIM_EPOCH_NS = 1_767_225_600 * 10**9


class StartError(RuntimeError):
    """The clock cannot start: the message says why and what to do."""


@dataclass
class Parts:
    """What the clock runs on; each part has a real kind and a simulated kind.

    `open_pins` and `open_panel` open their part when the clock is built (a
    panel again after it failed), so a part that is missing is an error the
    clock can report, not a crash while importing.
    """

    #: () -> a gpiozero pin factory (None lets gpiozero choose)
    open_pins: Callable
    #: PanelConfig -> a luma device
    open_panel: Callable
    #: any pyserial URL: a device path, `loop://`, a pty
    serial_url: str
    #: () -> integer monotonic nanoseconds; its `boot_id` names the epoch they count from
    time: TimeSource
    #: where the journal lives (None: in memory only)
    state_dir: str | None = None
    #: a folder that lasts as long as the machine's boot (systemd's $RUNTIME_DIRECTORY): a restart
    #: in the same boot then goes on exactly where the last run's seqs stopped
    runtime_dir: str | None = None
    #: a journal already opened (instead of the one in `state_dir`)
    journal: Journal | None = None
    #: the panels' recording buses, when they are simulated (side -> `RecordingBus`)
    buses: dict | None = None
    #: what the pins are, for an error message
    pin_backend: str = "mock"
    #: () -> this board's own id from its hardware, or None (simulated parts have none)
    hardware_id: Callable | None = None
    #: () -> the time of day in ns since 1970 (None: the system's), stamping the public state
    wall: Callable | None = None
    #: () -> chrony's figures for the hall's page (`timesync.TimeReport`), or None: not reported
    time_report: Callable | None = None
    #: where the Pi's power flags come from (`power.find_source`, a `SimulatedPower`), or None: none
    power: object | None = None


def device_parts(config, state_dir, simulate=False):
    """The Pi's parts as the config names them, or with `simulate` simulated buttons and panels
    (still in real time, and on the configured serial port)."""
    recording = RecordingPanels(keep=False, spi_hz=config.spi_hz) if simulate else None  # a long run: counted
    return Parts(
        open_pins=lambda: pin_factory("mock" if simulate else config.pin_backend),
        open_panel=recording or functools.partial(open_device, spi_hz=config.spi_hz),
        serial_url=config.serial_port,
        time=MonotonicTime(),
        state_dir=state_dir,
        runtime_dir=os.environ.get("RUNTIME_DIRECTORY"),
        buses=recording.buses if recording else None,
        pin_backend="mock" if simulate else config.pin_backend,
        hardware_id=None if simulate else hardware_clock_id,
        time_report=None if simulate else TimeReport(),
        power=SimulatedPower() if simulate else find_source(config.power_root),
    )


def simulated_parts(time, serial_url="loop://", journal=None, state_dir=None, wall=None):
    """Simulated buttons (gpiozero mock pins stamped by `time`) and panels (luma's drivers on
    recording buses), and the record line on `serial_url`; the time of day is `wall`, by default
    `SIM_EPOCH_NS` plus the virtual time (a simulation reads no real clock)."""
    panels = RecordingPanels()
    return Parts(
        wall=wall or (lambda: SIM_EPOCH_NS + time()),
        open_pins=lambda: VirtualFactory(time),
        open_panel=panels,
        serial_url=serial_url,
        time=time,
        state_dir=state_dir,
        journal=journal,
        buses=panels.buses,
    )


def boot_info(config, boot_id, hw_id=None):
    """What the `boot` record says of this clock: the only place its fields are listed.

    (Its id is in every record, the `boot` record's too.) `hw_id`: the id the Pi's serial number
    makes, said where the config names the clock otherwise (a card from `hall-setup --cards`)."""
    info = {
        "board": config.board,
        "firmware": __version__,
        "rules": config.rules,
        "protocol": VERSION,
        "boot_id": boot_id,
    }
    if hw_id and hw_id != config.clock_id:
        info["hw_id"] = hw_id
    return info


class RunningClock:
    """The clock built from `config` on `parts`, not started: building opens its parts (the pins,
    the panels, the port, and the journal, whose `Journal.open` reads it back) and wires them;
    `boot()` starts the clock: the uplink connects, the last game is taken up or the first
    opened, and the panels show it.

    `checkpoints` (the config's interval) bound what a power cut can lose; simulator scripts
    read better without them. `boot_id` names the monotonic clock's epoch (default: the time
    source's; a restart in the same boot then takes a running game up exactly). `heartbeat_ns`
    (the service's watchdog) and `timings` (a `WakeTimings`) are handed to the loop.
    """

    def __init__(
        self,
        config,
        parts,
        *,
        boot_id=None,
        checkpoints=True,
        refresh_on_ticks=True,
        on_frames=None,
        heartbeat_ns=None,
        timings=None,
        speech=None,
    ):
        self.config = config
        self.parts = parts
        self.time = parts.time
        boot_id = boot_id or parts.time.boot_id or uuid.uuid4().hex
        if parts.journal is not None:
            self.journal = parts.journal
        else:
            self.journal = open_journal(parts.state_dir, config, parts.runtime_dir, boot_id)
        #: who this clock is: stamped on every record (see identity.py)
        self.clock_id = config.clock_id or _identify(parts, self.journal)
        self.buses = parts.buses
        # a round's start and a call are times of day on this clock's wall clock: the system's (chrony
        # keeps it on the laptop's; unknown while the kernel says it is not synchronised) or the simulated one
        wall = system_wall(
            monotonic_ns=self.time,
            wall_ns=parts.wall or time.time_ns,
            synced=synchronised if parts.wall is None else (lambda: True),
        )
        self.clock = GameClock(
            config.profile,
            config.timing,
            config.times_s,
            first_seq=self.journal.next_seq,
            checkpoint_ms=config.checkpoint_s * 1000 if checkpoints else None,
            checkpoint_lag_ms=self.journal.settle_ms or 0,  # checkpoints not waited for on the card
            dark_after_ms=config.idle.blank_after_s * 1000,  # a press on dark panels only wakes them
            wall=wall,  # a call says its time of day (its wait counts from it)
        )
        self.panels = [
            PanelOutput(
                Panel(faces=spec.faces, large=spec.faces in config.speech.large),
                None,
                spec.contrast,
                config.idle,
                _opener(parts, spec),
                bus_of(spec),
            )
            for spec in config.panels
        ]
        self.link = SerialLink(self.journal, parts.serial_url, config.serial_baud)
        self.link.pump()  # open it now, so the first records go straight out
        hw_id = parts.hardware_id() if config.clock_id and parts.hardware_id else None
        self.boot_info = boot_info(config, boot_id, hw_id)
        self.uplink: HallLink | None = None
        #: the health said in the state on the hall's broker (`health.Health`), with a [hall] only
        self.health: Health | None = None
        # the parts that wake the loop from their own threads post to its inbox, made first
        inbox = Inbox()
        self.board = self._buttons(config, parts, inbox)
        #: the Pi's supply, checked between the loop's urgent work (`power.PowerWatch`)
        power = parts.power
        if isinstance(power, FirmwareFlags):  # its read may wait on the firmware: never on the loop
            power = ReadAhead(power)
        self.power = PowerWatch(power)
        if config.hall is not None:
            self.uplink = self._hall_link(config, inbox)
        self.daemon = Daemon(
            self.clock,
            self.panels,
            self.journal,
            [self.link] if self.uplink is None else [self.link, self.uplink],  # the serial link first
            refresh_on_ticks,
            on_frames,
            self.boot_info,
            clock_id=self.clock_id,
            inbox=inbox,
            edges=self.board,  # the loop then wakes at its deadlines, no later, if the pins can flush
            heartbeat_ns=heartbeat_ns,
            timings=timings,
            watches=[self.power],
            speaker=self._speaker(config, speech),
        )
        self.daemon.commands.wall = wall
        # a command on the serial line wakes the loop (run_forever)
        self.daemon.reactor.register_fd(self.link)
        self.started_ns = None  # when `boot` started it

    def _speaker(self, config, speech):
        """The clock's voice (speaker.py): `speech` (a `say(utterance, t_ns)`: the simulator's WAV
        files) on the loop's thread, else espeak-ng and aplay on a thread of its own (started at the
        first utterance) for the sides the config names, or a director's `set speech=` since: made
        even when the config names none, so that a director can turn speech on."""
        if speech is not None:
            return Speaker(self.clock, config.speech, speech, threaded=False)
        return Speaker(self.clock, config.speech, Espeak(config.speech.rate, config.speech.volume))

    def boot(self):
        """Start the clock: the uplink connects, the journal's last game is taken up where it
        stopped (or the first opened, with its `boot` record) and shown. Returns the clock."""
        if self.uplink is not None:
            self.uplink.start()  # connects in the background: the clock boots at once regardless
        self.started_ns = self.time()
        self.daemon.boot(self.started_ns)
        return self

    def _buttons(self, config, parts, inbox):
        """The buttons on their pins, posting their edges to the loop's `inbox`."""
        # gpiozero warns (two lines each, on stderr) for every backend it falls back from: said
        # once in the log when the buttons work, and left to `tileclock doctor` when none does
        with warnings.catch_warnings(record=True) as fallbacks:
            warnings.simplefilter("always")
            try:
                board = ButtonBoard(config.pins, inbox.post_edge, pin_factory=parts.open_pins())
            except Exception as error:  # each gpiozero backend fails in its own way
                self.link.close()
                self.journal.close()
                raise StartError(
                    f"cannot use the buttons with pin backend {parts.pin_backend!r} ({error}); "
                    "`tileclock doctor` says why; off a Pi use --simulate"
                ) from error
        for fallback in fallbacks:
            logging.getLogger(__name__).info("buttons: %s", fallback.message)
        return board

    def press(self, button, down):
        """Make (`down`) or break `button`'s contact through its simulated GPIO pin (a `VirtualFactory`'s),
        which stamps it."""
        self.board.pin_factory.drive(self.board.buttons[button].pin, down)

    def set_power(self, flags):
        """Set the simulated power flags (`get_throttled`'s) read at the next check; on a Pi's own
        monitor, only said in the log (a script cannot make a supply sag)."""
        if isinstance(self.power.source, SimulatedPower):
            self.power.source.flags = flags
        else:
            logging.getLogger(__name__).warning("power %x: this clock reads a real power monitor", flags)

    def _hall_link(self, config, inbox) -> "HallLink":
        """The uplink to the hall's broker (imported only when the config names one); it wakes the
        loop through its `inbox` from paho's thread."""
        from ..wire.topics import valid_clock_id
        from .links.hall import HallLink

        if not valid_clock_id(self.clock_id):
            self.close()
            raise StartError(f"clock id {self.clock_id!r} is reserved on the hall's broker: set [clock] id")
        state_dir = self.parts.state_dir or (
            os.path.dirname(self.journal.directory) if self.journal.directory else None
        )
        link = HallLink(
            self.journal,
            self.clock_id,
            config.hall,
            state_dir,
            wake=lambda: inbox.wake(self.time()),
            board=config.board,
            now_ns=self.time,
            wall_ns=self.parts.wall or time.time_ns,
        )
        if self.parts.time_report is not None:
            link.report_time(self.parts.time_report)
        link.report_speech("".join(sorted(config.speech.sides)), "".join(sorted(config.speech.large)))
        health = Health(
            root=config.power_root,
            journal_dir=self.journal.directory,
            power=self.power,
            monotonic=lambda: self.time() / 1e9,  # the clock's own time (virtual in a simulation)
            synced=synchronised if self.parts.wall is None else (lambda: True),
        )
        health()  # read once now, before the loop runs (the kernel's flag is found then)
        link.report_health(health)
        self.health = health
        return link

    def close(self):
        """Let go of the uplink, the pins, the port, the voice and the journal."""
        if self.uplink is not None:
            self.uplink.close()  # says `offline` while the journal is still open
        speaker = getattr(getattr(self, "daemon", None), "speaker", None)  # (a start that failed early: none)
        if speaker is not None:
            speaker.close()
        self.board.close()
        self.link.close()
        self.journal.close()


def open_journal(state_dir, config=None, runtime_dir=None, boot_id=None):
    """The journal in `state_dir` (its folder `journal/`), or one in memory for None, opened: the
    clock's start-up (`Journal.open`), never a way to read a journal
    (`journal.reader.JournalReader` is).

    It opens whatever the disk does: a state directory that cannot be made, read or written
    gives a journal that keeps its records in memory and says so (DISK FAULT), never an error.
    """
    if state_dir is None:
        return Journal()
    return Journal.open(
        journal_dir(state_dir),
        legacy=os.path.join(state_dir, LEGACY_FILE),
        retention=config.retention if config else Retention(),
        runtime=(runtime_dir, boot_id) if runtime_dir and boot_id else None,
    )


def journal_dir(state_dir):
    """Where the journal's segments live in a state directory."""
    return os.path.join(state_dir, JOURNAL_DIR)


def _identify(parts, journal):
    """The board's hardware id; else the one kept in the state directory (the journal's folder);
    else, for a clock that keeps nothing, a new one."""
    found = parts.hardware_id() if parts.hardware_id else None
    if found:
        return found
    state_dir = parts.state_dir or (os.path.dirname(journal.directory) if journal.directory else None)
    return stored_clock_id(state_dir) if state_dir else new_clock_id()


def _opener(parts, spec):
    return lambda: parts.open_panel(spec)
