"""The service: systemd's notify protocol on a real socket, and `tileclock run` as a real process."""

import os
import signal
import socket
import subprocess
import sys
from types import SimpleNamespace

import pytest

from support.cable import Plug
from tileclock.device.journal.reader import JournalReader
from tileclock.device.sdnotify import Notifier
from tileclock.device.service import Service
from tileclock.sim.script import PRESS_NS, parse_script
from tileclock.wire.protocol import unframe, unframe_any


@pytest.fixture
def notify_socket(tmp_path):
    path = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(10)
    yield path, sock
    sock.close()


def test_the_notifier_speaks_to_a_real_datagram_socket(notify_socket):
    path, sock = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "10000000"})
    assert notifier.watchdog_interval_ns == 5_000_000_000  # ping at half of WatchdogSec
    assert notifier.ready()
    assert sock.recv(256).decode().splitlines()[0] == "READY=1"
    assert notifier.watchdog()
    assert sock.recv(256) == b"WATCHDOG=1"


def test_the_notifier_reaches_an_abstract_socket():
    name = f"tileclock-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).stopping()
        assert sock.recv(64) == b"STOPPING=1"


def test_outside_systemd_the_notifier_does_nothing():
    notifier = Notifier({})
    assert not notifier.ready() and notifier.watchdog_interval_ns is None
    assert Notifier({"WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"}).watchdog_interval_ns is None


def test_the_service_starts_answers_pings_the_watchdog_and_stops_cleanly(tmp_path, notify_socket):
    path, sock = notify_socket
    plug = Plug(str(tmp_path), "ttyCLOCK")
    config = tmp_path / "config.toml"
    config.write_text(f'[clock]\nboard = "12"\n[serial]\nport = "{plug.path}"\n')
    env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="1000000", WATCHDOG_PID="")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tileclock",
            "run",
            "--simulate",
            "--config",
            str(config),
            "--state-dir",
            str(tmp_path),
        ],
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        assert sock.recv(256).decode().startswith("READY=1")
        boot, new_game = map(unframe, plug.read_lines(2))
        assert boot["ev"] == "boot" and boot["board"] == "12"
        assert new_game["ev"] == "new_game" and new_game["seq"] == 1
        assert sock.recv(256) == b"WATCHDOG=1"  # from the loop, after its health check
        plug.write("status\n")  # the reader thread wakes the loop, which answers
        status = unframe_any(plug.read_lines(1)[0])
        assert status["ev"] == "status" and status["last_seq"] == 1
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        messages = []
        while b"STOPPING=1" not in messages:
            messages.append(sock.recv(256))
    finally:
        if process.poll() is None:
            process.kill()
        plug.pull()
    journal = JournalReader(str(tmp_path / "journal")).records()
    assert [record["ev"] for record in journal] == ["boot", "new_game"]  # a status answer is not journaled


def test_off_a_pi_without_simulate_it_says_what_to_do(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tileclock", "run", "--state-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=dict(os.environ, GPIOZERO_PIN_FACTORY="lgpio"),
    )
    assert result.returncode == 1
    assert "cannot use the buttons" in result.stderr and "tileclock doctor" in result.stderr


def run_simulated(tmp_path, *options):
    return subprocess.Popen(
        [sys.executable, "-m", "tileclock", "run", "--simulate", "--state-dir", str(tmp_path), *options],
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_scripted_run_stops_when_its_script_ends_or_stays_when_asked(tmp_path):
    script = tmp_path / "game.txt"
    script.write_text("0.1 press B\n1.1 press A\n1.3 until\n")
    ended = run_simulated(tmp_path / "once", "--script", str(script))
    assert ended.wait(timeout=60) == 0  # a hang's limit, not a speed
    journal = JournalReader(str(tmp_path / "once" / "journal")).records()
    played = [record["ev"] for record in journal if record["ev"] != "fault"]  # no serial port here
    assert played == ["boot", "new_game", "start", "switch"]
    stays = run_simulated(tmp_path / "stays", "--script", str(script), "--stay")
    try:
        # it says when its script has ended, however late a loaded machine makes that: no timed wait
        said = next(line for line in stays.stderr if "the script ended" in line)
        assert "staying until stopped" in said and stays.poll() is None
        stays.send_signal(signal.SIGTERM)
        assert stays.wait(timeout=60) == 0
    finally:
        if stays.poll() is None:
            stays.kill()
    assert "needs --script" in run_simulated(tmp_path / "no", "--stay").communicate(timeout=60)[1]


class LateThread:
    """The script thread's clock: each wait lasts as long as asked, plus what `late_ns` says next
    (a loaded machine wakes a thread late); `set` is the service's stop."""

    def __init__(self, late_ns):
        self.now_ns, self.late_ns, self.stopped_at = 10**12, iter(late_ns), None

    def wait(self, timeout_s):
        self.now_ns += round(timeout_s * 10**9) + next(self.late_ns, 0)
        return False

    def set(self):
        self.stopped_at = self.now_ns


def test_a_script_thread_woken_late_keeps_each_press_whole_and_the_gaps_between():
    clock = LateThread([500_000_000, 0, 0, 2_000_000_000])  # late for B's press, then for A's release
    pressed = []
    service = Service.__new__(Service)  # the script thread alone: no parts
    service._stop = clock
    service.daemon = SimpleNamespace(inbox=SimpleNamespace(wake=lambda t_ns: None))
    service.running = SimpleNamespace(
        started_ns=clock.now_ns, press=lambda button, down: pressed.append((button, down, clock.now_ns))
    )
    service._play(
        parse_script("0.1 press B\n1.1 press A\n1.3 until\n"), stay=False, now_ns=lambda: clock.now_ns
    )
    (b, b_down, t0), (_, b_up, t1), (a, a_down, t2), (_, a_up, t3) = pressed
    assert (b, b_down, b_up, a, a_down, a_up) == ("B", True, False, "A", True, False)
    assert t1 - t0 == PRESS_NS  # not squeezed to nothing when the down came late
    assert t2 - t0 == 1_000_000_000  # the turn as long as the script says
    assert t3 - t2 == PRESS_NS + 2_000_000_000  # a release woken late is late, never early
    assert clock.stopped_at - t3 == 100_000_000  # and the end still after it
