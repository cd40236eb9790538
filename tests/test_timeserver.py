"""One time for the hall: the laptop's and the clocks' chrony configs, as hall-setup and the
installer write them, checked by Debian's chronyd itself, and a clock following the laptop.

Debian's chrony must be installed for chronyd's own checks (`sudo apt-get install chrony`); they
are skipped without it. What only a real hall shows (the offsets chrony reaches over its Wi-Fi)
is said in docs/hall.md, "One time for the hall".
"""

import os
import shutil
import socket
import subprocess
import time

import pytest

from support.install import dry_run, pi  # noqa: F401  (the installer's dry run and its folder)
from tileclock.cli import main
from tileclock.device.timesync import parse_tracking
from tileclock.director.hall.timeserver import chronyd_verdict, clock_conf, hall_conf

CHRONYD = shutil.which("chronyd") or shutil.which("chronyd", path="/usr/sbin:/sbin")
needs_chronyd = pytest.mark.skipif(CHRONYD is None, reason="Debian's chrony is not installed")


def test_hall_setup_writes_the_laptops_and_the_clocks_time_configs(tmp_path, capsys):
    pytest.importorskip("paho")
    if shutil.which("mosquitto_passwd") is None:
        pytest.skip("mosquitto_passwd is not installed (hall-setup hashes the passwords with it)")
    assert main(["hall-setup", str(tmp_path / "hall"), "--clock", "c1", "--address", "192.168.4.1"]) == 0
    hall = (tmp_path / "hall" / "chrony-hall.conf").read_text()
    clock = (tmp_path / "hall" / "chrony-clock.conf").read_text()
    assert "\nlocal stratum 8\n" in hall and "\nallow all\n" in hall
    assert (
        "\nserver 192.168.4.1 iburst minpoll 4 maxpoll 6 prefer\n" in clock and "\nmakestep 0.1 -1\n" in clock
    )
    assert "chrony-hall.conf goes in this laptop's /etc/chrony/conf.d/" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["192.168.4.1 iburst\nserver evil", "", "a b", "x;y"])
def test_an_address_that_is_not_one_host_is_refused(bad):
    with pytest.raises(ValueError, match="address"):
        clock_conf(bad)
    with pytest.raises(ValueError, match="subnet"):
        hall_conf(bad or "\n")


@needs_chronyd
@pytest.mark.parametrize("text", [hall_conf(), hall_conf("192.168.4.0/24"), clock_conf("hall-laptop.local")])
def test_chronyd_takes_each_config_as_written(tmp_path, text):
    path = tmp_path / "tileclock.conf"
    path.write_text(text)
    assert chronyd_verdict(path) is None
    path.write_text(text + "\nallow_everything yes\n")  # and it is a real check: a bad line fails
    assert "Invalid directive" in chronyd_verdict(path)


def test_the_installer_makes_a_hall_clock_follow_its_broker(pi):  # noqa: F811  (pytest hands in the imported fixture)
    config = pi / "etc" / "tileclock" / "config.toml"
    dry_run(pi)
    assert not (pi / "etc" / "chrony" / "conf.d" / "tileclock.conf").exists()  # no hall: no time server
    config.write_text(config.read_text() + '\n[hall]\nbroker = "192.168.4.1"\npassword = "x"\n')
    out = dry_run(pi).stdout
    written = pi / "etc" / "chrony" / "conf.d" / "tileclock.conf"
    assert written.read_text() == clock_conf("192.168.4.1")  # the very file hall-setup writes
    assert "the wall clock follows 192.168.4.1" in out
    commands = (pi / "commands.txt").read_text()
    assert "apt-get install -y chrony" in commands and "systemctl restart chrony" in commands
    config.write_text('[clock]\nboard = "7"\n')  # the hall taken out again: so is its time server
    dry_run(pi)
    assert not written.exists()


def _free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@needs_chronyd
@pytest.mark.skipif(os.geteuid() != 0, reason="chronyd runs as root")
@pytest.mark.slow  # two real daemons syncing over UDP: seconds, and longer on a loaded machine
@pytest.mark.timeout(60)
def test_a_clock_follows_the_laptop_with_the_configs_as_written(tmp_path):
    """Both daemons on this machine (the laptop's on a spare port, neither allowed to set the
    clock, `-x`): the clock's chronyd, with the config the installer writes, follows the laptop's,
    with the config hall-setup writes, and `chronyc -c tracking` reads as doctor reads it."""
    folder = tmp_path / "time"
    folder.mkdir(mode=0o700)  # chronyd's command socket wants a folder only its user reaches
    port = _free_udp_port()
    local = f"\ncmdport 0\npidfile {folder}/%s.pid\nbindcmdaddress {folder}/%s.sock\n"
    (folder / "laptop.conf").write_text(
        hall_conf("127.0.0.1") + f"port {port}" + local % ("laptop", "laptop")
    )
    clock = clock_conf("127.0.0.1").replace("prefer", f"prefer port {port} minpoll -2 maxpoll -1")
    (folder / "clock.conf").write_text(clock + "port 0" + local % ("clock", "clock"))
    daemons = [
        subprocess.Popen([CHRONYD, "-d", "-x", "-u", "root", "-f", str(folder / f"{name}.conf")])
        for name in ("laptop", "clock")
    ]
    try:
        seen = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (seen and seen["synced"]):
            time.sleep(0.25)  # the daemons talk over real UDP: waited on, never assumed
            answer = subprocess.run(
                ["chronyc", "-h", str(folder / "clock.sock"), "-c", "tracking"],
                capture_output=True,
                text=True,
            )
            seen = parse_tracking(answer.stdout) if answer.returncode == 0 else None
        assert seen and seen["synced"] and seen["source"] == "127.0.0.1", seen
        assert abs(seen["offset_us"]) + seen["error_us"] < 10_000  # one machine: far inside 10 ms
    finally:
        for daemon in daemons:
            daemon.terminate()
            daemon.wait(10)
