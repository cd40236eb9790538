"""`tileclock doctor`'s panel checks: the wiring the config names, and each panel on its bus.

An I2C panel is asked for one byte (a plain I2C read, as i2cdetect does), so a running clock's
screens are not disturbed; an SPI panel cannot be asked, so its device and the libraries luma
drives it with are checked.
"""

import errno
import os

from .checks import FAIL, OK, Check


def check_panels(config, smbus=None):
    """The wiring the config names, then each panel on its bus: an I2C panel asked for a byte, an
    SPI panel's device and the GPIO library luma drives its D/C and reset lines with."""
    where = ", ".join(
        f"{spec.faces} on /dev/i2c-{spec.port} at 0x{spec.address:02X}"
        if spec.interface == "i2c"
        else f"{spec.faces} on /dev/spidev{spec.port}.{spec.spi_device}"
        for spec in config.panels
    )
    checks = [Check(OK, "panel wiring", f'{config.wiring}: {where} (hw/README.md, "Wiring the panels")')]
    if any(spec.interface == "spi" for spec in config.panels):
        try:
            import spidev  # noqa: F401  (luma's SPI interface writes through it)

            checks.append(Check(OK, "panel SPI library", "spidev imports"))
        except ImportError as error:
            checks.append(
                Check(FAIL, "panel SPI library", f"spidev does not import ({error})", "pip install spidev")
            )
        try:
            import RPi.GPIO  # noqa: F401  (luma's SPI interface drives D/C and reset with it)

            checks.append(
                Check(OK, "panel D/C and reset lines", "RPi.GPIO imports (luma drives them with it)")
            )
        except (ImportError, RuntimeError) as error:
            checks.append(
                Check(
                    FAIL,
                    "panel D/C and reset lines",
                    f"luma's SPI interface drives them with RPi.GPIO, which does not import ({error})",
                    "install rpi-lgpio into the service's venv (RPi.GPIO's API on the kernel's GPIO "
                    "device: Pi 5 and Bookworm), or RPi.GPIO on older Pi OS",
                )
            )
    for spec in config.panels:
        what = f"panel {spec.faces}"
        if spec.interface == "spi":
            device = f"/dev/spidev{spec.port}.{spec.spi_device}"
            if os.path.exists(device):
                checks.append(Check(OK, what, f"{device} exists (an SPI panel cannot be asked; look at it)"))
            else:
                checks.append(
                    Check(
                        FAIL,
                        what,
                        f"{device} missing",
                        "enable SPI: dtparam=spi=on in the boot config, reboot",
                    )
                )
            continue
        checks.append(_probe_i2c(what, spec.port, spec.address, smbus))
    return checks


def _probe_i2c(what, port, address, smbus=None):
    where = f"0x{address:02X} on /dev/i2c-{port}"
    try:
        if smbus is None:
            from smbus2 import SMBus as smbus
        with smbus(port) as bus:
            bus.read_byte(address)
        return Check(OK, what, f"answers at {where}")
    except (FileNotFoundError, ImportError):
        if port != 1:  # a second bus: the kernel's i2c-gpio overlay makes it
            fix = (
                f"add dtoverlay=i2c-gpio,bus={port},i2c_gpio_sda=23,i2c_gpio_scl=24 to the boot config and "
                'reboot (hw/README.md, "Wiring the panels")'
            )
        else:
            fix = (
                "enable I2C: dtparam=i2c_arm=on in the boot config and i2c-dev in /etc/modules, then reboot "
                "(systemd/install.sh does both); off a Pi there is no I2C bus"
            )
        return Check(FAIL, what, f"/dev/i2c-{port} does not exist", fix)
    except PermissionError:
        return Check(FAIL, what, f"no permission for /dev/i2c-{port}", "add the user to the i2c group")
    except OSError as error:
        if error.errno in (errno.EREMOTEIO, errno.ENXIO, errno.EIO):
            return Check(
                FAIL,
                what,
                f"nothing answers at {where}",
                "check its four wires (hw/README.md) and its address jumper; i2cdetect -y 1 lists what answers",
            )
        return Check(FAIL, what, f"{where}: {error}", "check the wiring")
