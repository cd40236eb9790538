"""Scores into TSH's remote queue: `scores --tsh-dir`, checked against a model as strict as TSH.

Round 3 of the sample divisions (tests/support/tournament.py, the slips of tests/data/scores) is queued
into a copy of TSH's folder; `TshModel` (tests/support/tsh_model.py) reads the queue as TSH does and
rewrites its `.t` files; the scores are then read back from those files. The expected scores are
the ones worked out by hand in tests/test_scores.py.
"""

import errno
import io
import os
import shutil
import stat
from contextlib import redirect_stdout

import pytest

from support.tsh_event import ENTRIES, WANT_A, WANT_B, hall_folder, played, tsh_dir  # noqa: F401  (fixtures: pyproject.toml)
from support.tsh_model import TshModel
from tileclock.cli import main
from tileclock.director.event import tsh_queue


class Killed(BaseException):
    """The hall's process dying at a given point (nothing after it runs)."""


def _scores(*argv, code=0):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["scores", *argv]) == code
    return out.getvalue()


def _queue(played, tsh_dir, out, *more, code=0):
    return _scores(
        played,
        "--tsh-dir",
        tsh_dir,
        "--round",
        "3",
        "--entries",
        ENTRIES,
        "--out",
        str(out),
        *more,
        code=code,
    )


def test_a_dry_run_shows_the_aps_commands_and_queues_nothing(played, tsh_dir, tmp_path):
    printed = _queue(played, tsh_dir, tmp_path / "out")
    assert "would queue: aps 1 4 382 380 3 A" in printed
    assert "would queue: aps 4 1 380 382 3 A" in printed
    assert "would queue: aps 3 0 50 0 3 B" in printed  # the queue gives no bye by itself
    assert "pair 4 0 3 B" in printed and "pair 1 0 3 B" in printed  # the forfeit: the director's
    assert "give --queue" in printed
    assert not os.path.exists(os.path.join(tsh_dir, "remote_queue"))


def test_the_round_reaches_tsh_s_t_files_and_nothing_twice(played, tsh_dir, tmp_path):
    printed = _queue(played, tsh_dir, tmp_path / "out", "--queue")
    assert "queued 3/A/table 1" in printed
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == []
    assert tsh.scores("A", 3) == WANT_A and tsh.scores("B", 3) == WANT_B
    assert tsh.provisional == {}
    again = _queue(played, tsh_dir, tmp_path / "out", "--queue")  # TSH's files now have them
    assert "round 3 is already complete in TSH" in again
    assert "queue:" not in again and "\nqueued " not in again
    tsh.run_queue()
    assert tsh.refused == [] and len(tsh.ran) == 2 * 4 + 1  # four games, one bye


def _games(played, tsh_dir, tmp_path):
    """The round's Games, as `scores` makes them (through a dry run's own reading)."""
    captured = {}
    real = tsh_queue.queue_games

    def keep(tsh, records, games, **kw):
        captured["games"] = games
        return real(tsh, records, [], **kw)

    tsh_queue_games = pytest.MonkeyPatch()
    tsh_queue_games.setattr("tileclock.cli.scores.queue_games", keep)
    try:
        _queue(played, tsh_dir, tmp_path / "probe", "--queue")
    finally:
        tsh_queue_games.undo()
    return captured["games"]


def killed_at_second_advance(played, tsh_dir, tmp_path, monkeypatch):
    """The round's games queued by a hall killed as it advances the cursor for the second game
    (its files written): (games, records folder, the real `advance` to put back)."""
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    real = tsh_queue.advance
    calls = []

    def dies_second_time(fd, cursor):
        calls.append(cursor)
        if len(calls) == 2:
            raise Killed
        real(fd, cursor)

    monkeypatch.setattr(tsh_queue, "advance", dies_second_time)
    with pytest.raises(Killed):
        tsh_queue.queue_games(tsh_dir, records, games)
    return games, records, real


@pytest.mark.parametrize("tsh_looks_first", [True, False])
def test_killed_between_writing_n_txt_and_advancing_the_cursor(
    played, tsh_dir, tmp_path, monkeypatch, tsh_looks_first
):
    games, records, real = killed_at_second_advance(played, tsh_dir, tmp_path, monkeypatch)
    # the second game's 3.txt and 4.txt are written, the cursor still says 3
    with open(os.path.join(tsh_dir, "remote_queue", "_enqueue.txt"), encoding="ascii") as file:
        assert file.read() == "3\n"
    tsh = TshModel(tsh_dir)
    if tsh_looks_first:  # TSH reads by the files, not the cursor: it takes the second game too
        tsh.run_queue()
        assert len(tsh.ran) == 4 and tsh.refused == []
    monkeypatch.setattr(tsh_queue, "advance", real)
    outcome = tsh_queue.queue_games(tsh_dir, records, games)  # the restarted hall
    assert outcome.error == ""
    if tsh_looks_first:  # TSH's own cursor is past the second game's files: it has them
        assert outcome.already == [games[0].key, games[1].key]
    else:  # written again at 3 and 4, and counted this time
        assert outcome.already == [games[0].key] and games[1].key in outcome.queued
    tsh.run_queue()
    assert tsh.refused == [] and tsh.provisional == {}
    assert tsh.scores("A", 3) == WANT_A and tsh.scores("B", 3) == WANT_B
    assert sorted(tsh.ran) == sorted(c for g in games for c in g.commands)  # each once


def test_killed_between_a_game_s_two_files(played, tsh_dir, tmp_path, monkeypatch):
    """TSH runs the first of the game's pair alone (provisional); the restart's second makes it final."""
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    real = tsh_queue.write_command

    def dies_on_the_second(folder, number, command):
        if number == 2:
            raise Killed
        real(folder, number, command)

    monkeypatch.setattr(tsh_queue, "write_command", dies_on_the_second)
    with pytest.raises(Killed):
        tsh_queue.queue_games(tsh_dir, records, games)
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.ran == [games[0].commands[0]] and len(tsh.provisional) == 1
    monkeypatch.setattr(tsh_queue, "write_command", real)
    assert tsh_queue.queue_games(tsh_dir, records, games).error == ""
    tsh.run_queue()
    assert tsh.refused == [] and tsh.provisional == {}
    assert tsh.scores("A", 3) == WANT_A and tsh.scores("B", 3) == WANT_B
    # the first of the pair is sent again: the same provisional entry, which TSH takes in its place
    assert sorted(set(tsh.ran)) == sorted(c for g in games for c in g.commands)
    assert tsh.ran.count(games[0].commands[0]) == 2 and len(tsh.ran) == 10


def test_killed_after_the_cursor_moved_but_before_the_record(played, tsh_dir, tmp_path, monkeypatch):
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    real = tsh_queue.advance

    def advances_then_dies(fd, cursor):
        real(fd, cursor)
        raise Killed

    monkeypatch.setattr(tsh_queue, "advance", advances_then_dies)
    with pytest.raises(Killed):
        tsh_queue.queue_games(tsh_dir, records, games)
    tsh = TshModel(tsh_dir)
    tsh.run_queue()  # TSH read it before the restart (the next test: it had not)
    monkeypatch.setattr(tsh_queue, "advance", real)
    outcome = tsh_queue.queue_games(tsh_dir, records, games)
    assert games[0].key in outcome.already and games[0].key not in outcome.queued
    tsh.run_queue()
    assert tsh.refused == [] and sorted(tsh.ran) == sorted(c for g in games for c in g.commands)


def test_the_same_kill_with_tsh_not_yet_reading(played, tsh_dir, tmp_path, monkeypatch):
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    real = tsh_queue.advance

    def advances_then_dies(fd, cursor):
        real(fd, cursor)
        raise Killed

    monkeypatch.setattr(tsh_queue, "advance", advances_then_dies)
    with pytest.raises(Killed):
        tsh_queue.queue_games(tsh_dir, records, games)
    monkeypatch.setattr(tsh_queue, "advance", real)
    outcome = tsh_queue.queue_games(tsh_dir, records, games)  # files still there, cursor past them
    assert games[0].key in outcome.already
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and sorted(tsh.ran) == sorted(c for g in games for c in g.commands)


def test_killed_before_its_first_advance_leaves_a_cursor_tsh_s_own_senders_read(
    played, tsh_dir, tmp_path, monkeypatch
):
    """TSH's own CommandQueue, run by hand against this queue (its sender, `Enqueue`), dies on an
    `_enqueue.txt` with no line ("empty lock file"); a hall killed before its first advance left
    one so. It holds a cursor from the moment the hall has the lock."""
    games = _games(played, tsh_dir, tmp_path)

    def dies(fd, cursor):
        raise Killed

    monkeypatch.setattr(tsh_queue, "advance", dies)
    with pytest.raises(Killed):
        tsh_queue.queue_games(tsh_dir, str(tmp_path / "records"), games)
    with open(os.path.join(tsh_queue.queue_folder(tsh_dir), "_enqueue.txt"), encoding="ascii") as file:
        assert file.read() == "1\n"


def test_a_lock_tsh_holds_is_waited_for_never_broken(played, tsh_dir, tmp_path):
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    tsh = TshModel(tsh_dir)
    naps = []
    with tsh.holding():
        outcome = tsh_queue.queue_games(tsh_dir, records, games, tries=3, wait=0.5, sleep=naps.append)
    assert naps == [0.5, 0.5]
    assert "is locked" in outcome.error and "never broken" in outcome.error and outcome.queued == []
    held = tsh.holding()
    held.__enter__()
    # TSH lets go while the sender waits: it goes on, and has waited rather than broken in
    outcome = tsh_queue.queue_games(
        tsh_dir, records, games, tries=5, wait=0.1, sleep=lambda _s: held.__exit__(None, None, None)
    )
    assert outcome.error == "" and len(outcome.queued) == len(games) - 1  # all but the forfeit
    tsh.run_queue()
    assert tsh.scores("A", 3) == WANT_A


def test_a_full_disk_is_said_and_the_scores_queued_when_it_comes_back(played, tsh_dir, tmp_path, monkeypatch):
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    real = tsh_queue.replace_file

    def full(path, data, *a, **kw):
        if path.endswith(".txt"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data, *a, **kw)

    monkeypatch.setattr(tsh_queue, "replace_file", full)
    outcome = tsh_queue.queue_games(tsh_dir, records, games)
    assert "the disk is full" in outcome.error and "queued when it can be written again" in outcome.error
    assert outcome.queued == []
    monkeypatch.setattr(tsh_queue, "replace_file", real)
    outcome = tsh_queue.queue_games(tsh_dir, records, games)
    assert outcome.error == "" and len(outcome.queued) == len(games) - 1
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A and tsh.scores("B", 3) == WANT_B


def test_an_unwritable_queue_folder_is_a_clear_message_from_scores(played, tsh_dir, tmp_path):
    folder = os.path.join(tsh_dir, "remote_queue")
    os.makedirs(folder)
    os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("this user writes through modes (root)")
        printed = _queue(played, tsh_dir, tmp_path / "out", "--queue", code=1)
        assert "NOT QUEUED: could not write TSH's queue" in printed
        assert "may not write there" in printed
    finally:
        os.chmod(folder, stat.S_IRWXU)
    printed = _queue(played, tsh_dir, tmp_path / "out", "--queue")
    assert "queued 3/A/table 1" in printed


def test_a_fifo_nobody_reads_never_hangs_and_a_reader_is_woken(tsh_dir):
    folder = os.path.join(tsh_dir, "remote_queue")
    os.makedirs(folder)
    os.mkfifo(os.path.join(folder, "_fifo.txt"))
    assert tsh_queue.wake(folder) == ""  # no reader: skipped at once
    reader = os.open(os.path.join(folder, "_fifo.txt"), os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert tsh_queue.wake(folder) == "woke TSH through its fifo"
        assert os.read(reader, 10) == b"\n"
    finally:
        os.close(reader)


def test_a_score_changed_after_it_was_queued_is_not_queued_again(played, tsh_dir, tmp_path):
    games = _games(played, tsh_dir, tmp_path)
    records = str(tmp_path / "records")
    tsh_queue.queue_games(tsh_dir, records, games)
    changed = [tsh_queue.Game(games[0].key, ["aps 1 4 390 380 3 A", "aps 4 1 380 390 3 A"])]
    outcome = tsh_queue.queue_games(tsh_dir, records, changed)
    assert outcome.changed == [games[0].key] and outcome.queued == []


def _hall(played, tmp_path):
    """A hall's folder: the round's records, and its score book holding the slips as entries."""
    return hall_folder(played, tmp_path / "hall")


def test_the_hall_queues_each_settled_table_once_and_shows_it_in_tsh(played, tsh_dir, tmp_path):
    from tileclock.director.event.hall_queue import HallQueue

    records, book = _hall(played, tmp_path)
    said = []
    queue = HallQueue(tsh_dir, records, book, say=said.append)
    assert queue.step() == ""
    assert queue.state(3)["tables"]["table 1"]["tsh"] == "queued"
    # the hall's book keeps only entries of both scores: the absent player's seat is not known
    assert queue.state(3)["tables"]["table 4"]["tsh"] == "not queued"
    assert "which player sat at side A" in queue.state(3)["tables"]["table 4"]["tsh_why"]
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == []
    assert tsh.scores("A", 3) == WANT_A and tsh.scores("B", 3) == WANT_B
    queue.step()  # the .t files read back: TSH has them
    assert queue.state(3)["tables"]["table 5"]["tsh"] == "in TSH"
    ran = len(tsh.ran)
    HallQueue(tsh_dir, records, book, say=said.append).step()  # a restarted hall
    tsh.run_queue()
    assert len(tsh.ran) == ran and tsh.refused == [] and said == []


def test_the_hall_says_a_queue_it_cannot_write_once_and_queues_when_it_can(
    played, tsh_dir, tmp_path, monkeypatch
):
    from tileclock.director.event.hall_queue import HallQueue

    records, book = _hall(played, tmp_path)
    said = []
    real = tsh_queue.replace_file

    def full(path, data, *a, **kw):
        if path.endswith(".txt"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data, *a, **kw)

    monkeypatch.setattr(tsh_queue, "replace_file", full)
    queue = HallQueue(tsh_dir, records, book, say=said.append)
    queue.step()
    queue.step()
    assert len(said) == 1 and "the disk is full" in said[0]
    assert "the disk is full" in queue.state(3)["error"]
    monkeypatch.setattr(tsh_queue, "replace_file", real)
    queue.step()
    assert said[-1] == "TSH's queue: writing again"
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A


def test_hall_tsh_dir_opens_the_queue_and_the_scores_page_shows_it(played, tsh_dir, tmp_path):
    """`open_hall(tsh_dir=...)` starts the queue's passes and hands them to the page; the Scores
    page's round state carries each table's state in TSH."""
    import socket

    from tileclock.cli.hall import open_hall
    from tileclock.director.event.hall_queue import HallQueue
    from tileclock.director.pages.score_routes import _round_state

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # no broker: the feed keeps trying in the background
    records, _book = _hall(played, tmp_path)
    hall = open_hall("127.0.0.1", port, None, records, "127.0.0.1:0", tsh_dir=tsh_dir)
    try:
        assert isinstance(hall.tsh_queue, HallQueue) and hall.page.tsh_queue is hall.tsh_queue
        hall.tsh_queue.step()
        state = _round_state(hall.page, hall.scores, 3)
        shown = {t["table"]: t.get("tsh") for t in state["tables"]}
        assert shown["1"] == "queued" and state["tsh_error"] is None
        with open(os.path.join(records, "audit.log"), encoding="utf-8") as file:
            trail = file.read()
        assert '"tsh_queue"' in trail and "aps 1 4 382 380 3 A" in trail  # each game queued, on the trail
        from tileclock.director.hall.audit_read import read

        refused = []
        assert any(e["action"] == "tsh_queue" for e in read(records, refused)) and refused == []
    finally:
        hall.close()
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A


def test_a_score_tsh_never_took_reads_as_refused_after_two_minutes(played, tsh_dir, tmp_path):
    import json

    from tileclock.director.event.hall_queue import HallQueue

    records, book = _hall(played, tmp_path)
    queue = HallQueue(tsh_dir, records, book, say=lambda _text: None)
    queue.step()
    with open(os.path.join(tsh_dir, "a.t"), encoding="utf-8") as file:
        a_t = file.read()
    # TSH's director re-paired round 3 after the hall read it: TSH refuses table 1's score
    with open(os.path.join(tsh_dir, "a.t"), "w", encoding="utf-8") as file:
        file.write(a_t.replace("Anderson, Ann 1820 2 3 4;", "Anderson, Ann 1820 2 3 6;", 1))
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert any(text.startswith("aps 1 4 ") for text, _why in tsh.refused)
    path = os.path.join(records, "tsh-queue.json")
    with open(path, encoding="utf-8") as file:
        record = json.load(file)
    for game in record["games"].values():
        game["at_s"] -= 300
    with open(path, "w", encoding="utf-8") as file:
        json.dump(record, file)
    with open(os.path.join(tsh_dir, "a.t"), encoding="utf-8") as file:
        now = file.read()  # TSH's rewrite, with the other tables' scores in it
    with open(os.path.join(tsh_dir, "a.t"), "w", encoding="utf-8") as file:
        file.write(now.replace("Anderson, Ann 1820 2 3 6;", "Anderson, Ann 1820 2 3 4;", 1))  # paired back
    queue.step()
    table = queue.state(3)["tables"]["table 1"]
    assert table["tsh"] == "refused by TSH?" and "a pairing changed in TSH" in table["tsh_why"]
    assert queue.state(3)["tables"]["table 3"]["tsh"] == "in TSH"


def test_a_game_after_files_tsh_ran_uncounted_is_still_read(played, tsh_dir, tmp_path, monkeypatch):
    """Killed before counting the second game's files, which TSH then ran: the restart no longer
    queues that game (TSH's .t file has it), and the next game must not go below TSH's cursor."""
    games, records, real = killed_at_second_advance(played, tsh_dir, tmp_path, monkeypatch)
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    monkeypatch.setattr(tsh_queue, "advance", real)
    rest = [game for game in games if game.key != games[1].key]  # the second is in TSH now
    assert tsh_queue.queue_games(tsh_dir, records, rest).error == ""
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A and tsh.scores("B", 3) == WANT_B


def test_a_stale_pid_in_signal_txt_is_not_signalled(tsh_dir):
    """SIGUSR1 ends most programs: a pid TSH left behind, now another program's, is left alone."""
    import subprocess
    import sys

    folder = os.path.join(tsh_dir, "remote_queue")
    os.makedirs(folder)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with open(os.path.join(folder, "_signal.txt"), "w", encoding="ascii") as file:
            file.write(f"{other.pid}\n")
        assert tsh_queue.wake(folder) == ""
        assert other.poll() is None  # still running
    finally:
        other.kill()
        other.wait()


@pytest.mark.skipif(shutil.which("perl") is None, reason="no perl here")
def test_tsh_s_perl_is_woken_with_sigusr1(tsh_dir):
    import subprocess

    folder = os.path.join(tsh_dir, "remote_queue")
    os.makedirs(folder)
    script = '$SIG{USR1} = sub { print "woken\\n"; exit 0 }; $| = 1; print "ready\\n"; sleep 30; exit 1'
    # TSH as it runs: perl and its tsh.pl; another perl program, whose pid a TSH that has exited
    # may have left in _signal.txt, is never sent SIGUSR1 (it would end it)
    tsh_pl = os.path.join(tsh_dir, "tsh.pl")
    with open(tsh_pl, "w", encoding="ascii") as file:
        file.write(script + "\n")
    for command, woken in ((["perl", "-e", script], False), (["perl", tsh_pl], True)):
        tsh = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert tsh.stdout.readline() == "ready\n"
            with open(os.path.join(folder, "_signal.txt"), "w", encoding="ascii") as file:
                file.write(f"{tsh.pid}\n")
            said = tsh_queue.wake(folder)
            if woken:
                assert said == f"signalled TSH (pid {tsh.pid})"
                assert tsh.wait(timeout=10) == 0 and tsh.stdout.read() == "woken\n"
            else:
                assert "signalled" not in said and tsh.poll() is None  # still running
        finally:
            if tsh.poll() is None:
                tsh.kill()
                tsh.wait()


def test_the_hall_queues_scores_whatever_entry_mode_tsh_is_typed_in(played, tsh_dir, tmp_path):
    """`config entry = spread` is how the director types at `a`; `aps` takes scores all the same."""
    from tileclock.director.event.hall_queue import HallQueue

    with open(os.path.join(tsh_dir, "config.tsh"), "a", encoding="utf-8") as file:
        file.write("config entry = spread\n")
    records, book = _hall(played, tmp_path)
    HallQueue(tsh_dir, records, book, say=lambda _text: None).step()
    tsh = TshModel(tsh_dir)
    tsh.run_queue()
    assert tsh.refused == [] and tsh.scores("A", 3) == WANT_A
