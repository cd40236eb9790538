"""Reading a game back (replay, the hall's panels, the pictures) honours the director's `set`."""

import pytest

from tileclock.clock.core import GameClock
from tileclock.clock.history import last_game, view_at
from tileclock.clock.rules import profile
from tileclock.clock.timecode import NS_PER_S
from tileclock.wire.records import decode, encode


def test_starting_times_set_before_the_first_press_are_the_ones_replay_shows():
    clock = GameClock(profile("naspa"))
    made = clock.new_game(0, boot={"board": "1"})
    made += clock.set_scene(1 * NS_PER_S, times_s={"A": 5 * 60, "B": 5 * 60})
    made += clock.edge("B", True, 2 * NS_PER_S) + clock.edge("B", False, 2 * NS_PER_S + NS_PER_S // 10)
    made += clock.advance(62 * NS_PER_S) + clock.status(62 * NS_PER_S)
    records = [decode(encode(record)) for record in made]
    status = records[-1]
    view, _, _ = view_at(last_game(records), at_ms=62_000)
    assert (status["A"]["shown"], status["B"]["shown"]) == ("4:00", "5:00")
    assert (view.A.shown, view.B.shown) == ("4:00", "5:00")


def test_the_games_picture_starts_from_the_starting_times_the_director_set():
    plot = pytest.importorskip("tileclock.director.records.plot", reason="the director extra (matplotlib)")
    clock = GameClock(profile("naspa"))
    made = clock.new_game(0, boot={"board": "1"})
    made += clock.set_scene(1 * NS_PER_S, times_s={"A": 5 * 60, "B": 5 * 60})
    made += clock.edge("B", True, 2 * NS_PER_S) + clock.edge("B", False, 2 * NS_PER_S + NS_PER_S // 10)
    made += clock.advance(62 * NS_PER_S) + clock.status(62 * NS_PER_S)
    picture = plot.picture([decode(encode(record)) for record in made])
    assert picture.remaining["A"][-1] == (62_000, 240_000) and picture.remaining["B"][-1] == (62_000, 300_000)
