"""A moved game on the hall's page and trail, with no broker (issue 40 point 4): the dead clock's
late presses (made before the move, heard only when it came back) are flagged once, on the trail
and both boards, and change no time; the dead clock's board shows its game moved, not its call."""

import time

import pytest

from support.moved_games import DEAD, SPARE, line, play
from tileclock.director.follow.store import RecordStore
from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.audit_read import read
from tileclock.director.hall.board import Boards
from tileclock.director.hall.spare import flag_late, flagged_before
from tileclock.director.records.history import iter_records


class Hall:
    """The hall's part that reads what comes in: the store, its boards, the trail, and the hall
    page's listener for a moved game's late records (`web.py`'s `_answered` calls `flag_late`)."""

    def __init__(self, folder):
        self.folder = folder
        self.store = RecordStore(str(folder))
        self.boards = Boards(self.store, lambda clock: None, time.time)
        self.audit = AuditLog(str(folder))
        self.flagged = flagged_before(str(folder))
        self.store.subscribe(self.boards.stored)
        self.store.subscribe(self.stored)

    def stored(self, clock, record, log):
        flag_late(self.audit, self, self.flagged, clock, record, log)

    def snapshot(self):
        return {"boards": self.boards.shown(time.time())}

    def board(self, clock):
        return next(b for b in self.snapshot()["boards"] if b["clock"] == clock)

    def close(self):
        self.store.close()


@pytest.fixture
def folder(tmp_path):
    return tmp_path


def heard(hall, records):
    for record in records:
        hall.store.add(record, line(record))
    hall.store.flush()


def late_lines(folder):
    return [e for e in read(str(folder)) if e["action"] == "late_records"]


def test_the_dead_clocks_late_presses_are_flagged_once_and_change_no_time(folder):
    game = play(late_presses=2, told=True)
    hall = Hall(folder)
    heard(hall, game.dead[: game.heard] + game.spare[:3])  # the spare took the game up
    spare_before, from_seq, pressed = hall.board(SPARE), game.takeover["from_seq"], game.late[-2]["seq"]
    assert spare_before["took_over"] == {"from": DEAD, "from_board": "12", "from_seq": from_seq, "late": None}
    heard(hall, game.late[:-1])  # the dead clock back: its presses made before the move, then ...
    assert not late_lines(folder)  # (more may follow: said once they end)
    heard(hall, game.late[-1:])  # ... its `moved`: the hall told it
    (flagged,) = late_lines(folder)
    assert (flagged["by"], flagged["clock"], flagged["board"]) == ("hall", DEAD, "12")
    assert flagged.get("command") is None  # nothing is sent: no time changes
    assert flagged["changed"] == {"game": 1, "to": SPARE, "seq": pressed, "A_ms": 7250, "B_ms": 12000}
    (notice,) = [text for _, text in hall.store.notices if "late records show" in text]
    said = "board 12: the dead clock's late records show A used 0:07 more and B used 0:12 more"
    assert notice.startswith(said + " before the move")
    assert f"clock {SPARE} does not know it" in notice
    # both boards say it; the correction is offered, never made: the spare's time is as it was
    late = {"seq": pressed, "A_ms": 7250, "B_ms": 12000, "words": "A used 0:07 more and B used 0:12 more"}
    assert hall.board(DEAD)["moved"] == {"to": SPARE, "to_board": "31", "from_seq": from_seq, "late": late}
    assert hall.board(SPARE)["took_over"]["late"] == late
    assert [hall.board(SPARE)[side] for side in "AB"] == [spare_before[side] for side in "AB"]
    assert not [r for r in iter_records(next(folder.glob("board-31/game-*.log"))) if r["ev"] == "adjust"]
    # the same records again (a resend), and a hall restarted on the folder: never a second line
    heard(hall, game.late)
    hall.close()
    again = Hall(folder)
    assert again.boards.board(DEAD).as_dict(time.time())["moved"]["late"] == late  # read back too
    assert again.flagged == {(DEAD, 1, pressed)}  # read back from the trail
    flag_late(again.audit, hall, again.flagged, DEAD, game.late[-1], hall.store.log_of(DEAD))
    assert len(late_lines(folder)) == 1
    again.close()


def test_late_records_that_come_out_of_order_are_flagged_once_they_are_all_on_file(folder):
    """The dead clock's `moved` arrives ahead of its late presses (a resend's order): held for the
    gap, it flags nothing until the presses fill it; then one line, with all of them."""
    game = play(late_presses=2, told=True)
    hall = Hall(folder)
    heard(hall, game.dead[: game.heard] + game.spare[:3])
    heard(hall, game.late[-1:] + game.late[:1])  # the `moved`, then the first press: still a gap
    assert not late_lines(folder)
    heard(hall, game.late[1:-1])  # the second press fills it
    (flagged,) = late_lines(folder)
    assert (flagged["changed"]["A_ms"], flagged["changed"]["B_ms"]) == (7250, 12000)
    hall.close()


def test_late_records_made_after_a_restart_or_adding_nothing_are_not_flagged(folder):
    game = play(told=True)  # the dead clock came back with nothing the hall had not heard
    hall = Hall(folder)
    heard(hall, game.dead[: game.heard] + game.spare + game.late)
    assert not late_lines(folder) and hall.board(DEAD)["moved"]["late"] is None
    assert not [text for _, text in hall.store.notices if "late records show" in text]
    hall.close()


def test_the_dead_clocks_board_shows_its_game_moved_and_its_call_on_the_spares_board(folder):
    game = play(call=True)
    hall = Hall(folder)
    heard(hall, game.dead[: game.heard])
    (call,) = [r for r in game.dead if r["ev"] == "call"]
    assert hall.board(DEAD)["call"]["seq"] == call["seq"] and hall.board(DEAD)["moved"] is None
    heard(hall, game.spare[:3])  # the spare's takeover: the call moved with the game
    dead = hall.board(DEAD)
    assert dead["call"] is None  # no banner left on the dead clock's board: it is answered on the spare's
    assert (dead["moved"]["to"], dead["moved"]["to_board"]) == (SPARE, "31")
    assert hall.board(SPARE)["call"]["seq"] == call["seq"]
    hall.close()
