"""The card's settings file: what a director writes on the firmware partition before first boot.

A card flashed with the tileclock image (docs/build-guide.md) holds
`tileclock-settings.txt` on its FAT partition, a file any laptop can edit: Wi-Fi, the
hall's broker and this clock's password there, its command key, the hall's CA and time server,
its id, board number, rules, each side's time, the panels' controller, rotation and wiring
(`hall-setup --cards` writes one per board, so a card joins the hall at its first boot).
At boot the image reads it once: the clock's config and Wi-Fi settings are written to
the data partition (mode 0640 / 0600, each replaced whole after an fsync; the hall's CA and
chrony's source line 0644: public), the file is
kept beside them as `settings.txt`, and only then is it wiped from the FAT partition. A
power cut at any point leaves either the old settings or the new ones, and a file that
is still there is applied again at the next boot.

The format is `key = value`, one a line, `#` starting a comment; a value may be in
double quotes (then `#` is part of it). Anything else is refused with the line's number:
nothing in the file is applied, the file is kept where it is for the director to mend, and
`tileclock-settings.rejected.txt` beside it says why (the panels say it too, at that boot).
"""

import base64
import binascii
import hashlib
import os
import re
import stat
import tomllib
from dataclasses import dataclass

from ...clock.rules import PROFILES
from ...clock.timecode import NS_PER_S, parse_clock_time
from ...wire.seal import KEY
from ...wire.segments import fsync_dir, replace_file
from ...wire.topics import valid_clock_id
from ..config import ConfigError, parse_config
from ..identity import is_label
from ..wiring import WIRINGS

SETTINGS_NAME = "tileclock-settings.txt"
REJECTED_NAME = "tileclock-settings.rejected.txt"
_REASON = "reason: "
MAX_BYTES = 16 * 1024  # a settings file is a few lines; a larger one is not one
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")
_COUNTRY = re.compile(r"[A-Z]{2}")
#: `hall_ca`: a file's name on the same partition, never a path (nothing outside it is read)
_FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}")
#: where the card keeps the hall's CA once applied (its config's [hall] tls_ca names it)
HALL_CA_NAME = "hall-ca.pem"
#: a CA certificate is a kilobyte or two; a larger file is not one
MAX_CA_BYTES = 64 * 1024
#: where the card's chrony finds the hall's time server (the image's /etc/chrony/conf.d/tileclock.conf
#: includes it; the same lines as hall-setup's chrony-clock.conf)
CHRONY_NAME = "chrony.conf"
CHRONY_TEXT = (
    "# tileclock: written at boot from the settings file's time_server (or its hall)\n"
    "server {host} iburst minpoll 4 maxpoll 6 prefer\n"
    "# a Pi has no real-time clock and boots days out: step at once, whenever it is over 0.1 s out\n"
    "makestep 0.1 -1\n"
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_SSH_KEY = re.compile(
    r"(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp256|ecdsa-sha2-nistp384) [A-Za-z0-9+/=]{16,8192}( [ -~]{0,200})?"
)

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
    "wiring": "how the panels are wired: " + ", ".join(WIRINGS),
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
    return value


def _ca_line(value, where):
    """The PEM bytes of a `hall_ca_cert` line (base64 of the CA file), checked by Python's ssl."""
    import ssl

    shown = f"{where} = {value[:24]!r}{'...' if len(value) > 24 else ''}"
    if not _BASE64.fullmatch(value):
        raise SettingsError(f"{shown}: base64 on one line (hall-setup --cards writes it)")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise SettingsError(f"{shown}: not base64 (hall-setup --cards writes it)") from None
    if len(data) > MAX_CA_BYTES:
        raise SettingsError(f"{where}: {len(data)} bytes: a CA certificate is under {MAX_CA_BYTES}")
    try:
        ssl.create_default_context(cadata=data.decode("ascii"))
    except (UnicodeDecodeError, ssl.SSLError, ValueError):
        raise SettingsError(
            f"{shown}: not a PEM certificate in base64 (hall-setup's tileclock-ca.pem)"
        ) from None
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


def _toml_string(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def config_toml(settings, template, clock_id=None, tls_ca=None):
    """The clock's config.toml: `template` (systemd/config.toml's text) with the settings' values
    put in, and `tls_ca` (where the card keeps the hall's CA: `hall_ca`'s copy) as [hall] tls_ca;
    checked by the clock's own parser before it is returned."""
    text = template
    clock = []
    if settings.board:
        clock.append(f"board = {_toml_string(settings.board)}")
    if settings.rules:
        clock.append(f"rules = {_toml_string(settings.rules)}")
    if settings.clock_id:
        clock.append(f"id = {_toml_string(settings.clock_id)}  # the settings file's clock_id")
    elif clock_id:
        clock.append(f"id = {_toml_string(clock_id)}  # no serial number on this board: kept from first boot")
    for key in ("time_a", "time_b", "round_limit"):
        if getattr(settings, key):
            clock.append(f"{key} = {_toml_string(getattr(settings, key))}")
    # settings lines go first in [clock]; the template's own lines for the same keys are dropped
    for line in clock:
        key = line.split(" ", 1)[0]
        text = re.sub(rf"(?m)^{key} = .*\n", "", text, count=1)
    text = text.replace("[clock]\n", "[clock]\n" + "".join(line + "\n" for line in clock), 1)
    if settings.panels:
        text = re.sub(r'(?m)^driver = "[a-z0-9]+"', f'driver = "{settings.panels}"', text)
    for side in "AB":
        rotate = getattr(settings, f"rotate_{side.lower()}")
        if rotate is not None:  # the rotate line of this side's [[panel]], before the next table
            text = re.sub(
                rf'(?m)(^faces = "{side}"\n(?:[^\[\n].*\n|\n)*?)rotate = \d+',
                rf"\g<1>rotate = {rotate}",
                text,
                count=1,
            )
    if settings.wiring:
        text = re.sub(r'(?m)^wiring = "[a-z0-9-]+"', f'wiring = "{settings.wiring}"', text, count=1)
    if settings.hall:
        text += f"\n[hall]\nbroker = {_toml_string(settings.hall)}\n"
        if settings.hall_port:
            text += f"port = {settings.hall_port}\n"
        if settings.hall_password:
            text += f"password = {_toml_string(settings.hall_password)}\n"
        if tls_ca:
            text += f"tls_ca = {_toml_string(tls_ca)}\n"
        if settings.hall_key:
            text += f"key = {_toml_string(settings.hall_key)}\n"
    try:
        config = parse_config(tomllib.loads(text))
    except (ConfigError, tomllib.TOMLDecodeError) as error:
        raise SettingsError(f"the config made from it is refused: {error}") from None
    faces = {panel.faces: panel for panel in config.panels}
    for side in "AB":  # a template with no line to change: said, never dropped silently
        rotate = getattr(settings, f"rotate_{side.lower()}")
        if rotate is not None and (side not in faces or faces[side].rotate != rotate):
            raise SettingsError(
                f"rotate_{side.lower()} = {rotate}: the config has no panel {side} rotate line"
            )
    if settings.wiring and config.wiring != settings.wiring:
        raise SettingsError(f"wiring = {settings.wiring}: the config has no [screens] wiring line")
    return text


def chrony_conf(settings):
    """chrony's lines for the hall's time server (`time_server`, else the hall's address), or None."""
    host = settings.time_server or settings.hall
    return CHRONY_TEXT.format(host=host) if host else None


def read_hall_ca(boot, name):
    """The hall's CA certificate (PEM bytes) from the file `name` on the partition `boot`, checked
    as one (a regular file, under MAX_CA_BYTES, read by Python's ssl as a CA); SettingsError
    otherwise, naming the file. The CA is public: it is left where it is."""
    import ssl

    where = os.path.join(boot, name)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise SettingsError(
            f"hall_ca = {name}: {error.strerror} (put hall-setup's tileclock-ca.pem beside this file)"
        ) from None
    seen = os.fstat(fd)  # before fdopen, which raises IsADirectoryError for a folder
    if not stat.S_ISREG(seen.st_mode) or seen.st_size > MAX_CA_BYTES:
        os.close(fd)
        raise SettingsError(f"hall_ca = {name}: not a certificate file (under {MAX_CA_BYTES} bytes)")
    with os.fdopen(fd, "rb") as file:
        data = file.read(MAX_CA_BYTES + 1)
    if len(data) > MAX_CA_BYTES:  # grown since the fstat
        raise SettingsError(f"hall_ca = {name}: not a certificate file (under {MAX_CA_BYTES} bytes)")
    try:
        ssl.create_default_context(cadata=data.decode("ascii"))
    except (UnicodeDecodeError, ssl.SSLError, ValueError):
        raise SettingsError(
            f"hall_ca = {name}: not a PEM certificate (hall-setup's tileclock-ca.pem)"
        ) from None
    return data


def wpa_conf(settings):
    """wpa_supplicant's settings for the Wi-Fi, or None. The name in hex and the password as its
    PSK (what wpa_passphrase writes), so no character in either can break the file."""
    if settings.wifi_name is None:
        return None
    name = settings.wifi_name.encode()
    psk = hashlib.pbkdf2_hmac("sha1", settings.wifi_password.encode(), name, 4096, 32).hex()
    lines = ["ctrl_interface=DIR=/run/wpa_supplicant", "update_config=0"]
    if settings.wifi_country:
        lines.append(f"country={settings.wifi_country}")
    lines += ["network={", f"    ssid={name.hex()}", f"    psk={psk}", "}"]
    return "\n".join(lines) + "\n"


def write_whole(path, data, mode, gid=None):
    """Replace `path` with `data` (text or bytes) whole (`wire.segments.replace_file`): a power cut
    leaves the old file or the new one, never a part. `mode` None: as the file system makes it
    (FAT has no modes to set)."""
    replace_file(path, data.encode() if isinstance(data, str) else data, mode, gid)


def remove(path):
    """Remove `path` if it is there, durably."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsync_dir(os.path.dirname(path) or ".")


def wipe(path):
    """Overwrite the file's bytes with zeros where they lie, then remove it: the passwords do not
    stay readable in the FAT partition's free clusters."""
    with open(path, "r+b") as file:
        size = os.fstat(file.fileno()).st_size
        file.write(b"\0" * size)
        file.flush()
        os.fsync(file.fileno())
    remove(path)


def apply_settings(path, etc_dir, wifi_path, ssh_path, template, clock_id=None, gid=None):
    """Apply the settings file at `path` and wipe it; a line saying what was done.

    Raises SettingsError (the file is left as it is) or OSError. A file of zeros is a wipe
    that a power cut interrupted: it is wiped again, nothing applied.
    """
    with open(path, "rb") as file:
        data = file.read(MAX_BYTES + 1)
    if data and not data.strip(b"\0"):
        wipe(path)
        return "a settings file wiped before a power cut: removed"
    settings = parse_settings(data)
    ca = read_hall_ca(os.path.dirname(path), settings.hall_ca) if settings.hall_ca else settings.hall_ca_cert
    ca_path = os.path.join(etc_dir, HALL_CA_NAME)
    config = config_toml(settings, template, clock_id, ca_path if ca else None)
    # the settings first, the FAT copy last: until it is gone, the next boot applies it again
    write_whole(os.path.join(etc_dir, "settings.txt"), data, 0o640, gid)
    if ca:  # before the config that names it: the uplink never starts on a tls_ca not there
        write_whole(ca_path, ca, 0o644)
    write_whole(os.path.join(etc_dir, "config.toml"), config, 0o640, gid)
    chrony = chrony_conf(settings)
    if chrony:
        write_whole(os.path.join(etc_dir, CHRONY_NAME), chrony, 0o644)
    else:
        remove(os.path.join(etc_dir, CHRONY_NAME))
    wifi = wpa_conf(settings)
    if wifi:
        write_whole(wifi_path, wifi, 0o600)
    else:
        remove(wifi_path)
    if settings.ssh_key:
        write_whole(ssh_path, settings.ssh_key + "\n", 0o600)
    else:
        remove(ssh_path)
    wipe(path)
    parts = [f"board {settings.board or '1'}", f"rules {settings.rules or 'default'}"]
    parts.append(f"hall {settings.hall}" if settings.hall else "no hall (stand-alone)")
    if settings.clock_id:
        parts.insert(0, f"clock id {settings.clock_id}")
    if settings.hall:
        parts.append("TLS" if ca else "NO TLS (no hall_ca: in the clear)")
        parts.append("sealed commands" if settings.hall_key else "NO hall_key: commands unsealed")
    parts.append(f"time from {settings.time_server or settings.hall}" if chrony else "no time server")
    parts.append("Wi-Fi " + (repr(settings.wifi_name) if settings.wifi_name else "none"))
    return "settings applied: " + ", ".join(parts)


def note_rejection(boot, error):
    """Say on the firmware partition, beside the refused file, why it was refused: the director
    reads it on any laptop. The reason never holds a password (SettingsError's rule)."""
    text = (
        f"tileclock did not apply {SETTINGS_NAME}: nothing in it was used, the clock kept the\r\n"
        f"settings it had.\r\n{_REASON}{error}\r\n"
        f"Mend {SETTINGS_NAME} and boot again; this note goes when a settings file is applied.\r\n"
    )
    write_whole(os.path.join(boot, REJECTED_NAME), text, None)


def rejection_reason(boot):
    """The reason a settings file on `boot` was refused at this boot or the last, or None."""
    try:
        with open(os.path.join(boot, REJECTED_NAME), encoding="utf-8", errors="replace") as file:
            lines = file.read(4096).splitlines()
    except OSError:
        return None
    reasons = [line[len(_REASON) :] for line in lines if line.startswith(_REASON)]
    return reasons[0].strip() if reasons else "see " + REJECTED_NAME


def kept_clock_id(config_path):
    """The clock id the config already holds, if any."""
    try:
        with open(config_path, "rb") as file:
            return tomllib.load(file).get("clock", {}).get("id")
    except (OSError, tomllib.TOMLDecodeError):
        return None
