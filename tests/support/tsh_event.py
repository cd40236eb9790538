"""Round 3 of the sample divisions as the TSH queue's tests take it: a copy of TSH's folder that
accepts remote commands, a hall's folder holding the round's records and slips as its score book,
and the scores TSH should end with (worked out by hand in tests/test_scores.py).
"""

import os
import shutil

import pytest

from support.tournament import DATA, TSH_FILES, play_round
from tileclock.director.event.entries import ScoreBook

ENTRIES = os.path.join(DATA, "scores", "round-3-slips.csv")
# by hand (tests/test_scores.py): table 4's forfeit is the director's; Ito's bye is queued
WANT_A = {1: 382, 4: 380, 6: 411, 2: 335, 3: 410, 5: 285}
WANT_B = {5: 372, 2: 346, 3: 50}


def tsh_folder(folder):
    """TSH's folder at `folder` (made): a.t, b.t and a config.tsh that accepts remote commands."""
    os.makedirs(folder)
    for path in TSH_FILES:
        shutil.copy(path, folder)
    with open(os.path.join(folder, "config.tsh"), "w", encoding="utf-8") as file:
        file.write("config accept_remote_commands = 1\ndivision A a.t\ndivision B b.t\n")
    return str(folder)


def hall_folder(played, folder):
    """A hall's folder at `folder`: the round's records (`played`), and its score book holding the
    slips as entries. Returns (the folder, its ScoreBook)."""
    records = str(folder)
    shutil.copytree(played, records)
    os.makedirs(os.path.join(records, "scores"))
    shutil.copy(ENTRIES, os.path.join(records, "scores", "round-3-entries.csv"))
    return records, ScoreBook(os.path.join(records, "scores"))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Round 3 played on the simulated clocks: its records' folder (once a module that imports it)."""
    return play_round(str(tmp_path_factory.mktemp("round3")))


@pytest.fixture
def tsh_dir(tmp_path):
    """A fresh copy of TSH's folder for the test (`tsh_folder`)."""
    return tsh_folder(tmp_path / "tsh")
