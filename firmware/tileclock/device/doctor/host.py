"""The doctor's checks of any Linux machine: config, buttons, serial, state folder, service, wall clock."""

import errno
import grp
import os
import pwd
import stat
import tempfile
import warnings

from .checks import FAIL, OK, WARN, Check, ask


def check_config(path):
    from ..config import ConfigError, load_config
    from ..config_schema import Config

    if not os.path.exists(path):
        return Config(), Check(
            WARN, "config", f"{path} not found: using the defaults", "sudo systemd/install.sh writes it"
        )
    try:
        return load_config(path), Check(OK, "config", path)
    except ConfigError as error:
        if not os.access(path, os.R_OK) and os.path.isfile(path):
            # 0640 root:tileclock: it may hold the hall's password
            fix = "sudo tileclock doctor, or join the tileclock group: sudo usermod -a -G tileclock $USER, log in again"
        else:
            fix = f"edit {path}: see systemd/config.toml for every key"
        return None, Check(FAIL, "config", str(error), fix)


def check_buttons(config, environ=os.environ, open_pins=None, holders=None):
    """The pin backend and each button's level. `open_pins` () -> a pin factory and `holders`
    (offsets -> `gpio_holders.line_holders`) stand in for the real ones in tests."""
    from ..hardware.buttons import ButtonBoard
    from ..hardware.pins import choose_backend, pin_factory

    chosen, why = choose_backend(config.pin_backend, environ)
    named = f"{chosen or 'gpiozero chooses'} ({why})"
    factory = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gpiozero warns for each backend it falls back from
            factory = (open_pins or (lambda: pin_factory(config.pin_backend, environ)))()
            board = ButtonBoard(config.pins, lambda *edge: None, pin_factory=factory)
    except Exception as error:  # gpiozero raises a different error for each backend that is missing
        if factory is not None:
            factory.close()
        text = str(error) or type(error).__name__
        if getattr(error, "errno", None) == errno.EBUSY or "in use" in text.lower() or "busy" in text.lower():
            return [_held(config, chosen, text, holders)]
        return [
            Check(
                FAIL,
                "pin backend",
                f"{named}: {text}",
                "on a Pi: the gpiod package comes with tileclock (systemd/install.sh), and the user needs "
                "the gpio group for /dev/gpiochip*; off a Pi there are no GPIO pins: "
                'use tileclock sim, or buttons.backend = "mock"',
            )
        ]
    factory_name = type(board.buttons["A"].pin_factory).__name__
    checks = [Check(OK, "pin backend", f"{factory_name}: {named}")]
    for name, button in board.buttons.items():
        gpio = config.pins[name]
        if button.is_active:
            checks.append(
                Check(
                    FAIL,
                    f"button {name}",
                    f"GPIO{gpio} reads pressed while nobody presses it",
                    "a stuck button, a short, or the button wired to 3V3 instead of GND (hw/README.md)",
                )
            )
        else:
            checks.append(
                Check(OK, f"button {name}", f"GPIO{gpio} reads released (press it: nothing to check by hand)")
            )
    board.close()
    return checks


def _held(config, chosen, text, holders=None):
    """The buttons' lines are taken: by the service (a warning), or by another program, named from
    the consumer label its request gave the kernel, with the processes that hold line requests."""
    held = {}
    if chosen == "gpiod" or holders is not None:
        try:
            if holders is None:
                from ..hardware.gpio_holders import line_holders

                holders = line_holders
            held = holders(sorted(config.pins.values()))
        except Exception:  # no chip to ask, no gpiod: say what the backend said
            held = {}
    others = {gpio: holder for gpio, holder in held.items() if holder[0] != "tileclock"}
    if not others:
        return Check(
            WARN,
            "buttons",
            f"pins in use ({text}): the service has them",
            "sudo systemctl stop tileclock, then run doctor again to test the buttons",
        )
    names = {gpio: name for name, gpio in config.pins.items()}
    said = []
    for gpio, (consumer, processes) in sorted(others.items()):
        who = ", ".join(f"pid {pid} {name}" for pid, name in processes) or "no process seen"
        said.append(f"GPIO{gpio} ({names[gpio]}) is held by {consumer!r} ({who})")
    return Check(
        FAIL,
        "buttons",
        "; ".join(said),
        "another program has the buttons' lines: stop it, or wire the buttons to free GPIOs and set [buttons]",
    )


def check_serial(config):
    import serial

    try:
        port = serial.serial_for_url(config.serial_port, baudrate=config.serial_baud, timeout=0)
        port.close()
        return Check(OK, "serial port", f"{config.serial_port} opens")
    except serial.SerialException as error:
        text = str(error)
        if "Permission denied" in text:
            fix = "add the user to the dialout group"
        elif "No such file" in text or "could not open" in text:
            fix = "enable_uart=1 in the boot config (systemd/install.sh), or set serial.port to your adapter"
        else:
            fix = "check serial.port in the config"
        return Check(FAIL, "serial port", f"{config.serial_port}: {text}", fix)


#: the user the service runs as (systemd/tileclock.service: User=)
SERVICE_USER = "tileclock"


def _service_uid(user):
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def _write_error(folder, service_user):
    """Why the service could not make a file in `folder` (an OSError), or None if it could.

    Run by the service user (or where there is none, as on a laptop), it tries; run by anyone
    else, root above all, who writes where the service may not, it reads the folder's owner and
    mode against the service user's groups, and whether the filesystem is read-only."""
    uid = _service_uid(service_user)
    if uid is None or uid == os.geteuid():
        try:
            with tempfile.NamedTemporaryFile(dir=folder):
                pass
        except OSError as error:
            return error
        return None
    if os.statvfs(folder).f_flag & os.ST_RDONLY:
        return OSError(errno.EROFS, os.strerror(errno.EROFS))
    entry = pwd.getpwnam(service_user)
    groups = {entry.pw_gid} | {group.gr_gid for group in grp.getgrall() if service_user in group.gr_mem}
    info = os.stat(folder)
    if uid == 0:
        return None
    if info.st_uid == uid:
        needed = stat.S_IWUSR | stat.S_IXUSR
    elif info.st_gid in groups:
        needed = stat.S_IWGRP | stat.S_IXGRP
    else:
        needed = stat.S_IWOTH | stat.S_IXOTH
    if info.st_mode & needed != needed:
        return OSError(errno.EACCES, f"{os.strerror(errno.EACCES)} for {service_user}")
    return None


def check_state_dir(path, service_user=SERVICE_USER):
    """The state directory and the journal in it: can the clock (as `service_user`) write there, is the card read-only
    or full, has the journal kept damaged bytes aside. The clock runs on whatever this finds (it
    keeps records in memory and shows DISK FAULT): this says what to fix."""
    if os.path.exists(path) and not os.path.isdir(path):
        return [
            Check(
                FAIL,
                "state directory",
                f"{path} is a file, not a folder",
                "the journal needs a folder there: move the file away, or give the folder with --state-dir",
            )
        ]
    if not os.path.isdir(path):
        return [
            Check(
                WARN,
                "state directory",
                f"{path} does not exist yet",
                "systemd creates it when the service first starts",
            )
        ]
    journal = os.path.join(path, "journal")
    where = journal if os.path.isdir(journal) else path
    error = _write_error(where, service_user)
    if error is not None:
        return [Check(FAIL, "state directory", f"{where}: {error.strerror}", _disk_fix(path, error))]
    who = f" by {service_user}" if _service_uid(service_user) not in (None, os.geteuid()) else ""
    checks = [Check(OK, "state directory", f"{where} is writable{who}")]
    space = os.statvfs(path)
    free_mb = space.f_bavail * space.f_frsize // (1024 * 1024)
    if free_mb < 64:
        checks.append(
            Check(
                WARN,
                "free space",
                f"{free_mb} MB free on the card holding {path}",
                "the clock prunes the oldest games it has sent to the director first; "
                "collect or export the games, or lower journal.keep_mb",
            )
        )
    damaged = os.path.join(journal, "damaged")
    kept = sorted(os.listdir(damaged)) if os.path.isdir(damaged) else []
    if kept:
        checks.append(
            Check(
                WARN,
                "journal",
                f"{len(kept)} damaged file(s) kept in {damaged}",
                "the clock kept every good record; copy these to the director if a game "
                "is in doubt (they are never deleted), and check the card",
            )
        )
    return checks


def _disk_fix(path, error):
    if error.errno == errno.EROFS:
        return (
            "the card is read-only (the kernel found errors on it, or it is worn out): "
            "check it (fsck) and replace it soon; the clock keeps records in memory meanwhile"
        )
    if error.errno == errno.ENOSPC:
        return "the card is full: collect or export the games, then free space"
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"the journal lives here: sudo chown -R tileclock:tileclock {path}"
    return "the card fails to write: check it (fsck, dmesg) and replace it"


def check_service():
    state = ask(["systemctl", "is-active", "tileclock.service"])
    if state is None:
        return Check(WARN, "service", "no systemctl here (not a systemd machine)", "")
    enabled = ask(["systemctl", "is-enabled", "tileclock.service"]) or "not installed"
    if state == "active":
        return Check(OK, "service", f"active, {enabled}")
    if enabled in ("not installed", "not-found"):
        return Check(WARN, "service", "not installed", "sudo systemd/install.sh (docs/build-guide.md)")
    return Check(
        WARN,
        "service",
        f"{state or 'unknown'}, {enabled}",
        "sudo systemctl enable --now tileclock; journalctl -u tileclock says why it stopped",
    )


#: a clock's wall clock further than this from the laptop's is said (a round's start: issue 30)
ROUND_START_MS = 10


#: on the tileclock image (hw/image), its own programs' folder: no systemd/install.sh on the card
IMAGE_DIR = "usr/lib/tileclock-image"


def check_wall_clock(hall=False, tracking=None, root="/"):
    """The wall clock: chrony's offset from the director's laptop where chrony runs (a round set
    for a time starts by it), else whether anything synchronises it. `hall`: the clock has a
    [hall] section, so a round may be started for a time of day on it. `root`: where to look
    for the image (its fix differs: the card has chrony, from its settings file)."""
    from ..timesync import tracking as chrony_tracking

    seen = (tracking or chrony_tracking)()
    if seen is not None:
        return _chrony_check(seen)
    if hall and os.path.isdir(os.path.join(root, IMAGE_DIR)):
        return Check(
            WARN,
            "wall clock",
            "no chrony answers: this clock's time of day does not follow the director's laptop",
            "a round set for a time may start early or late here: the image's chrony follows the "
            "settings file's time_server (else its hall), in /etc/tileclock/chrony.conf; "
            "`systemctl status chrony` says why it stopped, or boot with a settings file naming it",
        )
    if hall:
        return Check(
            WARN,
            "wall clock",
            "no chrony answers: this clock's time of day does not follow the director's laptop",
            "a round set for a time may start early or late here: sudo systemd/install.sh installs "
            'chrony with the [hall] section (docs/hall.md, "One time for the hall")',
        )
    synced = ask(["timedatectl", "show", "-p", "NTPSynchronized", "--value"])
    if synced is None and os.path.exists("/run/systemd/timesync/synchronized"):
        synced = "yes"
    if synced == "yes":
        return Check(OK, "wall clock", "synchronised")
    return Check(
        WARN,
        "wall clock",
        "not known to be synchronised",
        "game times do not depend on it (they use the monotonic clock); only file dates do. "
        "Connect to a network once, or fit an RTC",
    )


def _chrony_check(seen):
    offset_ms, error_ms = seen["offset_us"] / 1000, seen["error_us"] / 1000
    said = f"follows {seen['source'] or 'no server'} (chrony): {offset_ms:+.3f} ms (within {error_ms:.3f} ms)"
    if not seen["synced"]:
        return Check(
            WARN,
            "wall clock",
            f"chrony follows no server yet ({seen['source'] or 'none reachable'})",
            "a round set for a time may start early or late here: is the director's laptop serving "
            "the time (hall-setup's chrony-hall.conf) and reachable? `chronyc sources` says",
        )
    if abs(offset_ms) + error_ms > ROUND_START_MS:
        return Check(
            WARN,
            "wall clock",
            said,
            f"over {ROUND_START_MS} ms from the laptop: a round set for a time starts that far off here; "
            "give chrony a minute (`chronyc tracking`), or a wired link",
        )
    return Check(OK, "wall clock", said)


def check_hall_tls(config):
    """The uplink's TLS (docs/hall.md, "Encrypted on the Wi-Fi"): with a [hall] section and no
    `tls_ca`, this clock's password and the director's commands cross the Wi-Fi in the clear,
    which is said; a `tls_ca` that cannot be read as a CA certificate fails (the uplink would
    never connect). None without a [hall] section."""
    import ssl

    hall = config.hall
    if hall is None:
        return None
    where = f"{hall.broker}:{hall.port}"
    if not hall.tls_ca:
        return Check(
            WARN,
            "hall TLS",
            f"off: {where} in the clear: this clock's password and the director's commands can be "
            "read on the Wi-Fi",
            "put the hall's CA in [hall] tls_ca (hall_ca in the settings file: hall-setup's "
            'tileclock-ca.pem; docs/hall.md, "Encrypted on the Wi-Fi")',
        )
    try:
        ssl.create_default_context(cafile=hall.tls_ca)
    except (OSError, ssl.SSLError) as error:
        return Check(
            FAIL,
            "hall TLS",
            f"tls_ca {hall.tls_ca}: {getattr(error, 'strerror', None) or error}",
            "copy hall-setup's tileclock-ca.pem there (or hall_ca in the settings file)",
        )
    return Check(OK, "hall TLS", f"{where}, its certificate checked against {hall.tls_ca}")
