"""The panels' scenes: each screen the clock draws, by name, as the golden PNGs show it."""

from copy import deepcopy
from dataclasses import replace

from conftest import tap
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S

S = NS_PER_S


def scenes():
    """Named views covering every state a player or director meets."""
    clock = GameClock(PROFILES["naspa"], times_s={"B": 30})
    clock.new_game(0)
    yield "ready", clock.view(0)
    tap(clock, "A", 0)  # B runs
    yield "running", clock.view(12 * S)
    # the Pi's supply sagged (device/power.py): the top corner says so, the time as it was
    yield "low_power", replace(clock.view(12 * S), faults=("power",))
    clock.advance(42 * S)
    tap(clock, "B", 42)  # B is 12 s over; A runs
    clock.advance(1625 * S)
    yield "overtime", clock.view(1625 * S)
    # the round's last minutes beside an opponent in overtime with a penalty: on B's panel with A's
    # pointer, on A's with its turn mark
    yield "round_overtime", replace(clock.view(1625 * S), round_left_s=300)
    tap(clock, "STOP", 1626)
    yield "paused", clock.view(1627 * S)
    clock.edge("STOP", True, 1630 * S)
    tap(clock, "B", 1631)
    clock.advance(1632 * S)  # B's release is taken once it has held open 5 ms
    yield "correction", clock.view(1632 * S)
    clock.edge("STOP", False, 1634 * S)
    clock.edge("STOP", True, 16345 * S // 10)
    clock.advance(1637 * S)
    yield "hint", clock.view(1637 * S)  # STOP held 2.5 s on a stopped clock: release asks to confirm
    clock.edge("STOP", False, 1638 * S)
    clock.advance(1639 * S)
    yield "confirm_end", clock.view(1639 * S)  # a STOP press within 5 s would end the game
    clock.advance(1644 * S)  # not confirmed: nothing changes
    yield "link_down", replace(clock.view(1644 * S), faults=("serial",))
    tap(clock, "A", 1645)
    clock.advance(3000 * S)
    yield "lost_on_time", clock.view(3000 * S)
    late = GameClock(PROFILES["naspa"])
    late.new_game(0)
    late.edge("STOP", True, 0)
    tap(late, "B", 0.9)  # STOP held, B tapped: A is late from B's press, 0.9 s
    late.edge("STOP", False, int(1.5 * S))
    late.advance(91 * S)
    yield "late_start", late.view(91 * S)
    school = GameClock(PROFILES["school"])
    school.new_game(0)
    school.edge("STOP", True, 0)
    tap(school, "A", 0.9)  # B is late from 0.9 s: its absence counts up, its 25:00 is untouched
    school.edge("STOP", False, int(1.5 * S))
    school.advance(391 * S)
    yield "absent", school.view(391 * S)
    round_ = GameClock(PROFILES["school"])
    round_.new_game(0)
    tap(round_, "A", 0)  # the round starts: B runs
    tap(round_, "B", 20 * 60)
    round_.advance(45 * 60 * S)
    yield "round_left", round_.view(45 * 60 * S)  # the round's last minutes show on the panels
    round_.advance(50 * 60 * S + S)
    yield "round_over", round_.view(50 * 60 * S + S)
    call = GameClock(PROFILES["naspa"])  # a call to the director (docs/player-guide.md)
    call.new_game(0)
    tap(call, "B", 0)
    tap(call, "STOP", 70)
    for t_s in (80, 80.5, 81):  # STOP tapped three times on the stopped clock
        tap(call, "STOP", t_s)
    call.advance(88 * S)
    yield "called", call.view(88 * S)
    call.answer_call(90 * S, call.play.calls.open.seq, "taken")
    yield "call_taken", call.view(90 * S)
    corrected = deepcopy(call)  # the same board, the director corrects B before closing the call
    call.answer_call(200 * S, call.play.calls.open.seq, "done")
    yield "call_done", call.view(200 * S)
    corrected.adjust(100 * S, "B", 60_000)
    yield "call_corrected", corrected.view(100 * S)  # the correction on top, the call on its line
    corrected.answer_call(200 * S, corrected.play.calls.open.seq, "done")
    yield "call_done_corrected", corrected.view(200 * S)  # CALL DONE never hides B +1:00
    school_call = GameClock(PROFILES["school"])  # the round's last minutes and an open call
    school_call.new_game(0)
    tap(school_call, "A", 0)
    tap(school_call, "STOP", 30 * 60)
    for t_s in (30 * 60 + 5, 30 * 60 + 5.5, 30 * 60 + 6):
        tap(school_call, "STOP", t_s)
    school_call.advance(45 * 60 * S)
    yield "call_round", school_call.view(45 * 60 * S)
    # the self-test (docs/player-guide.md): asked for A, then B with A answered, all lit, PASS, FAIL
    test = GameClock(PROFILES["naspa"])
    test.new_game(0)
    test.selftest(S)
    yield "selftest_a", test.view(2 * S)
    tap(test, "A", 3)
    test.advance(4 * S)
    yield "selftest_b", test.view(4 * S)
    tap(test, "B", 5)
    tap(test, "STOP", 6)
    test.advance(7 * S)
    yield "selftest_light", test.view(7 * S)
    test.advance(9 * S)
    yield "selftest_pass", test.view(9 * S)
    failed = GameClock(PROFILES["naspa"])
    failed.new_game(0)
    failed.selftest(S)
    failed.advance(11 * S + S // 2)  # A not pressed within 10 s
    tap(failed, "B", 12)
    failed.edge("STOP", True, 13 * S)
    failed.edge("STOP", False, 13 * S + S // 10)
    failed.edge("STOP", True, 13 * S + S // 10 + 2_000_000)  # a 2 ms pulse: chatter
    failed.edge("STOP", False, 13 * S + S // 5)
    failed.advance(20 * S)
    yield "selftest_fail", failed.view(20 * S)
    # the hall's score link held (the final screen says how to show it), then shown as a QR code
    link = ("HTTP://192.168.1.20:8080/S/12", ("7Q4K2M9X", "7Q4K2M9X"))  # (base, (token A, token B))
    yield "score_link", replace(round_.view(50 * 60 * S + S), score_link=link)
    yield "score_code", replace(round_.view(50 * 60 * S + S), score_link=link, code=("A", "B"))


SCENES = dict(scenes())
