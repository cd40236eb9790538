"""What only a Pi can show, as `tileclock doctor` reads it: boot config, serial console, core clock, the
Pi 5's UART, the config's mode, the clock id; and the installer setting what doctor checks."""

import os
import pwd
import subprocess
import sys

import pytest

from support.doctor import FakeSMBus, by_what, fake_commands, fresh_card
from tileclock.device import doctor
from tileclock.device.config import load_config
from tileclock.device.config_schema import Config, HallConfig
from tileclock.device.doctor import FAIL, OK, WARN, run_checks
from tileclock.device.doctor.pi import boot_settings, check_boot, check_clock_id, check_config_mode
from tileclock.device.identity import hardware_clock_id

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTALL = os.path.join(HERE, "systemd", "install.sh")
CORE_FIXED = "core_freq=250\ncore_freq_min=250\narm_freq=1200\n"


def install_onto(root):
    subprocess.run(["bash", INSTALL, "--dry-run", str(root)], check=True, capture_output=True)
    return load_config(str(root / "etc" / "tileclock" / "config.toml"))


@pytest.fixture(autouse=True)
def the_service_runs_as_whoever_runs_the_tests(monkeypatch):
    monkeypatch.setattr(doctor, "SERVICE_USER", pwd.getpwuid(os.geteuid()).pw_name)


def test_a_fresh_card_fails_on_each_boot_line_and_the_installer_sets_every_one(tmp_path):
    card = fresh_card(tmp_path)
    checks = by_what(check_boot(Config(), str(card)))
    assert checks["boot config: I2C"].status == FAIL  # a commented line is not a setting
    assert checks["boot config: UART"].status == FAIL and "core clock" in checks["boot config: UART"].seen
    assert (
        checks["serial console"].status == FAIL and "console=serial0,115200" in checks["serial console"].seen
    )
    assert all("systemd/install.sh" in check.fix for check in checks.values() if check.status == FAIL)
    config = install_onto(card)
    after = check_boot(config, str(card))
    assert [(c.what, c.status) for c in after if c.status != OK] == []
    assert "Pi 5 UART" not in by_what(after)  # a Pi 3 has no such thing


def test_on_a_pi_5_serial0_is_the_debug_connector_and_the_installer_moves_the_record_to_uart0(tmp_path):
    card = fresh_card(tmp_path, model="Raspberry Pi 5 Model B Rev 1.0")
    check = by_what(check_boot(Config(), str(card)))["Pi 5 UART"]
    assert check.status == FAIL and "debug connector" in check.seen and "dtparam=uart0=on" in check.fix
    config = install_onto(card)
    assert config.serial_port == "/dev/ttyAMA0"
    assert by_what(check_boot(config, str(card)))["Pi 5 UART"].status == OK
    # the same config on a Pi 3: the [pi5] line applies to a Pi 5 only
    assert "dtparam=uart0" not in boot_settings(str(card / "boot" / "firmware" / "config.txt"))


def test_boot_lines_count_only_where_they_apply_to_every_board(tmp_path):
    path = tmp_path / "config.txt"
    path.write_text(
        "dtparam=i2c_arm=on,spi=on\n[pi4]\nenable_uart=1\n[all]\ndtparam=i2c_arm_baudrate=100000 # slow\n"
    )
    settings = boot_settings(str(path))
    assert settings["dtparam=i2c_arm"] == "on" and settings["dtparam=spi"] == "on"
    assert "enable_uart" not in settings and settings["dtparam=i2c_arm_baudrate"] == "100000"


def test_an_i2c_speed_other_than_the_config_s_is_a_warning(tmp_path):
    card = fresh_card(tmp_path)
    install_onto(card)
    config_txt = card / "boot" / "firmware" / "config.txt"
    config_txt.write_text(config_txt.read_text().replace("baudrate=400000", "baudrate=100000"))
    check = by_what(check_boot(Config(), str(card)))["boot config: I2C speed"]
    assert check.status == WARN and "100000 Hz" in check.seen and "i2c_arm_baudrate=400000" in check.fix


def test_a_core_clock_that_scales_is_named_with_what_it_does_to_the_panels_bus(tmp_path, monkeypatch):
    card = fresh_card(tmp_path)
    install_onto(card)
    config = card / "etc" / "tileclock" / "config.toml"
    fake_commands(tmp_path / "bin", monkeypatch, vcgencmd="echo core_freq=400; echo core_freq_min=250")
    checks = by_what(run_checks(str(config), str(tmp_path), smbus=FakeSMBus, root=str(card)))
    assert checks["core clock"].status == WARN and "I2C clock" in checks["core clock"].seen
    assert "core_freq_min=400" in checks["core clock"].fix
    fake_commands(tmp_path / "bin", monkeypatch, vcgencmd=f"printf '{CORE_FIXED}'")
    checks = by_what(run_checks(str(config), str(tmp_path), smbus=FakeSMBus, root=str(card)))
    assert checks["core clock"].status == OK and "250 MHz" in checks["core clock"].seen


def test_off_a_pi_there_is_no_core_clock_to_ask_and_no_boot_config_to_read(tmp_path):
    checks = by_what(run_checks(str(tmp_path / "none.toml"), str(tmp_path), root=str(tmp_path)))
    assert "core clock" not in checks and not any(what.startswith("boot config") for what in checks)


def test_doctor_prints_the_id_the_service_will_use_and_what_hall_setup_needs(tmp_path):
    card = fresh_card(tmp_path)
    expected = hardware_clock_id(str(card / "proc" / "cpuinfo"))
    check = check_clock_id(Config(), str(tmp_path / "state"), str(card))
    assert check.status == OK and check.seen.startswith(f"{expected} (from this Pi's serial number)")
    assert f"hall-setup --clock {expected}" in check.seen
    assert check_clock_id(Config(clock_id="club-07"), str(tmp_path), str(card)).seen.startswith(
        "club-07 (set"
    )
    bare = tmp_path / "bare"  # no serial number, no machine id: the service makes one at its start
    bare.mkdir()
    assert check_clock_id(Config(), str(bare), str(bare)).status == WARN
    (bare / "clock-id").write_text("5e1f00c0ffee\n")
    assert check_clock_id(Config(), str(bare), str(bare)).seen.startswith("5e1f00c0ffee (kept in")


def test_a_config_holding_the_hall_password_readable_by_everyone_is_a_warning(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("")
    with_password = Config(hall=HallConfig(broker="10.0.0.1", password="s3cret"))
    os.chmod(path, 0o644)
    check = check_config_mode(str(path), with_password)
    assert check.status == WARN and "0644" in check.seen and "chmod 0640" in check.fix
    assert "s3cret" not in check.seen + check.fix
    assert check_config_mode(str(path), Config()).status == OK  # nothing secret in it
    os.chmod(path, 0o640)
    assert check_config_mode(str(path), with_password).status == OK
    os.chmod(path, 0o646)  # anyone may change the clock's rules
    assert check_config_mode(str(path), Config()).status == WARN


def test_a_config_the_user_may_not_read_says_how_to_be_let_in(tmp_path):
    """0640 root:tileclock keeps the hall's password from other users: doctor run by one of them
    says so, and names the group (or sudo), not `edit the file`."""
    from support.service_user import as_service_user

    config = tmp_path / "config.toml"
    config.write_text('[hall]\nbroker = "10.0.0.1"\npassword = "s3cret"\n')
    os.chmod(config, 0)
    command = [
        sys.executable,
        "-m",
        "tileclock",
        "doctor",
        "--config",
        str(config),
        "--state-dir",
        str(tmp_path),
    ]
    done = subprocess.run(as_service_user(command), capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert (
        done.returncode == 1
        and lines[0].startswith("FAIL  config: cannot read config")
        and "Permission denied" in lines[0]
    )
    assert "tileclock group" in lines[1] and "s3cret" not in done.stdout
