"""`tileclock doctor`: plain findings and fixes, on a Pi or off one."""

import os
import pwd

import pytest

from support.cable import Plug
from support.doctor import FakeSMBus, by_what, fake_commands
from tileclock.cli import main
from tileclock.device import doctor
from tileclock.device.doctor import FAIL, OK, WARN, check_wall_clock, run_checks


@pytest.fixture(autouse=True)
def the_service_runs_as_whoever_runs_the_tests(monkeypatch):
    """The state directory is judged for the service's user: here, the tests' own, so a machine where
    the installer made a `tileclock` user (who may not write in root's tmp_path) gives the same findings.
    Judging for another user is tested in test_storage_faults.py."""
    monkeypatch.setattr(doctor, "SERVICE_USER", pwd.getpwuid(os.geteuid()).pw_name)


def test_off_a_pi_it_says_plainly_what_it_could_not_find(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text('[serial]\nport = "/dev/ttyNOPE"\n')
    assert main(["doctor", "--config", str(config), "--state-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  pin backend" in out and "off a Pi there are no GPIO pins" in out
    assert "FAIL  panel A: /dev/i2c-1 does not exist" in out and "dtparam=i2c_arm=on" in out
    assert "FAIL  serial port: /dev/ttyNOPE" in out
    assert "ok    state directory" in out
    assert out.strip().endswith("problem(s) found")


SERVICE_UP = 'case "$1" in is-active) echo active;; is-enabled) echo enabled;; esac'


def test_with_parts_that_answer_it_finds_the_one_that_does_not(tmp_path, monkeypatch):
    fake_commands(tmp_path / "bin", monkeypatch, timedatectl="echo yes", systemctl=SERVICE_UP)
    plug = Plug(str(tmp_path), "ttyCLOCK")
    config = tmp_path / "config.toml"
    config.write_text(f'[buttons]\nbackend = "mock"\n[serial]\nport = "{plug.path}"\n')
    (tmp_path / "proc").mkdir()  # the machine's own files (serial number, boot config) read under root
    (tmp_path / "proc" / "cpuinfo").write_text("Serial\t\t: 10000000a3b2c1d0\n")
    checks = by_what(run_checks(str(config), str(tmp_path), smbus=FakeSMBus, root=str(tmp_path)))
    plug.pull()
    assert checks["config"].status == OK and checks["pin backend"].status == OK
    assert "mock (set in the config" in checks["pin backend"].seen  # which backend, and why
    assert all(checks[f"button {b}"].status == OK for b in ("A", "B", "STOP"))
    assert checks["panel A"].status == OK and "0x3C" in checks["panel A"].seen
    assert checks["panel B"].status == FAIL and "nothing answers at 0x3D" in checks["panel B"].seen
    assert "address jumper" in checks["panel B"].fix
    assert checks["serial port"].status == OK
    assert checks["service"].seen == "active, enabled" and checks["wall clock"].status == OK
    assert [what for what, check in checks.items() if check.status != OK] == ["panel B"]


def test_a_wall_clock_not_known_to_be_synchronised_is_a_warning_that_says_games_do_not_depend_on_it(
    tmp_path, monkeypatch
):
    fake_commands(tmp_path / "bin", monkeypatch, timedatectl="echo no")
    check = check_wall_clock()
    assert check.status == WARN and "monotonic clock" in check.fix


def test_a_bad_config_is_the_first_and_only_finding(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[clock]\nrulez = 'naspa'\n")
    checks = run_checks(str(config), str(tmp_path))
    assert len(checks) == 1 and checks[0].status == FAIL and "clock.rulez" in checks[0].seen


def test_a_service_never_installed_is_told_to_run_the_installer(monkeypatch):
    """Enabling a unit that is not there cannot work: the fix is the installer (a newcomer's report)."""
    answers = {"is-active": "inactive", "is-enabled": "not-found"}
    monkeypatch.setattr(doctor.host, "ask", lambda command: answers[command[1]])
    check = doctor.check_service()
    assert check.seen == "not installed" and "systemd/install.sh" in check.fix
    answers["is-enabled"] = "enabled"  # installed, stopped: enable it, and see why it stopped
    assert "journalctl" in doctor.check_service().fix


def test_a_hall_clock_without_chrony_is_told_the_fix_of_where_it_runs_the_image_or_pi_os(tmp_path):
    # the image has no systemd/install.sh: its fix is its own chrony and the settings file
    pi_os = check_wall_clock(hall=True, tracking=lambda: None, root=str(tmp_path))
    assert pi_os.status == WARN and "systemd/install.sh" in pi_os.fix
    (tmp_path / "usr" / "lib" / "tileclock-image").mkdir(parents=True)
    card = check_wall_clock(hall=True, tracking=lambda: None, root=str(tmp_path))
    assert card.status == WARN and "install.sh" not in card.fix
    assert "time_server" in card.fix and "/etc/tileclock/chrony.conf" in card.fix


def test_speech_without_its_engine_or_a_sound_card_is_a_problem_only_when_a_side_hears(tmp_path):
    from dataclasses import replace

    from tileclock.clock.speech import SpeechSetting
    from tileclock.device.config_schema import Config
    from tileclock.device.doctor.speech import check_speech

    off, on = Config(), replace(Config(), speech=SpeechSetting(frozenset("B")))
    check = check_speech(on, str(tmp_path), missing=["espeak-ng"])
    assert (
        check.status == FAIL
        and "espeak-ng not installed" in check.seen
        and "apt-get install espeak-ng" in check.fix
    )
    check = check_speech(on, str(tmp_path), missing=[])  # no /proc/asound/cards under tmp_path
    assert check.status == FAIL and "no audio device" in check.seen and "USB sound" in check.fix
    assert check_speech(off, str(tmp_path), missing=["espeak-ng", "aplay"]).status == OK
    (tmp_path / "proc" / "asound").mkdir(parents=True)
    (tmp_path / "proc" / "asound" / "cards").write_text(
        " 0 [Headphones     ]: bcm2835_headpho - bcm2835 Headphones\n                      bcm2835 Headphones\n"
    )
    check = check_speech(on, str(tmp_path), missing=[])
    assert check.status == OK and "on for B" in check.seen and "Headphones" in check.seen
