"""A simulated cable, so a newcomer can collect from a simulated clock: docs/director-guide.md."""

import os
import subprocess
import sys

import serial

from tileclock.sim.cable import Cable
from tileclock.wire.protocol import unframe_any


def test_bytes_cross_the_cable_both_ways_and_it_leaves_nothing_behind(tmp_path):
    cable = Cable(str(tmp_path / "line"))
    clock = serial.Serial(cable.clock_end, timeout=2)
    director = serial.Serial(str(tmp_path / "line"), timeout=2)
    clock.write(b"a record\n")
    assert director.readline() == b"a record\n"
    director.write(b"status\n")
    assert clock.readline() == b"status\n"
    clock.close()
    director.close()
    cable.close()
    assert not os.path.lexists(tmp_path / "line")


def test_a_simulated_clock_on_a_line_sends_its_records_to_the_other_end(tmp_path):
    script = tmp_path / "presses.txt"
    script.write_text("0.2 press B\n")
    line = tmp_path / "line"
    command = [sys.executable, "-m", "tileclock", "run", "--simulate", "--line", str(line)]
    command += ["--state-dir", str(tmp_path / "state"), "--script", str(script)]
    clock = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        said = clock.stdout.readline()
        assert said.strip() == f"the clock's record line is at {line}: tileclock collect {line}"
        director = serial.Serial(str(line), timeout=10)
        events = []
        while "start" not in events:
            raw = director.readline()
            assert raw, f"no start record came on {line}; got {events}"
            events.append(unframe_any(raw.decode("ascii").strip())["ev"])
        assert events[:2] == ["boot", "new_game"]
        director.close()
    finally:
        clock.wait(timeout=30)
    assert clock.returncode == 0 and not os.path.lexists(line)
