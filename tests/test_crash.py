"""`tileclock run` killed with SIGKILL at random points, many times: no time and no record lost."""

import os
import random
import signal
import socket
import subprocess
import sys

import pytest

from support.cable import Plug
from tileclock.device.journal.reader import JournalReader
from tileclock.wire.protocol import unframe, with_crc

#: kills in `make test` (one of them just after a checkpoint), and in `make test-slow`; more on
#: demand: TILECLOCK_KILLS=100 make test-slow
KILLS = 5
MANY_KILLS = int(os.environ.get("TILECLOCK_KILLS", "24"))


def spawn(tmp_path, env, script=None):
    command = [
        sys.executable,
        "-m",
        "tileclock",
        "run",
        "--simulate",
        "--config",
        str(tmp_path / "config.toml"),
    ]
    command += ["--state-dir", str(tmp_path / "state")]
    if script:
        command += ["--script", str(script), "--stay"]
    return subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)


def check_exact(records):
    """At every record that starts or stops a clock, each side's used time is exactly what its runs add up to."""
    used = {"A": 0, "B": 0}
    run, since = None, None
    checked = 0
    for record in records:
        if record["ev"] == "new_game":
            used, run, since = {"A": 0, "B": 0}, None, None
            continue
        if "at_ns" not in record:
            continue
        at = record["at_ns"]
        for side in "AB":
            expected = used[side] + (at - since if run == side else 0)
            assert record[side]["used_ms"] == expected // 1_000_000, (record, expected)
        if run is not None:
            used[run] += at - since
        run, since = record["run"], at
        checked += 1
    return checked


@pytest.mark.parametrize("kills", [KILLS, pytest.param(MANY_KILLS, marks=pytest.mark.slow)])
def test_killed_at_random_points_the_clock_comes_back_exact(tmp_path, kills):
    rng = random.Random(20261121)
    plug = Plug(str(tmp_path), "ttyCLOCK")
    (tmp_path / "config.toml").write_text(f'[clock]\ncheckpoint_s = 1\n[serial]\nport = "{plug.path}"\n')
    script = tmp_path / "game.txt"
    script.write_text("0.1 press B\n0.5 press A\n0.9 press B\n1.3 press STOP\n1.7 press A\n")
    notify = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify)
    sock.settimeout(20)
    (tmp_path / "run").mkdir()  # systemd's RuntimeDirectory: lasts as long as the boot
    env = dict(os.environ, NOTIFY_SOCKET=notify, RUNTIME_DIRECTORY=str(tmp_path / "run"))
    try:
        for run in range(kills):
            process = spawn(tmp_path, env, script if run == 0 else None)
            while not sock.recv(256).startswith(b"READY=1"):
                pass
            if run == 0:  # let the scripted game play out: start, switches, a stop and a resume
                while "resume" not in [unframe(line)["ev"] for line in plug.read_lines(1, timeout=10)]:
                    pass
            # a random point, B's clock running throughout: now and then just after a checkpoint
            # (one a second), else after 1 to 4 records the collector's line asked for (`set`, each
            # answered at once)
            if run % 4 == 3:
                while unframe(plug.read_lines(1, timeout=5)[0])["ev"] != "checkpoint":
                    pass
            else:
                count = rng.randint(1, 4)
                for n in range(count):
                    plug.write(with_crc(f"set table={run}x{n}") + "\n")
                plug.read_lines(count, timeout=5)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        process = spawn(tmp_path, env)
        while not sock.recv(256).startswith(b"READY=1"):
            pass
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
        sock.close()
        plug.pull()
    records = JournalReader(str(tmp_path / "state" / "journal")).records()
    assert [r["seq"] for r in records] == list(range(len(records)))  # none lost, none skipped, none twice
    recovered = [r for r in records if r["ev"] == "recovered"]
    assert len(recovered) == kills and all(r["reason"] == "restart" for r in recovered)
    assert sum(r["ev"] == "new_game" for r in records) == 1  # one game, taken up again each time
    assert check_exact(records) >= kills + 5
    assert {r["ev"] for r in records} >= {"start", "switch", "pause", "resume", "checkpoint", "set"}
