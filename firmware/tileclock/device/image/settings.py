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

import hashlib
import os
import re
import stat
import tomllib

from ...wire.segments import fsync_dir, replace_file
from ..config import ConfigError, parse_config

# the lines and their checks (settings_lines.py), here too for the card's boot and its tests
from .settings_lines import MAX_BYTES, MAX_CA_BYTES, SettingsError, parse_settings, pem_certificate

SETTINGS_NAME = "tileclock-settings.txt"
REJECTED_NAME = "tileclock-settings.rejected.txt"
_REASON = "reason: "
#: where the card keeps the hall's CA once applied (its config's [hall] tls_ca names it)
HALL_CA_NAME = "hall-ca.pem"
#: where the card's chrony finds the hall's time server (the image's /etc/chrony/conf.d/tileclock.conf
#: includes it; the same lines as hall-setup's chrony-clock.conf)
CHRONY_NAME = "chrony.conf"
CHRONY_TEXT = (
    "# tileclock: written at boot from the settings file's time_server (or its hall)\n"
    "server {host} iburst minpoll 4 maxpoll 6 prefer\n"
    "# a Pi has no real-time clock and boots days out: step at once, whenever it is over 0.1 s out\n"
    "makestep 0.1 -1\n"
)


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
    return pem_certificate(data, f"hall_ca = {name}: not a PEM certificate (hall-setup's tileclock-ca.pem)")


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
