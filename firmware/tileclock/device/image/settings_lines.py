"""The card's settings file, line by line: each key, its value checked (`parse_settings`).

What the card does with the values (its config, Wi-Fi, CA, chrony, the wipe): `settings.py`.
The format is `key = value`, one a line, `#` starting a comment; a value may be in double
quotes (then `#` is part of it). UTF-8, a byte order mark and CRLF line ends taken (a file
saved on any laptop); anything else is refused naming the line, the key and the value (never a
password's or a key's), and nothing in the file is applied.
"""

import base64
import binascii
import re
from dataclasses import dataclass

from ...clock.rules import PROFILES
from ...clock.timecode import NS_PER_S, parse_clock_time
from ...wire.seal import KEY
from ...wire.topics import valid_clock_id
from ..identity import is_label
from ..wiring import WIRINGS

MAX_BYTES = 16 * 1024  # a settings file is a few lines; a larger one is not one
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")
_COUNTRY = re.compile(r"[A-Z]{2}")
#: `hall_ca`: a file's name on the same partition, never a path (nothing outside it is read)
_FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")
#: a CA certificate is a kilobyte or two; a larger file is not one
MAX_CA_BYTES = 64 * 1024
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_SSH_KEY = re.compile(
    r"(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384) [A-Za-z0-9+/=]{16,8192}( [ -~]{0,200})?"
)

#: the one panel wiring the image drives: Debian's kernel there has no overlays for a second I2C
#: bus, and the image has no spidev (docs/build-guide.md, "What each model can't do with this image")
IMAGE_WIRING = "i2c-one-bus"

#: each key, and what it is for (the example file on the card says the same)
KEYS = {
    "board": "the board number the director knows this clock by",
    "rules": "the rules profile: " + ", ".join(sorted(PROFILES)),
    "panels": "the panels' controller: ssd1306 or sh1106",
    "wifi_name": "the hall's Wi-Fi network",
    "wifi_password": "its password (8 to 63 characters)",
    "wifi_country": "the country the Wi-Fi works in, two letters (GB, US, DE...)",
    "hall": "the hall's broker: its address (no hall: a stand-alone clock, serial record only)",
    "hall_port": "the broker's port (default 8883 with hall_ca, else 1883)",
    "hall_password": "this clock's password on the hall's broker (its user name is the clock id)",
    "hall_ca": "the hall's CA (hall-setup's tileclock-ca.pem), a file beside this one: TLS to the broker",
    "hall_ca_cert": "or the hall's CA itself: its PEM file in base64 on one line (hall-setup --cards writes it)",
    "hall_key": "this clock's command key on the hall (64 hex digits, hall-setup's tileclock.keys)",
    "clock_id": "this clock's id on the hall (its user name there); default: from the Pi's serial number",
    "time_server": "the hall's time server (chrony follows it); default: the hall's address",
    "time_a": "side A's starting time, m:ss (default: the rules')",
    "time_b": "side B's starting time, m:ss (default: the rules')",
    "round_limit": "the game ends this long after the round starts, m:ss, or none (default: the rules')",
    "rotate_a": "0, or 2 for panel A mounted upside down",
    "rotate_b": "0, or 2 for panel B mounted upside down",
    "wiring": f"how the panels are wired: {IMAGE_WIRING}, the one wiring this image drives",
    "ssh_key": "a public key that may log in as root over SSH (one line, as in id_ed25519.pub)",
}


class SettingsError(ValueError):
    """A settings file the card cannot use; the message names the line, never a password."""


@dataclass(frozen=True)
class Settings:
    """A settings file's values, each checked; a key the file leaves out is None."""

    board: str | None = None
    rules: str | None = None
    panels: str | None = None
    wifi_name: str | None = None
    wifi_password: str | None = None
    wifi_country: str | None = None
    hall: str | None = None
    hall_port: int | None = None
    hall_password: str | None = None
    hall_ca: str | None = None
    ssh_key: str | None = None
    #: the CA's PEM bytes, decoded from the line and checked as a certificate
    hall_ca_cert: bytes | None = None
    hall_key: str | None = None
    clock_id: str | None = None
    time_server: str | None = None
    time_a: str | None = None
    time_b: str | None = None
    round_limit: str | None = None
    rotate_a: int | None = None
    rotate_b: int | None = None
    wiring: str | None = None


def _value(raw, number):
    raw = raw.strip()
    if raw.startswith('"'):
        end = raw.find('"', 1)
        if end < 0 or raw[end + 1 :].strip()[:1] not in ("", "#"):
            raise SettingsError(f"line {number}: a value in quotes must end with a quote")
        return raw[1:end]
    return raw.split("#", 1)[0].strip()


def _check(key, value, number):
    where = f"line {number}: {key}"
    if key == "board" and not is_label(value):
        raise SettingsError(f"{where} = {value!r}: letters, digits, - and _ only")
    if key == "rules" and value not in PROFILES:
        raise SettingsError(f"{where} = {value!r}: one of {', '.join(sorted(PROFILES))}")
    if key == "panels" and value not in ("ssd1306", "sh1106"):
        raise SettingsError(f"{where} = {value!r}: ssd1306 or sh1106 (the chip named on the panel's board)")
    if key == "wifi_name" and not 1 <= len(value.encode()) <= 32:
        raise SettingsError(f"{where}: a Wi-Fi name is 1 to 32 bytes")
    if key == "wifi_password" and not (8 <= len(value) <= 63 and value.isascii() and value.isprintable()):
        raise SettingsError(f"{where}: a Wi-Fi password is 8 to 63 plain characters (its value is not shown)")
    if key == "wifi_country" and not _COUNTRY.fullmatch(value):
        raise SettingsError(f"{where} = {value!r}: two capital letters, like GB")
    if key == "hall" and not _HOST.fullmatch(value):
        raise SettingsError(f"{where} = {value!r}: a host name or an IP address")
    if key == "hall_port":
        if not (value.isdigit() and 1 <= int(value) <= 65535):
            raise SettingsError(f"{where} = {value!r}: a port number, 1 to 65535")
        return int(value)
    if key == "hall_password" and not (value.isprintable() and 1 <= len(value) <= 200):
        raise SettingsError(f"{where}: 1 to 200 plain characters (its value is not shown)")
    if key == "hall_ca" and not _FILE_NAME.fullmatch(value):
        raise SettingsError(f"{where} = {value!r}: the name of a file beside this one, like tileclock-ca.pem")
    if key == "ssh_key" and not _SSH_KEY.fullmatch(value):
        raise SettingsError(f"{where}: expected one public key line, like 'ssh-ed25519 AAAA... name'")
    if key == "hall_ca_cert":
        return _ca_line(value, where)
    if key == "hall_key" and not KEY.fullmatch(value):
        raise SettingsError(f"{where}: expected the 64 hex digits hall-setup wrote (its value is not shown)")
    if key == "clock_id" and not valid_clock_id(value):
        raise SettingsError(
            f"{where} = {value[:40]!r}: 1 to 32 letters, digits, - and _, not 'all', 'director' or 'viewers'"
        )
    if key == "time_server" and not _HOST.fullmatch(value):
        raise SettingsError(f"{where} = {value[:40]!r}: a host name or an IP address")
    if key in ("time_a", "time_b", "round_limit") and not (key == "round_limit" and value == "none"):
        try:
            seconds = parse_clock_time(value) // NS_PER_S
        except ValueError as error:
            raise SettingsError(f"{where} = {value[:40]!r}: {error}") from None
        if seconds <= 0 or seconds > 24 * 3600:
            raise SettingsError(f"{where} = {value[:40]!r}: a time like 25:00, above 0:00 and at most a day")
    if key in ("rotate_a", "rotate_b"):
        if value not in ("0", "2"):
            raise SettingsError(f"{where} = {value[:40]!r}: 0, or 2 for a panel mounted upside down")
        return int(value)
    if key == "wiring" and value not in WIRINGS:
        raise SettingsError(f"{where} = {value[:40]!r}: one of {', '.join(WIRINGS)}")
    if key == "wiring" and value != IMAGE_WIRING:
        raise SettingsError(
            f"{where} = {value!r}: this image drives {IMAGE_WIRING} only; {value} is for Raspberry Pi OS "
            "and install.sh (docs/build-guide.md)"
        )
    return value


def _ca_line(value, where):
    """The PEM bytes of a `hall_ca_cert` line (base64 of the CA file), checked by Python's ssl."""
    shown = f"{where} = {value[:24]!r}{'...' if len(value) > 24 else ''}"
    if not _BASE64.fullmatch(value):
        raise SettingsError(f"{shown}: base64 on one line (hall-setup --cards writes it)")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise SettingsError(f"{shown}: not base64 (hall-setup --cards writes it)") from None
    if len(data) > MAX_CA_BYTES:
        raise SettingsError(f"{where}: {len(data)} bytes: a CA certificate is under {MAX_CA_BYTES}")
    return pem_certificate(data, f"{shown}: not a PEM certificate in base64 (hall-setup's tileclock-ca.pem)")


def pem_certificate(data, refusal):
    """`data` if Python's ssl takes it as a CA's PEM certificate; else SettingsError(`refusal`)."""
    import ssl  # only a hall's card has one to check: the first boot does not pay for ssl otherwise

    try:
        ssl.create_default_context(cadata=data.decode("ascii"))
    except (UnicodeDecodeError, ssl.SSLError, ValueError):
        raise SettingsError(refusal) from None
    return data


def parse_settings(data):
    """The settings in `data` (the file's bytes), checked; SettingsError says which line is wrong."""
    if len(data) > MAX_BYTES:
        raise SettingsError(f"the file is {len(data)} bytes: a settings file is under {MAX_BYTES}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SettingsError(f"not text (byte {error.start} is not UTF-8): save it as plain text") from None
    values = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, equals, raw = line.partition("=")
        key = key.strip()
        if not equals:
            raise SettingsError(f"line {number}: expected key = value")
        if key not in KEYS:
            raise SettingsError(f"line {number}: unknown key {key[:40]!r} (known: {', '.join(KEYS)})")
        if key in values:
            raise SettingsError(f"line {number}: {key} is set twice")
        value = _value(raw, number)
        if value:  # an empty value leaves the key out, as in the example file
            values[key] = _check(key, value, number)
    settings = Settings(**values)
    if (settings.wifi_name is None) != (settings.wifi_password is None):
        raise SettingsError("wifi_name and wifi_password go together")
    hall_only = ("hall_port", "hall_password", "hall_ca", "hall_ca_cert", "hall_key")
    if settings.hall is None and any(getattr(settings, key) for key in hall_only):
        raise SettingsError(f"{', '.join(hall_only)} need hall = the broker's address")
    if settings.hall_ca and settings.hall_ca_cert:
        raise SettingsError("hall_ca and hall_ca_cert both name the hall's CA: keep one")
    return settings
