"""The clock's config file: one TOML file, checked key by key.

Every key has a default (`config_schema.py`) that matches the wiring in `hw/`; a key the clock
does not know, or a value of the wrong kind, is an error that names the key and the value, so a
typo never passes silently.
"""

import re
import tomllib
from dataclasses import fields, replace

from ..clock.core import ButtonTiming
from ..clock.rules import profile
from ..clock.speech import SpeechSetting, parse_sides
from ..clock.timecode import NS_PER_S, parse_clock_time
from ..wire.records import SIDES
from ..wire.seal import KEY
from .config_schema import Config, HallConfig, PanelConfig
from .identity import is_label
from .journal.retention import Retention
from .screen.idle import IdlePolicy
from .wiring import DEFAULT_WIRING, WIRINGS

PIN_BACKENDS = ("auto", "gpiod", "lgpio", "rpigpio", "mock")
#: A broker host: a DNS name or an IPv4/IPv6 address, nothing that could smuggle options or paths.
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")


class ConfigError(ValueError):
    """A setting the clock cannot use; the message names the key and the value."""


#: the hall broker's TLS port (hall-setup's config): a [hall] with `tls_ca` and no `port` uses it
TLS_PORT = 8883


#: the SPI clocks luma's SPI interface takes
_SPI_HZ = (
    500_000,
    1_000_000,
    2_000_000,
    4_000_000,
    8_000_000,
    16_000_000,
    20_000_000,
    24_000_000,
    32_000_000,
)

_PANEL_CHOICES = {"faces": ("A", "B"), "driver": ("ssd1306", "sh1106"), "interface": ("i2c", "spi")}
_PANEL_RANGES = {
    "port": (0, 10),
    "address": (0x03, 0x77),
    "spi_device": (0, 2),
    "contrast": (0, 255),
    "dc_pin": (0, 27),
    "reset_pin": (0, 27),
}


def _take(section, key, kind, where):
    value = section.pop(key)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}.{key} = {value!r}: expected a whole number")
    if kind is str and not isinstance(value, str):
        raise ConfigError(f"{where}.{key} = {value!r}: expected a string in quotes")
    return value


def _side_time(value, key):
    if not isinstance(value, str):
        raise ConfigError(f'clock.{key} = {value!r}: expected a time like "25:00"')
    try:
        return parse_clock_time(value) // NS_PER_S
    except ValueError as error:
        raise ConfigError(f"clock.{key} = {value!r}: {error}") from None


def parse_config(data):
    """A `Config` from parsed TOML (a dict); ConfigError on any unknown key or bad value."""
    data = {name: dict(section) if isinstance(section, dict) else section for name, section in data.items()}
    for name in ("clock", "buttons", "serial", "screens", "hall", "journal", "speech"):
        if name in data and not isinstance(data[name], dict):
            raise ConfigError(f"{name} = {data[name]!r}: expected a [{name}] table")
    config = {}
    clock = data.pop("clock", {})
    for key in list(clock):
        if key in ("board", "rules", "power_root"):
            config[key] = _take(clock, key, str, "clock")
        elif key == "id":
            config["clock_id"] = _take(clock, key, str, "clock")
        elif key in ("time_a", "time_b"):
            config.setdefault("times_s", {})[key[-1].upper()] = _side_time(clock.pop(key), key)
        elif key == "round_limit":
            value = clock.pop(key)
            limit = None if value == "none" else _side_time(value, key)
            if limit == 0:
                raise ConfigError(f'clock.round_limit = {value!r}: expected a time like "50:00", or "none"')
            config["rules_changes"] = {"round_limit_s": limit}
        elif key == "checkpoint_s":
            config[key] = _take(clock, key, int, "clock")
            if not 1 <= config[key] <= 600:
                raise ConfigError(f"clock.checkpoint_s = {config[key]!r}: expected 1 to 600 seconds")
    for key, name in (("board", "board"), ("clock_id", "id")):
        if key in config and not is_label(config[key]):
            raise ConfigError(
                f"clock.{name} = {config[key]!r}: expected 1 to 32 letters, digits, '-' or '_', starting with a letter or digit"
            )
    if "rules" in config:
        try:
            profile(config["rules"])
        except ValueError as error:
            raise ConfigError(f"clock.rules = {config['rules']!r}: {error}") from None
    _reject_unknown(clock, "clock")

    buttons = data.pop("buttons", {})
    pins = dict(Config().pins)
    for key, button in (("a", "A"), ("stop", "STOP"), ("b", "B")):
        if key in buttons:
            pins[button] = _take(buttons, key, int, "buttons")
            if not 0 <= pins[button] <= 27:
                raise ConfigError(f"buttons.{key} = {pins[button]!r}: a BCM GPIO number is 0 to 27")
    if "backend" in buttons:
        config["pin_backend"] = _take(buttons, "backend", str, "buttons")
        if config["pin_backend"] not in PIN_BACKENDS:
            raise ConfigError(
                f"buttons.backend = {config['pin_backend']!r}: expected one of {', '.join(PIN_BACKENDS)}"
            )
    if len(set(pins.values())) != len(pins):
        raise ConfigError(f"buttons: two buttons share a pin: {pins}")
    config["pins"] = pins
    config["timing"] = _whole_numbers(
        buttons, "buttons", ButtonTiming, lambda name: 0, "must not be negative"
    )
    if config["timing"].conflict():  # the holds and taps checked against each other
        key, why = config["timing"].conflict()
        raise ConfigError(f"buttons.{key} = {getattr(config['timing'], key)!r}: {why}")
    _reject_unknown(buttons, "buttons")

    serial = data.pop("serial", {})
    if "port" in serial:
        config["serial_port"] = _take(serial, "port", str, "serial")
    if "baud" in serial:
        config["serial_baud"] = _take(serial, "baud", int, "serial")
    _reject_unknown(serial, "serial")

    entries = _panels(data.pop("panel")) if "panel" in data else [{"faces": "A"}, {"faces": "B"}]
    screens = data.pop("screens", {})
    if "wiring" in screens:
        config["wiring"] = _take(screens, "wiring", str, "screens")
        if config["wiring"] not in WIRINGS:
            raise ConfigError(f"screens.wiring = {config['wiring']!r}: expected one of {', '.join(WIRINGS)}")
    wiring = WIRINGS[config.get("wiring", DEFAULT_WIRING)]
    config["panels"] = tuple(PanelConfig(**{**wiring[entry["faces"]], **entry}) for entry in entries)
    places = [(p.port, p.address) for p in config["panels"] if p.interface == "i2c"]
    if len(set(places)) != len(places):
        raise ConfigError(f"panel: two panels at the same address on one I2C bus: {places}")
    for panel in config["panels"]:
        taken = {pin for pin in (panel.dc_pin, panel.reset_pin) if panel.interface == "spi"} & set(
            pins.values()
        )
        if taken:
            raise ConfigError(f"panel {panel.faces}: GPIO{min(taken)} is a button's pin (buttons: {pins})")
    if "spi_hz" in screens:
        config["spi_hz"] = _take(screens, "spi_hz", int, "screens")
        if config["spi_hz"] not in _SPI_HZ:
            raise ConfigError(f"screens.spi_hz = {config['spi_hz']!r}: expected one of luma's {_SPI_HZ}")
    if "i2c_hz" in screens:
        config["i2c_hz"] = _take(screens, "i2c_hz", int, "screens")
        if not 10_000 <= config["i2c_hz"] <= 3_400_000:
            raise ConfigError(f"screens.i2c_hz = {config['i2c_hz']!r}: expected 10000 to 3400000 (Hz)")
    config["idle"] = _whole_numbers(
        screens, "screens", IdlePolicy, lambda name: 0 if name == "dim_contrast" else 1, "too small"
    )
    _reject_unknown(screens, "screens")

    if "hall" in data:
        config["hall"] = _hall(data.pop("hall"))
    journal = data.pop("journal", {})
    config["retention"] = _whole_numbers(journal, "journal", Retention, lambda name: 1, "must be at least 1")
    _reject_unknown(journal, "journal")
    if "speech" in data:
        config["speech"] = _speech(data.pop("speech"))

    for name, value in data.items():
        raise ConfigError(f"unknown section [{name}] (value {value!r})")
    return Config(**config)


def _panels(entries):
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"panel = {entries!r}: expected one or two [[panel]] tables")
    panels = []
    for number, entry in enumerate(entries, start=1):
        where = f"panel[{number}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} = {entry!r}: expected a [[panel]] table")
        entry = dict(entry)
        if "faces" not in entry:
            raise ConfigError(f'{where}: needs faces = "A" or "B"')
        values = {}
        for f in fields(PanelConfig):
            if f.name not in entry:
                continue
            kind = str if f.name in _PANEL_CHOICES else int
            value = values[f.name] = _take(entry, f.name, kind, where)
            if f.name in _PANEL_CHOICES and value not in _PANEL_CHOICES[f.name]:
                raise ConfigError(
                    f"{where}.{f.name} = {value!r}: expected one of {', '.join(_PANEL_CHOICES[f.name])}"
                )
            if f.name in _PANEL_RANGES and not _PANEL_RANGES[f.name][0] <= value <= _PANEL_RANGES[f.name][1]:
                low, high = _PANEL_RANGES[f.name]
                raise ConfigError(f"{where}.{f.name} = {value!r}: expected {low} to {high}")
            if f.name == "rotate" and value not in (0, 2):
                raise ConfigError(
                    f"{where}.rotate = {value!r}: expected 0, or 2 for a panel mounted upside down"
                )
        _reject_unknown(entry, where)
        panels.append(values)
    faces = [panel["faces"] for panel in panels]
    if len(set(faces)) != len(faces):
        raise ConfigError(f"panel: two panels face the same side: {faces}")
    return panels


def _hall(section):
    if "broker" not in section:
        raise ConfigError('hall: needs broker = "HOST" (the director\'s broker), or no [hall] section at all')
    values = {"broker": _take(section, "broker", str, "hall")}
    if not _HOST.fullmatch(values["broker"]):
        raise ConfigError(f"hall.broker = {values['broker']!r}: expected a host name or an IP address")
    if "port" in section:
        values["port"] = _take(section, "port", int, "hall")
        if not 1 <= values["port"] <= 65535:
            raise ConfigError(f"hall.port = {values['port']!r}: expected 1 to 65535")
    if "password" in section:
        password = section.pop("password")
        if not isinstance(password, str) or not password.isprintable():
            raise ConfigError("hall.password: expected a string in quotes (its value is not shown)")
        values["password"] = password
    if "tls_ca" in section:
        values["tls_ca"] = _take(section, "tls_ca", str, "hall")
        values.setdefault("port", TLS_PORT)  # hall-setup's broker: TLS on 8883, no plain port
    if "key" in section:
        key = section.pop("key")
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise ConfigError(
                "hall.key: expected the 64 hex digits hall-setup printed, in quotes (not shown)"
            )
        values["key"] = key
    if "keepalive_s" in section:
        values["keepalive_s"] = _take(section, "keepalive_s", int, "hall")
        if not 5 <= values["keepalive_s"] <= 600:
            raise ConfigError(f"hall.keepalive_s = {values['keepalive_s']!r}: expected 5 to 600 seconds")
    _reject_unknown(section, "hall")
    return HallConfig(**values)


#: espeak-ng's limits: words a minute, and amplitude (100 its default)
SPEECH_RATE = (80, 450)
SPEECH_VOLUME = (0, 200)


def _speech(section):
    """[speech]: `sides` ("A", "B", "AB" or ""), `rate` (words a minute), `volume` (0-200);
    `large` (sides, as `sides`): the panels that show the large-digits face."""
    values = {}
    for key in ("sides", "large"):
        if key in section:
            text = _take(section, key, str, "speech")
            try:
                values[key] = parse_sides(text)
            except ValueError as error:
                raise ConfigError(f"speech.{key} = {text!r}: {error}") from None
    for key, (low, high) in (("rate", SPEECH_RATE), ("volume", SPEECH_VOLUME)):
        if key in section:
            values[key] = _take(section, key, int, "speech")
            if not low <= values[key] <= high:
                raise ConfigError(f"speech.{key} = {values[key]!r}: expected {low} to {high}")
    _reject_unknown(section, "speech")
    return SpeechSetting(**values)


def _whole_numbers(table, section, settings, least, too_small):
    """`settings` (a dataclass) from the keys of [section] that name its fields, each a whole number
    of at least `least(name)` (else a ConfigError naming the key, the value and `too_small`)."""
    values = {}
    for f in fields(settings):
        if f.name in table:
            values[f.name] = _take(table, f.name, int, section)
            if values[f.name] < least(f.name):
                raise ConfigError(f"{section}.{f.name} = {values[f.name]!r}: {too_small}")
    return settings(**values)


def _reject_unknown(section, where):
    if not isinstance(section, dict):
        raise ConfigError(f"{where} = {section!r}: expected a [{where}] table")
    for key, value in section.items():
        raise ConfigError(f"unknown key {where}.{key} = {value!r}")


def load_config(path):
    """Read and check the TOML file at `path`."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    try:
        return parse_config(data)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def with_times(config, overrides):
    """`config` with per-side starting times from `SIDE=m:ss` strings (the `--time` option)."""
    times = dict(config.times_s)
    given = {}
    for item in overrides:
        side, _, text = item.partition("=")
        side = side.strip()
        if side not in SIDES or not text:
            raise ConfigError(f"--time {item!r}: expected A=m:ss or B=m:ss")
        if side in given:
            raise ConfigError(f"--time {item!r}: {side}'s time is already given (--time {given[side]})")
        given[side] = item
        try:
            times[side] = parse_clock_time(text) // NS_PER_S
        except ValueError as error:
            raise ConfigError(f"--time {item!r}: {error}") from None
    return replace(config, times_s=times)
