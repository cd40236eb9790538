"""What only a Pi can show, for `tileclock doctor`: the boot config, the serial console, the core clock
that the I2C clock follows, the Pi 5's UART, the config file's mode, and the clock's id.

Every path is read under `root` ("/" on the Pi), so tests and an image's chroot point it elsewhere.
The boot-config checks run wherever a boot config exists (a Pi OS card, or an image being built);
the model's own checks only where the device tree names a Raspberry Pi.
"""

import os
import re
import stat

from ..identity import ID_FILE, _read, board_serial, hardware_clock_id, is_label
from .checks import FAIL, OK, WARN, Check, ask

#: Bookworm keeps the boot config in /boot/firmware; older images in /boot
BOOT_DIRS = ("boot/firmware", "boot")
#: consoles on the header's UART (Pi 5: ttyAMA0 once uart0 is on) or the Pi 5's debug connector
SERIAL_CONSOLE = re.compile(r"\bconsole=(serial0|ttyAMA0|ttyS0|ttyAMA10)\b[^ ]*")
INSTALLER = "sudo systemd/install.sh sets it (then reboot)"


def boot_dir(root="/"):
    """The folder holding config.txt under `root`, or None (not a Pi OS card)."""
    for folder in BOOT_DIRS:
        if os.path.isfile(os.path.join(root, folder, "config.txt")):
            return os.path.join(root, folder)
    return None


def pi_model(root="/"):
    """The board's model from the device tree ("Raspberry Pi 3 Model B Rev 1.2"), or ""."""
    text = _read(os.path.join(root, "proc", "device-tree", "model")) or ""
    return text.rstrip("\x00") if text.startswith("Raspberry Pi") else ""


#: config.txt's model filters, from the device tree's model names (longest first)
MODEL_FILTERS = (
    ("Raspberry Pi 500", {"pi5", "pi500"}),
    ("Raspberry Pi 5", {"pi5"}),
    ("Raspberry Pi Compute Module 5", {"pi5", "cm5"}),
    ("Raspberry Pi 400", {"pi4", "pi400"}),
    ("Raspberry Pi 4", {"pi4"}),
    ("Raspberry Pi Compute Module 4", {"pi4", "cm4"}),
    ("Raspberry Pi 3 Model B Plus", {"pi3", "pi3+"}),
    ("Raspberry Pi 3", {"pi3"}),
    ("Raspberry Pi Zero 2", {"pi02"}),
    ("Raspberry Pi Zero W", {"pi0", "pi0w"}),
    ("Raspberry Pi Zero", {"pi0"}),
)


def boot_settings(path, model=""):
    """The `key=value` lines of a config.txt that apply to `model`: those before any `[filter]`
    section, those under `[all]`, and those under the model's own filters (`[pi5]` for a Pi 5)."""
    filters = next((found for name, found in MODEL_FILTERS if model.startswith(name)), set()) | {"all"}
    settings = {}
    section = "all"
    for raw in (_read(path) or "").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
        elif section not in filters or "=" not in line:
            continue
        elif line.startswith("dtparam="):
            for item in line[len("dtparam=") :].split(","):  # dtparam=i2c_arm=on,spi=on
                name, _, value = item.partition("=")
                settings[f"dtparam={name.strip()}"] = value.strip() or "on"
        else:
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip()
    return settings


#: I2C-1 (GPIO 2/3, the panels' bus) in the running device tree of a Pi 3, Zero 2 W or 4
I2C1_NODE = ("proc", "device-tree", "soc", "i2c@7e804000")


def _mainline_i2c(config, root):
    """Debian's kernel (`upstream_kernel=1`, the tileclock image): mainline device trees, where Pi
    OS's dtparam lines do nothing; the running tree says whether I2C-1 is on and at what speed (the
    image patches the trees on the card to 400 kHz: hw/image/root/usr/lib/tileclock-image/i2c-400khz)."""
    node = os.path.join(root, *I2C1_NODE)
    try:
        with open(os.path.join(node, "clock-frequency"), "rb") as file:
            hz = int.from_bytes(file.read(4), "big")
    except OSError:
        return [
            Check(OK, "boot config: I2C", "Debian's device trees (upstream_kernel=1): I2C-1 is on in them")
        ]
    status = (_read(os.path.join(node, "status")) or "okay").rstrip("\x00")
    checks = [
        Check(OK, "boot config: I2C", "I2C-1 on in the running device tree")
        if status == "okay"
        else Check(FAIL, "boot config: I2C", f"I2C-1 is {status!r} in the running device tree")
    ]
    if hz == config.i2c_hz:
        checks.append(
            Check(OK, "boot config: I2C speed", f"{hz} Hz in the device tree, as screens.i2c_hz says")
        )
    else:
        checks.append(
            Check(
                WARN,
                "boot config: I2C speed",
                f"the device tree sets {hz} Hz, the config's screens.i2c_hz {config.i2c_hz}",
                "on the tileclock image: sudo /usr/lib/tileclock-image/i2c-400khz, then reboot",
            )
        )
    return checks


def check_boot(config, root="/", model=None):
    """The boot config's I2C and UART lines, the serial console, and the Pi 5's UART."""
    folder = boot_dir(root)
    if folder is None:
        return []
    shown = "/" + os.path.relpath(folder, root)
    model = pi_model(root) if model is None else model
    settings = boot_settings(os.path.join(folder, "config.txt"), model)
    checks = []
    if settings.get("upstream_kernel") == "1":
        checks += _mainline_i2c(config, root)
    elif settings.get("dtparam=i2c_arm") == "on":
        checks.append(Check(OK, "boot config: I2C", "dtparam=i2c_arm=on"))
    else:
        checks.append(
            Check(FAIL, "boot config: I2C", f"no dtparam=i2c_arm=on in {shown}/config.txt", INSTALLER)
        )
    rate = settings.get("dtparam=i2c_arm_baudrate", "100000")
    if settings.get("upstream_kernel") == "1":
        pass  # the running device tree says it (above)
    elif rate == str(config.i2c_hz):
        checks.append(Check(OK, "boot config: I2C speed", f"{rate} Hz, as screens.i2c_hz says"))
    else:
        checks.append(
            Check(
                WARN,
                "boot config: I2C speed",
                f"the bus is set to {rate} Hz, the config's screens.i2c_hz to {config.i2c_hz}",
                f"dtparam=i2c_arm_baudrate={config.i2c_hz} in {shown}/config.txt ({INSTALLER})",
            )
        )
    checks += _panel_buses(config, settings, _read(os.path.join(folder, "config.txt")) or "", shown)
    if settings.get("enable_uart") == "1":
        checks.append(Check(OK, "boot config: UART", "enable_uart=1"))
    else:
        checks.append(
            Check(
                FAIL,
                "boot config: UART",
                "no enable_uart=1: the serial record has no UART (and on a Pi 3 or Zero 2 W the core "
                "clock, which the I2C clock follows, is not fixed)",
                INSTALLER,
            )
        )
    cmdline = _read(os.path.join(folder, "cmdline.txt")) or ""
    console = SERIAL_CONSOLE.search(cmdline)
    if console:
        checks.append(
            Check(
                FAIL,
                "serial console",
                f"{console.group(0)} in {shown}/cmdline.txt: a login console shares the record's line",
                f"take {console.group(0)} out of {shown}/cmdline.txt ({INSTALLER})",
            )
        )
    else:
        checks.append(Check(OK, "serial console", f"none on the UART ({shown}/cmdline.txt)"))
    if model.startswith("Raspberry Pi 5"):
        checks.append(_pi5_uart(config, settings, shown))
    return checks


def _panel_buses(config, settings, text, shown):
    """The boot config lines the panels' wiring needs: SPI on, or an i2c-gpio bus for a second bus."""
    checks = []
    if any(spec.interface == "spi" for spec in config.panels):
        if settings.get("dtparam=spi") == "on":
            checks.append(Check(OK, "boot config: SPI", "dtparam=spi=on (the panels' wiring is spi)"))
        else:
            checks.append(
                Check(FAIL, "boot config: SPI", f"no dtparam=spi=on in {shown}/config.txt", "add it, reboot")
            )
    for port in sorted({spec.port for spec in config.panels if spec.interface == "i2c" and spec.port != 1}):
        made = re.search(rf"^\s*dtoverlay=(i2c-gpio\b.*\bbus={port}\b|i2c{port}\b).*", text, re.MULTILINE)
        if made:  # the kernel's bit-banged bus, or a Pi 4's or 5's hardware one
            checks.append(Check(OK, f"boot config: I2C bus {port}", made.group(0).strip()))
        else:
            checks.append(
                Check(
                    FAIL,
                    f"boot config: I2C bus {port}",
                    f"a panel is on bus {port}, and {shown}/config.txt makes no such bus",
                    f"add dtoverlay=i2c-gpio,bus={port},i2c_gpio_sda=23,i2c_gpio_scl=24,i2c_gpio_delay_us=1 "
                    f'(or on a Pi 4 or 5 dtoverlay=i2c{port},pins_4_5,baudrate=400000), reboot (hw/README.md, "Wiring the panels")',
                )
            )
    return checks


def _pi5_uart(config, settings, shown):
    # a Pi 5's /dev/serial0 is its debug connector (ttyAMA10); GPIO 14/15 is UART0, off by default
    problems = []
    if settings.get("dtparam=uart0") != "on":
        problems.append(f"no dtparam=uart0=on in {shown}/config.txt")
    if config.serial_port in ("/dev/serial0", "/dev/ttyAMA10"):
        problems.append(f'serial.port = "{config.serial_port}" is the debug connector, not GPIO 14/15')
    if not problems:
        return Check(OK, "Pi 5 UART", f"UART0 on GPIO 14/15 as {config.serial_port}")
    return Check(
        FAIL,
        "Pi 5 UART",
        "; ".join(problems),
        'dtparam=uart0=on in the boot config and serial.port = "/dev/ttyAMA0" (systemd/install.sh '
        "sets both on a Pi 5), then reboot",
    )


def check_core_clock(ask=ask):
    """Whether the VPU core clock is fixed: the I2C clock is divided from it, so where it scales the
    panels' bus runs slower than set (400 kHz measured at 250 kHz on a Pi 3B). Asked of the firmware
    (vcgencmd); None where there is no vcgencmd (not Pi OS)."""
    answer = ask(["vcgencmd", "get_config", "int"])
    if answer is None:
        return None
    values = dict(re.findall(r"^(\w+)=(-?\d+)", answer, re.MULTILINE))
    top, low = values.get("core_freq"), values.get("core_freq_min")
    if top and low == top:
        return Check(OK, "core clock", f"fixed at {top} MHz: the I2C clock runs as set")
    return Check(
        WARN,
        "core clock",
        f"scales between {low or '?'} and {top or '?'} MHz, and the I2C clock with it: the panels' bus "
        "runs slower than set when the Pi idles",
        f"core_freq_min={top or 'core_freq'} in the boot config (enable_uart=1 does it on a Pi 3 and "
        "Zero 2 W), then reboot",
    )


def check_config_mode(path, config):
    """The config holds the hall's password: it must not be readable by every user."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    secret = config.hall is not None and bool(config.hall.password)
    if mode & stat.S_IWOTH or (secret and mode & stat.S_IROTH):
        what = "written" if mode & stat.S_IWOTH else "read"
        return Check(
            WARN,
            "config mode",
            f"{path} is {mode:04o}: every user may {'change it' if what == 'written' else 'read the hall password in it'}",
            f"sudo chown root:tileclock {path} && sudo chmod 0640 {path} (systemd/install.sh does)",
        )
    return Check(OK, "config mode", f"{mode:04o}")


def clock_id(config, state_dir, root="/"):
    """(the clock's id or None, where it comes from), as the service finds it (assembly.py)."""
    if config.clock_id:
        return config.clock_id, "set in the config (clock.id)"
    cpuinfo = os.path.join(root, "proc", "cpuinfo")
    # Pi OS shows the serial in cpuinfo, Debian's kernel (the image) in the device tree
    dt_serial = os.path.join(root, "sys", "firmware", "devicetree", "base", "serial-number")
    found = hardware_clock_id(cpuinfo, os.path.join(root, "etc", "machine-id"), dt_serial)
    if found:
        serial = board_serial(cpuinfo, dt_serial)
        return found, "from this Pi's serial number" if serial else "from /etc/machine-id"
    kept = _read(os.path.join(state_dir, ID_FILE))
    if is_label(kept):
        return kept, f"kept in {state_dir}/{ID_FILE}"
    return None, ""


def check_clock_id(config, state_dir, root="/"):
    """The id `hall-setup --clock` needs, printed where the builder looks first."""
    found, source = clock_id(config, state_dir, root)
    if found is None:
        return Check(
            WARN,
            "clock id",
            "not made yet: the service makes one at its first start",
            "start the service, then run tileclock doctor again",
        )
    return Check(OK, "clock id", f"{found} ({source}): the director's hall-setup --clock {found}")
