"""What the clock's config file may set, and each setting's default: `Config` and its sections.

Every default matches the wiring in `hw/`. The file itself is read and checked, key by key, in
`config.py`; these are the values it makes, and what a clock with no config file runs on.
"""

from dataclasses import dataclass, field

from ..clock.core import ButtonTiming
from ..clock.rules import DEFAULT_PROFILE, profile
from ..clock.speech import SpeechSetting
from .journal.retention import Retention
from .screen.idle import IdlePolicy
from .wiring import DEFAULT_WIRING, WIRINGS


@dataclass(frozen=True)
class PanelConfig:
    """One OLED panel: the side it faces, its controller, its bus, how it is mounted."""

    faces: str
    driver: str = "ssd1306"
    interface: str = "i2c"
    port: int = 1
    address: int = 0x3C
    spi_device: int = 0
    rotate: int = 0  # 0, or 2 for a panel mounted upside down
    contrast: int = 0xCF
    dc_pin: int = 24  # SPI only: the BCM GPIO of its data/command line
    reset_pin: int | None = None  # SPI only: the BCM GPIO of its reset line (None: not wired)


@dataclass(frozen=True)
class HallConfig:
    """The hall's broker (docs/hall.md): where it is and how this clock signs in.

    The clock's user name on the broker is its clock id; `password` is the one the
    director's broker holds for it. `tls_ca` turns on TLS, checked against that CA file (the
    port is then 8883 unless given); without it the password and commands travel in the clear.
    """

    broker: str
    port: int = 1883
    password: str = ""
    tls_ca: str | None = None
    keepalive_s: int = 30
    #: the clock's command key (64 hex digits, from `tileclock hall-setup`): every command from the
    #: hall must then be sealed with it (wire/seal.py); None: the CRC alone, as on the serial line
    key: str | None = None


DEFAULT_PANELS = tuple(PanelConfig(faces=side, **WIRINGS[DEFAULT_WIRING][side]) for side in "AB")


@dataclass(frozen=True)
class Config:
    """Everything the clock reads from its config file, with the defaults."""

    #: the director's name for this board: a label (letters, digits, `-`, `_`), not unique
    board: str = "1"
    #: the clock's own id, carried by every record; None: from the hardware (see identity.py)
    clock_id: str | None = None
    rules: str = DEFAULT_PROFILE
    #: while a side runs, a checkpoint record this often bounds what a power cut can lose
    checkpoint_s: int = 10
    #: where the Pi's power flags are read (`power.py`): `/`, or a fake sysfs tree in a test
    power_root: str = "/"
    #: Per-side starting times in whole seconds; a side missing here gets the profile's.
    times_s: dict = field(default_factory=dict)
    #: Rules settings changed from the profile's (`round_limit_s`, from `clock.round_limit`).
    rules_changes: dict = field(default_factory=dict)
    timing: ButtonTiming = ButtonTiming()
    #: BCM GPIO numbers of the buttons, each wired to ground (internal pull-ups).
    pins: dict = field(default_factory=lambda: {"A": 17, "STOP": 27, "B": 22})
    #: gpiozero pin backend: "auto" (GPIOZERO_PIN_FACTORY; else gpiod where /dev/gpiochip* exists;
    #: else gpiozero's own order), "gpiod", "lgpio", "rpigpio", or "mock" (simulated buttons, off a Pi)
    pin_backend: str = "auto"
    serial_port: str = "/dev/serial0"
    serial_baud: int = 115200
    panels: tuple = DEFAULT_PANELS
    idle: IdlePolicy = IdlePolicy()
    #: the hall's broker, or None: no network at all
    hall: HallConfig | None = None
    #: how the panels are wired (device/wiring.py): their buses, unless a [[panel]] says otherwise
    wiring: str = DEFAULT_WIRING
    #: the panels' I2C bus speed, as set in the Pi's boot config (dtparam=i2c_arm_baudrate); the
    #: simulator and the benchmark work the bus time out from it
    i2c_hz: int = 400_000
    #: the panels' SPI clock (luma's own default)
    spi_hz: int = 8_000_000
    #: how long finished games are kept in the journal
    retention: Retention = Retention()
    #: which sides hear the clock through an earphone, and the voice (clock/speech.py): off by default
    speech: SpeechSetting = SpeechSetting()

    @property
    def profile(self):
        return profile(self.rules, self.rules_changes)
