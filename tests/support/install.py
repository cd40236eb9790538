"""The installer's dry run into a folder, and a folder shaped like a fresh Pi OS card for it."""

import os
import subprocess

import pytest

#: the checkout: tests/support/ is two folders down
HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALL = os.path.join(HERE, "systemd", "install.sh")


def dry_run(root):
    return subprocess.run(
        ["bash", INSTALL, "--dry-run", str(root)], capture_output=True, text=True, check=True
    )


@pytest.fixture
def pi(tmp_path):
    """A folder shaped like a fresh Pi OS Bookworm card: boot config and a serial console."""
    boot = tmp_path / "boot" / "firmware"
    boot.mkdir(parents=True)
    (boot / "config.txt").write_text("[all]\ndtparam=audio=on\ndtparam=i2c_arm=off\n")
    (boot / "cmdline.txt").write_text("console=serial0,115200 console=tty1 root=PARTUUID=1 rootwait\n")
    return tmp_path
