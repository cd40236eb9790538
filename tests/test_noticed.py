"""Behaviour a mutation run found no test looking at (docs/testing.md, "Mutation testing").

Each test here failed under a mutant that the rest of the suite let through: a rule a director or a
player would notice if it broke.
"""

import os

import pytest

from conftest import tap
from support.journals import ended_games
from tileclock.device.config_schema import Config
from tileclock.device.journal.retention import Retention
from tileclock.director.follow.resend import FIRST_WAIT_S, MAX_WAIT_S, ResendPlan
from tileclock.director.follow.store import Rejected, clock_of
from tileclock.director.records.history import csv_safe
from tileclock.sim.simulator import Simulator
from tileclock.wire import segments
from tileclock.wire.protocol import unframe


def asked_at(plan, until_s, expected=5, gap=(5, 9)):
    """The seconds (every 0.5 s up to `until_s`) at which a clock that sends nothing more is asked again."""
    times = []
    for tenth in range(0, int(until_s * 2) + 1):
        now = tenth / 2
        if plan.due(expected, gap, now) is not None:
            times.append(now)
    return times


def test_a_silent_clock_is_asked_again_after_waits_that_double_up_to_thirty_seconds():
    times = asked_at(ResendPlan(), 150)
    waits = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert times[0] == 0 and FIRST_WAIT_S == 2.0 and MAX_WAIT_S == 30.0
    assert waits[:6] == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_records_arriving_meanwhile_put_the_wait_back_to_its_first_length():
    plan = ResendPlan()
    assert plan.due(5, (5, 9), 0) == (5, 9)
    assert plan.due(5, (5, 9), 2) == (5, 9)  # nothing came in 2 s: asked again, next wait 4 s
    assert plan.due(7, (7, 9), 3) is None  # 5 and 6 came: it is coming
    assert plan.due(7, (7, 9), 4.5) is None
    assert plan.due(7, (7, 9), 5) == (7, 9)  # 2 s since the last progress, not 4
    assert plan.asked_count == 3


@pytest.mark.parametrize("seq", [True, -1, 1.0, "3", None])
def test_a_record_whose_seq_is_not_a_whole_number_from_zero_is_refused(seq):
    with pytest.raises(Rejected, match="seq"):
        clock_of({"seq": seq, "clock": "t01"})


def test_seq_zero_is_a_record_like_any_other():
    assert clock_of({"seq": 0, "clock": "t01"}) == "t01"


@pytest.mark.parametrize(
    ("cell", "shown"),
    [
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-1:23", "-1:23"),  # a display time past zero stays as it is
        ("-12:05", "-12:05"),
        ("-1:2", "'-1:2"),
        ("-1:234", "'-1:234"),
        ("Ann", "Ann"),
    ],
)
def test_a_results_cell_a_spreadsheet_would_run_is_made_plain_text(cell, shown):
    assert csv_safe({"name": cell, "score": 412}) == {"name": shown, "score": 412}


def test_an_ack_of_a_game_s_last_record_lets_that_game_go(tmp_path):
    """The director holds a game once it holds its last record, not one record later."""
    folder = str(tmp_path / "journal")
    journal, firsts = ended_games(folder, 2, Retention())
    journal.mark_held(firsts[1] - 1)
    assert segments.read_mark(folder, segments.COLLECTED) == firsts[1] - 1
    journal.mark_held(firsts[2] - 2)  # one short of the second game's end: the mark stays
    assert segments.read_mark(folder, segments.COLLECTED) == firsts[1] - 1


def test_a_full_card_makes_room_by_pruning_a_game_the_director_holds_and_says_no_fault(tmp_path, monkeypatch):
    folder = str(tmp_path / "journal")
    journal, firsts = ended_games(folder, 2, Retention())
    journal.mark_held(firsts[2] - 1)  # the director holds both finished games
    sim = Simulator(Config(), journal=journal)
    real = os.fdatasync
    full = {"left": 1}

    def fdatasync(fd):
        if full["left"]:  # the card is full once; pruning a game frees room
            full["left"] -= 1
            raise OSError(28, "No space left on device")
        real(fd)

    monkeypatch.setattr("tileclock.device.journal.os.fdatasync", fdatasync)
    tap(sim, "B", 1)
    sent = [unframe(line) for line in sim.serial_lines()]
    sim.close()
    assert full["left"] == 0 and journal.failing is None
    assert [r for r in sent if r["ev"] == "fault"] == []  # nothing lost, nothing to say
    assert firsts[0] not in segments.list_segments(folder)  # the oldest held game made the room
