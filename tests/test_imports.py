"""The director's tools load none of the clock's hardware libraries (a laptop need not have them)."""

import os
import subprocess
import sys

HARDWARE = ("luma", "PIL", "gpiozero")

PROBE = """
import sys
from tileclock.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(%r))
print("loaded:", " ".join(loaded))
"""


def loaded_by(*argv):
    result = subprocess.run(
        [sys.executable, "-c", PROBE % (HARDWARE,), *argv], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1].split()[1:]


def test_collect_help_loads_no_hardware_library():
    assert loaded_by("collect", "--help") == []


def test_collect_itself_loads_no_hardware_library(tmp_path):
    leader, follower = os.openpty()  # a port that is there (collect refuses one that is not)
    try:
        assert (
            loaded_by("collect", os.ttyname(follower), "--out", str(tmp_path / "out"), "--idle-exit", "0")
            == []
        )
    finally:
        os.close(leader)
        os.close(follower)


def test_the_probe_sees_them_when_the_clock_runs(tmp_path):
    script = tmp_path / "game.txt"
    script.write_text("0 press B\n")
    assert loaded_by("sim", "--script", str(script)) == sorted(HARDWARE)
