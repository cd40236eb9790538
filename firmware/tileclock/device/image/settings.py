"""The card's settings file: what a director writes on the firmware partition before first boot.

A card flashed with the tileclock image (docs/build-guide.md) holds
`tileclock-settings.txt` on its FAT partition, a file any laptop can edit: Wi-Fi, the
hall's broker and this clock's password there, board number, rules, panel controller.
At boot the image reads it once: the clock's config and Wi-Fi settings are written to
the data partition (mode 0640 / 0600, each replaced whole after an fsync), the file is
kept beside them as `settings.txt`, and only then is it wiped from the FAT partition. A
power cut at any point leaves either the old settings or the new ones, and a file that
is still there is applied again at the next boot.

The format is `key = value`, one a line, `#` starting a comment; a value may be in
double quotes (then `#` is part of it). Anything else is refused with the line's number:
nothing in the file is applied, the file is kept where it is for the director to mend, and
`tileclock-settings.rejected.txt` beside it says why (the panels say it too, at that boot).
"""

import hashlib
import os
import re
import stat
import tomllib
from dataclasses import dataclass

from ...clock.rules import PROFILES
from ...wire.segments import fsync_dir, replace_file
from ..config import ConfigError, parse_config
from ..identity import is_label

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
    return value


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
    if settings.hall is None and (settings.hall_port or settings.hall_password or settings.hall_ca):
        raise SettingsError("hall_port, hall_password and hall_ca need hall = the broker's address")
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
    if clock_id:
        clock.append(f"id = {_toml_string(clock_id)}  # no serial number on this board: kept from first boot")
    # settings lines go first in [clock]; the template's own lines for the same keys are dropped
    for line in clock:
        key = line.split(" ", 1)[0]
        text = re.sub(rf"(?m)^{key} = .*\n", "", text, count=1)
    text = text.replace("[clock]\n", "[clock]\n" + "".join(line + "\n" for line in clock), 1)
    if settings.panels:
        text = re.sub(r'(?m)^driver = "[a-z0-9]+"', f'driver = "{settings.panels}"', text)
    if settings.hall:
        text += f"\n[hall]\nbroker = {_toml_string(settings.hall)}\n"
        if settings.hall_port:
            text += f"port = {settings.hall_port}\n"
        if settings.hall_password:
            text += f"password = {_toml_string(settings.hall_password)}\n"
        if tls_ca:
            text += f"tls_ca = {_toml_string(tls_ca)}\n"
    try:
        parse_config(tomllib.loads(text))
    except (ConfigError, tomllib.TOMLDecodeError) as error:
        raise SettingsError(f"the config made from it is refused: {error}") from None
    return text


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
    ca = read_hall_ca(os.path.dirname(path), settings.hall_ca) if settings.hall_ca else None
    ca_path = os.path.join(etc_dir, HALL_CA_NAME)
    config = config_toml(settings, template, clock_id, ca_path if ca else None)
    # the settings first, the FAT copy last: until it is gone, the next boot applies it again
    write_whole(os.path.join(etc_dir, "settings.txt"), data, 0o640, gid)
    if ca:  # before the config that names it: the uplink never starts on a tls_ca not there
        write_whole(ca_path, ca, 0o644)
    write_whole(os.path.join(etc_dir, "config.toml"), config, 0o640, gid)
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
    if settings.hall:
        parts.append("TLS" if ca else "NO TLS (no hall_ca: in the clear)")
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
