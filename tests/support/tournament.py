"""A round of a tournament played on simulated clocks: round 3 of the two sample TSH divisions.

Each table's game is played through `tileclock sim --script` with the board named for its table,
and written where `tileclock collect` would put it (`board-N/game-SEQ.log`, the framed lines).
Every game ends with the two steps a director makes (hold STOP 2 s, release, press STOP).
"""

import fcntl
import io
import os
import shutil
import tempfile
from contextlib import redirect_stdout

from tileclock.cli import main

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")  # tests/data
TSH_FILES = [os.path.join(DATA, "tsh", "a.t"), os.path.join(DATA, "tsh", "b.t")]
PAIRINGS_CSV = os.path.join(DATA, "pairings", "round-3.csv")

END = "{t} hold STOP 2.5\n{t2} press STOP\n"

# table: (what happens, rules, script). Sides: A is whoever sat left; the first player's clock ran first.
ROUND_3 = {
    # Anderson (first, side A) goes 1:30 over: 20 points. Diaz (B) is well inside.
    "1": (
        "overtime penalty",
        "naspa",
        "0 press B\n26:30 press A\n30:00 press STOP\n" + END.format(t="30:10", t2="30:13.5"),
    ),
    # Fox (first) is side B: A's press starts B. Brown (A) gets +1:00? No: Fox (B) gets a minute back
    # at a stop; Brown's last turn is ended by Fox's out play, after which Brown's clock runs on
    # 1:29 and his penalty goes from 10 to 20 (NSA VII.J.2).
    "2": (
        "correction; out play that started the other clock",
        "naspa",
        "0 press A\n1:00 press B\n10:00 press STOP\n10:05 down STOP\n10:05.6 press B\n10:07 up STOP\n"
        "10:10 press B\n26:20 press A\n27:10 press B\n28:39 press STOP\n"
        + END.format(t="28:50", t2="28:53.5"),
    ),
    # Chen (first, A) uses 26:00 (10 points); Evans (B) passes 10 minutes of overtime: V.G.3 forfeit.
    "3": ("overtime limit forfeit", "naspa", "0 press B\n26:00 press A\n62:00 until\n"),
    # Jones and Garcia: side A never arrives (late start, forfeit at -0:01). Nobody moved first.
    "4": ("absence forfeit", "naspa", "0 down STOP\n0.6 press B\n1 up STOP\n26:00 until\n"),
    # School rules: Hill (A) is 6:30 late (two late steps: 20); Khan (B) moves first on arrival.
    "5": (
        "late penalty",
        "school",
        "0 down STOP\n0.6 press B\n1 up STOP\n6:30 press STOP\n6:40 press A\n15:00 press B\n"
        "20:00 press A\n21:00 press STOP\n" + END.format(t="21:10", t2="21:13.5"),
    ),
}


def play(folder, board, script, rules="naspa", game_seq_name=None):
    """Play `script` on a simulated clock named `board`; write its records as collect would. Returns the path."""
    config = os.path.join(folder, f"board-{board}.toml")
    with open(config, "w", encoding="utf-8") as file:
        file.write(f'[clock]\nboard = "{board}"\nrules = "{rules}"\n')
    script_path = os.path.join(folder, f"board-{board}.script")
    with open(script_path, "w", encoding="utf-8") as file:
        file.write(script)
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["sim", "--script", script_path, "--config", config]) == 0
    lines = [line for line in out.getvalue().splitlines() if '"ev":"status"' not in line]
    records_dir = os.path.join(folder, "records", f"board-{board}")
    os.makedirs(records_dir, exist_ok=True)
    path = os.path.join(records_dir, f"game-{game_seq_name or 1}.log")
    with open(path, "w", encoding="ascii") as file:
        file.write("\n".join(lines) + "\n")
    return path


def play_round(folder, tables=ROUND_3):
    """Play every table of `tables` into `folder`; returns its folder of records. Round 3 itself
    is played once a test run and copied (five games cost seconds of CPU, and seven test modules
    on each of four workers ask for it)."""
    if tables is not ROUND_3:
        return _play_all(folder, tables)
    shutil.copytree(_round_3_once(), folder, dirs_exist_ok=True)
    return os.path.join(folder, "records")


def _play_all(folder, tables):
    for table, (_what, rules, script) in tables.items():
        play(folder, table, script, rules)
    return os.path.join(folder, "records")


def run_folder():
    """This test run's folder beside the workers' (tests/conftest.py names the run, and removes
    the folder when it ends)."""
    run = os.environ.get("TILECLOCK_TEST_RUN") or f"pid-{os.getpid()}"
    return os.path.join(tempfile.gettempdir(), f"tileclock-tests-{run}")


def _round_3_once():
    """Round 3 played by whichever worker asks first, the others waiting on its lock."""
    cache = os.path.join(run_folder(), "round-3")
    if os.path.isdir(cache):
        return cache
    os.makedirs(run_folder(), exist_ok=True)
    with open(cache + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isdir(cache):
            staging = tempfile.mkdtemp(dir=run_folder())
            _play_all(staging, ROUND_3)
            os.rename(staging, cache)  # whole or not at all: a worker killed midway leaves no half
    return cache
