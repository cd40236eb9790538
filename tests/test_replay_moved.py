"""`tileclock replay` of a game a spare took over (issue 40 point 4), as a director runs it on the
hall's records folder: the spare's game file replays as one game with the dead clock's part
before it, and `--after-seq`, which names one clock's record, is refused there in words."""

import pytest

from support.command_line import run
from support.moved_games import DEAD, SPARE, file_it, play


@pytest.fixture
def folder(tmp_path):
    game = play()
    file_it(game, tmp_path).close()
    return game, tmp_path


def spares_file(folder):
    (path,) = folder.glob(f"board-31/game-*-{SPARE}.log")
    return str(path)


def test_the_spares_file_replays_the_whole_game_from_the_dead_clocks_first_press(folder):
    game, where = folder
    taken = game.takeover
    code, out, err = run(["replay", spares_file(where), "--at", "20"])  # in the dead clock's part
    assert (code, err) == (0, "")
    assert f"clock {DEAD}'s records from its game 1 to seq {taken['from_seq']}" in out
    assert f"after clock {DEAD}'s record 3 (switch at 12125 ms): running" in out
    assert "A:   24:53  penalty   0  used 7875 ms  running" in out  # A's clock ran from 0:12.125
    # just after the move: stopped where the dead clock's records end, its correction in place
    # (its seq, 6, is past the spare's record the instant follows: read by place, not by seq)
    code, out, err = run(["replay", spares_file(where), "--at", "1:10"])
    assert (code, err) == (0, "")
    assert f"after clock {SPARE}'s record 2 (takeover at 64875 ms): paused" in out
    for side in "AB":
        assert f"used {taken[side]['used_ms']} ms" in out
    assert "1:03.875 B +0:05 (hall, by director-1)" in out
    # past the end: the spare's end, B's 5 s on the spare added to the dead clock's time
    code, out, err = run(["replay", spares_file(where), "--at", "9:00"])
    assert code == 0 and "past the end of this game: it ended at 1:20.875" in out
    assert f"used {taken['B']['used_ms'] + 5000} ms" in out and "round over" in out


def test_after_seq_is_refused_on_a_moved_game_in_words_and_kept_on_one_clocks_file(folder):
    _, where = folder
    code, out, err = run(["replay", spares_file(where), "--after-seq", "3"])
    assert (code, out) == (2, "")
    assert "a moved game" in err and "a seq names one clock's record" in err and "--at" in err
    assert "Traceback" not in err
    (dead,) = where.glob(f"board-12/game-*-{DEAD}.log")  # the dead clock's part alone: by its seqs
    code, out, err = run(["replay", str(dead), "--after-seq", "3"])
    assert (code, err) == (0, "") and "after record 3 (switch at 12125 ms)" in out
    assert "moved game" not in out


def test_a_torn_dead_clocks_file_leaves_the_spares_part_replayed_alone(folder):
    _, where = folder
    (dead,) = where.glob(f"board-12/game-*-{DEAD}.log")
    with open(dead, "a", encoding="ascii") as file:
        file.write('{"seq": 9')  # a power cut mid-write
    code, out, err = run(["replay", spares_file(where), "--after-seq", "3"])
    assert (code, err) == (0, "") and "moved game" not in out
    assert "after record 3 (resume at 110000 ms)" in out
