"""The install, run as a dry run into a folder, and the systemd unit checked by systemd itself."""

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from support.install import (
    HERE,
    INSTALL,
    dry_run,
    pi,  # noqa: F401  (the fixture: a fresh Pi's folder)
)
from tileclock.device.config import load_config
from tileclock.device.config_schema import Config

PYPROJECT = Path(HERE) / "pyproject.toml"


def test_a_dry_run_writes_every_file_and_lists_every_command(pi):  # noqa: F811  (the fixtures imported from their module)
    dry_run(pi)
    config = (pi / "boot" / "firmware" / "config.txt").read_text().splitlines()
    assert "dtparam=i2c_arm=on" in config and "dtparam=i2c_arm=off" not in config
    assert "dtparam=i2c_arm_baudrate=400000" in config and "enable_uart=1" in config
    assert "dtparam=audio=on" in config  # the rest is left alone
    assert "console=serial0" not in (pi / "boot" / "firmware" / "cmdline.txt").read_text()
    commands = (pi / "commands.txt").read_text()
    assert "python3 -m venv --system-site-packages /opt/tileclock/venv" in commands
    assert "usermod -a -G gpio,i2c,spi,dialout,audio tileclock" in commands
    assert commands.strip().endswith("systemctl enable --now tileclock.service")
    assert os.readlink(pi / "usr" / "local" / "bin" / "tileclock") == "/opt/tileclock/venv/bin/tileclock"


def test_the_login_that_ran_sudo_may_read_the_games(pi):  # noqa: F811  (the fixtures imported from their module)
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


def test_the_config_holds_a_password_so_only_root_and_the_service_group_read_it(pi):  # noqa: F811  (the fixtures imported from their module)
    dry_run(pi)
    config = pi / "etc" / "tileclock" / "config.toml"
    assert config.stat().st_mode & 0o777 == 0o640
    commands = (pi / "commands.txt").read_text().splitlines()
    assert "chown root:tileclock /etc/tileclock/config.toml" in commands
    assert "chmod 0640 /etc/tileclock/config.toml" in commands  # an old 0644 install is tightened too


def fake_dpkg(tmp_path, arch):
    """`dpkg --print-architecture` answering `arch`, first on the PATH."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "dpkg").write_text(f"#!/bin/sh\necho {arch}\n")
    (folder / "dpkg").chmod(0o755)
    return dict(os.environ, PATH=f"{folder}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.parametrize("arch", ["armhf", "armel", "arm64"])
def test_pillow_and_cbor2_come_from_debian_where_they_have_no_wheel_and_are_never_built(pi, tmp_path, arch):  # noqa: F811  (the fixtures imported from their module)
    subprocess.run(["bash", INSTALL, "--dry-run", str(pi)], check=True, env=fake_dpkg(tmp_path, arch))
    commands = (pi / "commands.txt").read_text().splitlines()
    apt = next(line.split() for line in commands if "apt-get install" in line)
    if arch == "arm64":  # wheels for all of it: no compiler on the card
        assert "python3-pil" not in apt and "gcc" not in apt
    else:
        assert {"python3-pil", "python3-cbor2"} <= set(apt)
    assert any("pip install --upgrade --only-binary pillow,cbor2 " in line for line in commands)


def test_plain_debian_gets_the_groups_and_the_device_rules_pi_os_has(pi):  # noqa: F811  (the fixtures imported from their module)
    dry_run(pi)
    commands = (pi / "commands.txt").read_text()
    assert "groupadd --force --system gpio" in commands
    rules = (pi / "etc" / "udev" / "rules.d" / "60-tileclock-devices.rules").read_text()
    assert 'KERNEL=="gpiochip*", GROUP="gpio"' in rules and 'SUBSYSTEM=="i2c-dev", GROUP="i2c"' in rules


def test_the_pin_libraries_install_on_every_pi_and_nowhere_else():
    """The markers compare whole machine names (`in '...'` was a substring test: true for `arm`)."""
    requirements = [
        Requirement(line) for line in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    ]
    gpiod = next(r for r in requirements if r.name == "gpiod")
    cbor2 = next(r for r in requirements if r.name == "cbor2")
    for machine, on_a_pi, thirty_two in [
        ("aarch64", True, False),
        ("armv7l", True, True),
        ("armv6l", True, True),
        ("arm", False, False),
        ("v7", False, False),
        ("x86_64", False, False),
    ]:
        where = {"platform_machine": machine, "sys_platform": "linux"}
        assert gpiod.marker.evaluate(where) is on_a_pi, machine
        assert cbor2.marker.evaluate(where) is thirty_two, machine
    assert not gpiod.marker.evaluate({"platform_machine": "aarch64", "sys_platform": "darwin"})
    assert all(r.name not in ("lgpio", "RPi.GPIO") for r in requirements)  # extras: gpiod does without


def test_the_config_it_writes_is_valid_and_is_the_defaults(pi):  # noqa: F811  (the fixtures imported from their module)
    dry_run(pi)
    assert load_config(str(pi / "etc" / "tileclock" / "config.toml")) == Config()


def test_running_it_again_keeps_the_config_and_adds_no_line_twice(pi):  # noqa: F811  (the fixtures imported from their module)
    dry_run(pi)
    config = pi / "etc" / "tileclock" / "config.toml"
    config.write_text('[clock]\nboard = "7"\n')
    result = dry_run(pi)
    assert "kept as it is" in result.stdout
    assert config.read_text() == '[clock]\nboard = "7"\n'
    lines = (pi / "boot" / "firmware" / "config.txt").read_text().splitlines()
    assert lines.count("enable_uart=1") == 1 and lines.count("dtparam=i2c_arm_baudrate=400000") == 1


def test_network_sockets_are_allowed_only_when_the_hall_is_configured(pi):  # noqa: F811  (the fixtures imported from their module)
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


def test_the_installer_gives_a_hall_clock_the_hall_s_ca_and_says_so_without_it(pi, tmp_path):  # noqa: F811  (the fixtures imported from their module)
    from tileclock.director.hall.tls import make_tls

    dry_run(pi)
    config = pi / "etc" / "tileclock" / "config.toml"
    config.write_text(config.read_text() + '\n[hall]\nbroker = "192.168.4.1"\npassword = "x"\n')
    assert "NO TLS" in dry_run(pi).stdout
    ca = make_tls(tmp_path / "hall")["tileclock-ca.pem"]
    environ = {**os.environ, "TILECLOCK_HALL_CA": str(ca)}
    for _ in range(2):  # again: tls_ca is not added twice
        done = subprocess.run(
            ["bash", INSTALL, "--dry-run", str(pi)], capture_output=True, text=True, check=True, env=environ
        )
        assert "TLS to the broker" in done.stdout
    assert (pi / "etc" / "tileclock" / "hall-ca.pem").read_bytes() == ca.read_bytes()
    assert config.read_text().count("tls_ca") == 1
    hall = load_config(str(config)).hall
    assert (hall.tls_ca, hall.port) == ("/etc/tileclock/hall-ca.pem", 8883)
    environ["TILECLOCK_HALL_CA"] = str(config)  # not a certificate
    refused = subprocess.run(
        ["bash", INSTALL, "--dry-run", str(pi)], capture_output=True, text=True, env=environ
    )
    assert refused.returncode == 1 and "not a PEM certificate" in refused.stderr


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_verifies_the_unit(pi, tmp_path):  # noqa: F811  (the fixtures imported from their module)
    dry_run(pi)
    unit = (pi / "etc" / "systemd" / "system" / "tileclock.service").read_text()
    assert "Type=notify" in unit and "WatchdogSec=" in unit and "Restart=always" in unit
    assert (
        "StateDirectory=tileclock" in unit
        and "ProtectSystem=strict" in unit
        and "NoNewPrivileges=yes" in unit
    )
    # the service reads adjtimex (is the clock synchronised?): ProtectClock= would have seccomp kill
    # it for that, as the image's hall boot showed; no capability lets it set the clock
    settings = [line.strip() for line in unit.splitlines()]
    assert "ProtectClock=yes" not in settings and "CapabilityBoundingSet=" in settings
    assert "SystemCallFilter=adjtimex clock_adjtime clock_adjtime64" in settings
    # the venv is not built in a dry run: point ExecStart at a program that exists here, change nothing else
    checked = tmp_path / "check" / "tileclock.service"
    checked.parent.mkdir()
    checked.write_text(unit.replace("/opt/tileclock/venv/bin/tileclock", shutil.which("true")))
    result = subprocess.run(["systemd-analyze", "verify", str(checked)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
