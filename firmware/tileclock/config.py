"""The clock's settings: one TOML file, checked key by key.

Every key has a default that matches the wiring in `hw/`; a key the clock does
not know, or a value of the wrong kind, is an error that names the key and the
value, so a typo never passes silently.
"""

import tomllib
from dataclasses import dataclass, field, fields, replace

from .core import ButtonTiming
from .records import SIDES
from .rules import DEFAULT_PROFILE, profile
from .timecode import NS_PER_S, parse_clock_time


class ConfigError(ValueError):
    """A setting the clock cannot use; the message names the key and the value."""


@dataclass(frozen=True)
class Config:
    """Everything the clock reads from its config file, with the defaults."""

    board: str = "1"
    rules: str = DEFAULT_PROFILE
    #: Per-side starting times in whole seconds; a side missing here gets the profile's.
    times_s: dict = field(default_factory=dict)
    timing: ButtonTiming = ButtonTiming()
    #: BCM pin numbers of the buttons (see hw/pinout.md).
    pins: dict = field(default_factory=lambda: {"A": 17, "STOP": 27, "B": 22})
    serial_port: str = "/dev/serial0"
    serial_baud: int = 115200

    @property
    def profile(self):
        return profile(self.rules)


def _take(section, key, kind, where):
    value = section.pop(key)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}.{key} = {value!r}: expected a whole number")
    if kind is str and not isinstance(value, str):
        raise ConfigError(f"{where}.{key} = {value!r}: expected a string in quotes")
    return value


def _side_time(value, key):
    if not isinstance(value, str):
        raise ConfigError(f"clock.{key} = {value!r}: expected a time like \"25:00\"")
    try:
        return parse_clock_time(value) // NS_PER_S
    except ValueError as error:
        raise ConfigError(f"clock.{key} = {value!r}: {error}") from None


def parse_config(data):
    """A `Config` from parsed TOML (a dict); ConfigError on any unknown key or bad value."""
    data = {name: dict(section) if isinstance(section, dict) else section for name, section in data.items()}
    config = {}
    clock = data.pop("clock", {})
    for key in list(clock):
        if key in ("board", "rules"):
            config[key] = _take(clock, key, str, "clock")
        elif key in ("time_a", "time_b"):
            config.setdefault("times_s", {})[key[-1].upper()] = _side_time(clock.pop(key), key)
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
    if len(set(pins.values())) != len(pins):
        raise ConfigError(f"buttons: two buttons share a pin: {pins}")
    config["pins"] = pins
    timing = {}
    for f in fields(ButtonTiming):
        if f.name in buttons:
            timing[f.name] = _take(buttons, f.name, int, "buttons")
            if timing[f.name] < 0:
                raise ConfigError(f"buttons.{f.name} = {timing[f.name]!r}: must not be negative")
    config["timing"] = ButtonTiming(**timing)
    _reject_unknown(buttons, "buttons")

    serial = data.pop("serial", {})
    if "port" in serial:
        config["serial_port"] = _take(serial, "port", str, "serial")
    if "baud" in serial:
        config["serial_baud"] = _take(serial, "baud", int, "serial")
    _reject_unknown(serial, "serial")

    for name, value in data.items():
        raise ConfigError(f"unknown section [{name}] (value {value!r})")
    return Config(**config)


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
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    try:
        return parse_config(data)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def with_times(config, overrides):
    """`config` with per-side starting times from `SIDE=m:ss` strings (the `--time` option)."""
    times = dict(config.times_s)
    for item in overrides:
        side, _, text = item.partition("=")
        side = side.strip().upper()
        if side not in SIDES or not text:
            raise ConfigError(f"--time {item!r}: expected A=m:ss or B=m:ss")
        try:
            times[side] = parse_clock_time(text) // NS_PER_S
        except ValueError as error:
            raise ConfigError(f"--time {item!r}: {error}") from None
    return replace(config, times_s=times)
