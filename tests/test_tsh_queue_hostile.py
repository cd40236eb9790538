"""Hostile files in TSH's queue and the hall's record of it: each refused in words, or read as
TSH not yet reading, never a crash and never a game sent twice. Split from test_tsh_queue.py
(the same round 3, TSH folder and model), by what it holds.
"""

import os

import pytest

from support.tsh_event import hall_folder, played, tsh_dir  # noqa: F401  (fixtures: pyproject.toml)
from support.tsh_model import TshModel
from tileclock.director.event import tsh_queue


def _hall(played, tmp_path):
    return hall_folder(played, tmp_path / "hall")


@pytest.mark.parametrize(
    "text",
    [
        '{"games": {"3/a/table 1": "queued"}}',  # an entry of the wrong type
        '{"games": {"3/a/table 1": {"state": "queued", "cursors": ["3"]}}}',  # a cursor as text
        '{"games": {"3/a/table 1": {"state": "done"}}}',  # a state the hall never writes
        '{"games": [1, 2]}',
        '{"games": {"k": {"state": "queued", "commands": [[[[["aps"]]]]]}}}',  # nested too deep
        '{"games": {}, "pad": "' + "x" * (2 * 1024 * 1024) + '"}',  # huge
        "[]",
        "\xff\xfe not json",
    ],
)
def test_a_queue_record_tampered_with_is_refused_in_words_never_a_crash(tmp_path, text):
    """records/tsh-queue.json is the hall's own, in a folder anyone at the laptop may edit: a bad
    one is a QueueError naming it (the page and the console say so), never a TypeError that
    would end the queue's thread."""
    (tmp_path / tsh_queue.RECORD).write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(tsh_queue.QueueError, match="not a queue record"):
        tsh_queue.QueueRecord(str(tmp_path))


GAME = tsh_queue.Game("3/A/table 1", ["aps 1 2 382 346 3 A"], "table 1")
QUEUED = '{"state": "queued", "commands": ["aps 1 2 382 346 3 A"], "cursors": [1], "at_s": 5}'
HOSTILE_RECORDS = {
    # wrong types: each shape the hall's own reads (`state`, `age`, `_reached`) once tripped over
    "games a list": '{"games": [["3/A/table 1", "queued"]]}',
    "a game a number": '{"games": {"3/A/table 1": 1}}',
    "a state a list": QUEUED.join(['{"games": {"3/A/table 1": ', "}}"]).replace('"queued"', '["queued"]'),
    "an unknown state": QUEUED.join(['{"games": {"3/A/table 1": ', "}}"]).replace('"queued"', '"done"'),
    "at_s a word": QUEUED.join(['{"games": {"3/A/table 1": ', "}}"]).replace('"at_s": 5', '"at_s": "5"'),
    "cursors words": QUEUED.join(['{"games": {"3/A/table 1": ', "}}"]).replace("[1]", '["1"]'),
    "commands a word": QUEUED.join(['{"games": {"3/A/table 1": ', "}}"])
    .replace('["aps', '"aps')
    .replace('A"]', 'A"'),
    "an array": "[]",
    # huge
    "a long number": '{"games": {}, "n": ' + "9" * 5000 + "}",
    "too large": '{"games": {}, "x": "' + "x" * (3 * 1024 * 1024) + '"}',
    # nested
    "deep": "[" * 100_000 + "]" * 100_000,
    "a deep game": '{"games": {"3/A/table 1": {"state": {"a": {"b": {"c": "queued"}}}}}}',
}


@pytest.mark.parametrize("content", HOSTILE_RECORDS.values(), ids=HOSTILE_RECORDS.keys())
def test_a_queue_record_the_hall_did_not_write_is_refused_and_nothing_queued(tsh_dir, tmp_path, content):
    """A damaged tsh-queue.json crashed the queue (RecursionError, AttributeError, TypeError) or
    was half taken; it is now refused by the one decoder and its shape, and named."""
    records = tmp_path / "records"
    records.mkdir()
    (records / "tsh-queue.json").write_text(content, encoding="utf-8")
    outcome = tsh_queue.queue_games(tsh_dir, str(records), [GAME], tries=1, wait=0)
    assert "tsh-queue.json" in outcome.error and outcome.queued == []
    assert len(outcome.error) < 400 and "xxxxxxxx" not in outcome.error
    assert not os.path.exists(os.path.join(tsh_dir, "remote_queue", "1.txt"))


@pytest.mark.parametrize("cursor", ["²", "9" * 30, "[[[[1]]]]", "-3", "1.5", "0"])
def test_an_enqueue_cursor_that_is_none_is_refused_and_nothing_queued(tsh_dir, tmp_path, cursor):
    """`_enqueue.txt`'s "²" passed str.isdigit and crashed int(); 30 digits were taken as a cursor."""
    folder = tsh_queue.queue_folder(tsh_dir)
    os.makedirs(folder)
    with open(os.path.join(folder, "_enqueue.txt"), "w", encoding="utf-8") as file:
        file.write(cursor + "\n")
    outcome = tsh_queue.queue_games(tsh_dir, str(tmp_path / "records"), [GAME], tries=1, wait=0)
    assert "not a cursor" in outcome.error and outcome.queued == []
    assert sorted(os.listdir(folder)) == ["_enqueue.txt"]


@pytest.mark.parametrize("cursor", ["²", "9" * 60, "[[[[1]]]]", "-3"])
def test_a_dequeue_cursor_that_is_none_is_read_as_tsh_not_yet_reading(tsh_dir, tmp_path, cursor):
    folder = tsh_queue.queue_folder(tsh_dir)
    os.makedirs(folder)
    with open(os.path.join(folder, "_dequeue.txt"), "w", encoding="utf-8") as file:
        file.write(cursor + "\n")
    outcome = tsh_queue.queue_games(tsh_dir, str(tmp_path / "records"), [GAME], tries=1, wait=0)
    assert outcome.error == "" and outcome.queued == [GAME.key]
    assert os.path.exists(os.path.join(folder, "1.txt"))


@pytest.mark.parametrize("pid", ["²", "9" * 60, "[[[[4242]]]]", "-1", "4242.0", "0x10"])
def test_a_signal_pid_that_is_none_signals_nothing(tsh_dir, monkeypatch, pid):
    """Where /proc cannot say whether a pid is TSH's, a pid of 60 digits reached os.kill, which
    raised OverflowError (not an OSError) out of the queue."""
    folder = tsh_queue.queue_folder(tsh_dir)
    os.makedirs(folder)
    with open(os.path.join(folder, "_signal.txt"), "w", encoding="utf-8") as file:
        file.write(pid + "\n")
    monkeypatch.setattr(tsh_queue, "_may_be_tsh", lambda pid: True)  # not Linux: it may be
    killed = []
    monkeypatch.setattr(tsh_queue.os, "kill", lambda *args: killed.append(args))
    assert tsh_queue.wake(folder) == "" and killed == []


T_HOSTILE = {
    # wrong types: a .t that is no such file, or a player's scores that are no numbers
    "binary junk": b"\x00\xff" * 500,
    "scores as words": b"Anderson, Ann 1820 2 3 4; four hundred 388; board 1 1 1\n",
    # huge
    "too large": b"Anderson, Ann 1820 2 3 4; 420 388\n" * 100_000,
    "a long number": b"Anderson, Ann 1820 2 3 4; " + b"9" * 5000 + b" 388\n",
    # nested
    "brackets": b"Anderson, Ann 1820 " + b"[" * 50_000 + b"; 420 388\n",
}


@pytest.mark.parametrize("content", T_HOSTILE.values(), ids=T_HOSTILE.keys())
def test_a_t_read_back_for_the_queue_s_status_that_is_none_is_said_and_queues_nothing_twice(
    played, tsh_dir, tmp_path, content
):
    """The `.t` the hall reads back to show a table `in TSH`: damaged after the round was queued,
    each pass says so in words (or reads it as TSH not having it yet), never raises, and never
    sends a game TSH already has again."""
    from tileclock.director.event.hall_queue import HallQueue

    records, book = _hall(played, tmp_path)
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None)
    assert queue.step() == ""
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    ran = len(tsh.ran)
    with open(os.path.join(tsh_dir, "a.t"), "wb") as file:
        file.write(content)
    error = queue.step()
    assert "Traceback" not in error and len(error) < 2000 and "9999999999" not in error
    tsh.run_queue()
    assert len(tsh.ran) == ran  # nothing sent again


@pytest.mark.parametrize(
    "command",
    [
        "aps ² 4 382 380 3 A",  # a digit int() takes and is_count does not
        "aps 1 4 " + "9" * 5000 + " 380 3 A",  # past what int() reads
        "aps 1 4 382 380 999999999 A",  # a round past any player's list
        "aps 1 4 382 380 3 " + "Z" * 5000,  # a division TSH has not, huge
        "aps 1 4 [[[[ 380 3 A",
        "cus 3 A",  # not an aps at all
    ],
)
def test_a_queued_command_the_hall_did_not_write_is_read_back_without_a_crash(
    played, tsh_dir, tmp_path, command
):
    """The record's shape allows any text as a command; the hall reads its commands back to tell
    whether TSH has a game and why it may have refused it, which must never raise (the page and
    the queue's thread would stop) nor quote a huge command back."""
    import json

    from tileclock.director.event.hall_queue import HallQueue

    records, book = _hall(played, tmp_path)
    game = {"state": "queued", "commands": [command], "cursors": [1], "at_s": 5}  # long ago
    with open(os.path.join(records, tsh_queue.RECORD), "w", encoding="utf-8") as file:
        json.dump({"games": {"3/A/table 9": game}}, file)
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None)
    queue.step()
    table = queue.state(3)["tables"]["table 9"]
    assert table["tsh"] == "refused by TSH?" and len(table["tsh_why"]) < 400
