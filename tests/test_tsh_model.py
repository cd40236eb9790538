"""The TSH model (tests/support/tsh_model.py) refuses what TSH's `aps` refuses: the queue's tests
are worth only as much as their double is strict. Each command is put through its queue as the
hall puts it, one file a command."""

import os

import pytest

from support.tsh_event import tsh_folder
from support.tsh_model import TshModel
from tileclock.director.event import tsh_queue

REFUSED = {
    "a bye whose second score is not 0": "aps 3 0 50 10 3 B",
    "a bye not of bye_spread": "aps 3 0 40 0 3 B",
    "a bye for a player who is paired": "aps 1 0 50 0 3 A",
    "a pairing that is not the round's": "aps 1 2 400 300 3 A",
    "a round that is not the player's next": "aps 1 2 400 300 2 A",
    "a player who is not in the division": "aps 9 1 400 300 3 A",
    "a division TSH does not have": "aps 1 4 400 300 3 C",
    "a score that is no number": "aps 1 4 4OO 300 3 A",
}


def _queued(tsh_dir, *commands):
    """TSH's model after `commands` went through its (new) queue, each in a file of its own."""
    folder = tsh_queue.queue_folder(tsh_dir)
    os.makedirs(folder)
    for number, command in enumerate(commands, start=1):
        tsh_queue.write_command(folder, number, command)
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    return tsh


@pytest.mark.parametrize("command", REFUSED.values(), ids=REFUSED.keys())
def test_what_tsh_refuses_the_model_refuses_and_its_t_file_keeps(tmp_path, command):
    tsh = _queued(tsh_folder(tmp_path / "tsh"), command)
    assert [text for text, _why in tsh.refused] == [command]
    assert tsh.scores("A", 3) == {} and tsh.scores("B", 3) == {} and tsh.provisional == {}


def test_a_game_is_final_only_when_its_mirror_agrees_and_anything_but_aps_is_ignored(tmp_path):
    tsh = _queued(tsh_folder(tmp_path / "one"), "aps 1 4 400 300 3 A", "a 3 A", "aps 4 1 300 401 3 A")
    assert tsh.refused == [] and tsh.scores("A", 3) == {}  # the two disagree: both provisional
    assert tsh.log == ["ignored 'a 3 A'"]
    tsh = _queued(
        tsh_folder(tmp_path / "two"), "aps 1 4 400 300 3 A", "aps 4 1 300 400 3 A", "aps 3 0 50 0 3 B"
    )
    assert tsh.scores("A", 3) == {1: 400, 4: 300} and tsh.scores("B", 3) == {3: 50}
