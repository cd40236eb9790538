"""The install, run as a dry run into a folder, and the systemd unit checked by systemd itself."""

import os
import shutil
import subprocess

import pytest

from tileclock.device.config import Config, load_config

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def test_a_dry_run_writes_every_file_and_lists_every_command(pi):
    dry_run(pi)
    config = (pi / "boot" / "firmware" / "config.txt").read_text().splitlines()
    assert "dtparam=i2c_arm=on" in config and "dtparam=i2c_arm=off" not in config
    assert "dtparam=i2c_arm_baudrate=400000" in config and "enable_uart=1" in config
    assert "dtparam=audio=on" in config  # the rest is left alone
    assert "console=serial0" not in (pi / "boot" / "firmware" / "cmdline.txt").read_text()
    commands = (pi / "commands.txt").read_text()
    assert "python3 -m venv --system-site-packages /opt/tileclock/venv" in commands
    assert "usermod -a -G gpio,i2c,spi,dialout tileclock" in commands
    assert commands.strip().endswith("systemctl enable --now tileclock.service")
    assert os.readlink(pi / "usr" / "local" / "bin" / "tileclock") == "/opt/tileclock/venv/bin/tileclock"


def test_the_login_that_ran_sudo_may_read_the_games(pi):
    result = subprocess.run(
        ["bash", INSTALL, "--dry-run", str(pi)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, SUDO_USER="director"),
    )
    assert "usermod -a -G tileclock director" in (pi / "commands.txt").read_text()
    assert "director joins the group tileclock" in result.stdout
    unit = (pi / "etc" / "systemd" / "system" / "tileclock.service").read_text()
    assert "StateDirectoryMode=0750" in unit and "UMask=0027" in unit  # the group reads, nobody else


def test_the_config_it_writes_is_valid_and_is_the_defaults(pi):
    dry_run(pi)
    assert load_config(str(pi / "etc" / "tileclock" / "config.toml")) == Config()


def test_running_it_again_keeps_the_config_and_adds_no_line_twice(pi):
    dry_run(pi)
    config = pi / "etc" / "tileclock" / "config.toml"
    config.write_text('[clock]\nboard = "7"\n')
    result = dry_run(pi)
    assert "kept as it is" in result.stdout
    assert config.read_text() == '[clock]\nboard = "7"\n'
    lines = (pi / "boot" / "firmware" / "config.txt").read_text().splitlines()
    assert lines.count("enable_uart=1") == 1 and lines.count("dtparam=i2c_arm_baudrate=400000") == 1


def test_network_sockets_are_allowed_only_when_the_hall_is_configured(pi):
    dry_run(pi)
    unit = (pi / "etc" / "systemd" / "system" / "tileclock.service").read_text()
    assert "RestrictAddressFamilies=AF_UNIX\n" in unit
    drop_in = pi / "etc" / "systemd" / "system" / "tileclock.service.d" / "hall.conf"
    assert not drop_in.exists()
    config = pi / "etc" / "tileclock" / "config.toml"
    config.write_text(config.read_text() + '\n[hall]\nbroker = "192.168.4.1"\npassword = "x"\n')
    assert "may open network sockets" in dry_run(pi).stdout
    assert "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" in drop_in.read_text()
    config.write_text('[clock]\nboard = "7"\n')  # the hall taken out again: so is the network
    dry_run(pi)
    assert not drop_in.exists()


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_verifies_the_unit(pi, tmp_path):
    dry_run(pi)
    unit = (pi / "etc" / "systemd" / "system" / "tileclock.service").read_text()
    assert "Type=notify" in unit and "WatchdogSec=" in unit and "Restart=always" in unit
    assert (
        "StateDirectory=tileclock" in unit
        and "ProtectSystem=strict" in unit
        and "NoNewPrivileges=yes" in unit
    )
    # the venv is not built in a dry run: point ExecStart at a program that exists here, change nothing else
    checked = tmp_path / "check" / "tileclock.service"
    checked.parent.mkdir()
    checked.write_text(unit.replace("/opt/tileclock/venv/bin/tileclock", shutil.which("true")))
    result = subprocess.run(["systemd-analyze", "verify", str(checked)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
