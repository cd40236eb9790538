"""What `tileclock doctor`'s tests stand on: an I2C bus where one panel answers, the checks by what
they check, system commands faked on the PATH, and a Pi OS card as Raspberry Pi Imager writes it."""

import errno
import os


class FakeSMBus:
    """An I2C bus where only 0x3C answers."""

    def __init__(self, port):
        self.port = port

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read_byte(self, address):
        if address != 0x3C:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        return 0


def by_what(checks):
    return {check.what: check for check in checks}


def fake_commands(folder, monkeypatch, **scripts):
    """Put shell scripts named after system commands (`timedatectl`, `systemctl`) first on the PATH."""
    folder.mkdir(exist_ok=True)
    for name, body in scripts.items():
        path = folder / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


SERIAL = "Serial\t\t: 10000000a3b2c1d0\n"


def fresh_card(root, model="Raspberry Pi 3 Model B Rev 1.2"):
    """A Pi OS Bookworm card as Raspberry Pi Imager writes it, seen from the Pi running it."""
    boot = root / "boot" / "firmware"
    boot.mkdir(parents=True)
    (boot / "config.txt").write_text("dtparam=audio=on\n#dtparam=i2c_arm=on\n[cm4]\notg_mode=1\n[all]\n")
    (boot / "cmdline.txt").write_text("console=serial0,115200 console=tty1 root=PARTUUID=1 rootwait\n")
    (root / "proc" / "device-tree").mkdir(parents=True)
    (root / "proc" / "device-tree" / "model").write_text(model + "\x00")
    (root / "proc" / "cpuinfo").write_text(f"processor\t: 0\n{SERIAL}Model\t\t: {model}\n")
    return root
