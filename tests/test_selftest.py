"""The self-test before a round (issue 40; docs/rules.md#the-self-test): at the clock, STOP held,
both sides held together 3 s and all let go, on a fresh game only; the panels ask for A, B and
STOP, light up and say PASS or what failed; a `selftest` record says so. It never changes a game.

Each neighbouring gesture (CLOCK_RULES §5, §9, §10; clock/gestures.py) is played here beside it
and is shown not to be taken for it, nor it for them.
"""

import pytest

from conftest import events, tap
from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_S
from tileclock.wire.records import decode, encode

S = NS_PER_S


def at(t_s):
    return int(round(t_s * S))


def clock_at_zero():
    clock = GameClock(PROFILES["naspa"])
    clock.new_game(0)
    return clock


def edges(clock, *steps):
    """`(t_s, button, down)` steps, then the clock run on 1 s past the last; the records made."""
    made = []
    for t_s, button, down in steps:
        made += clock.edge(button, down, at(t_s))
    made += clock.advance(at(steps[-1][0] + 1))
    return [r.as_dict() for r in made]


def three_held(t_s=1.0, together_s=3.0, stop_lead_s=1.0):
    """STOP down, then both sides `stop_lead_s` later, held together `together_s`, all let go."""
    side_t = t_s + stop_lead_s
    up = side_t + together_s
    return [
        (t_s, "STOP", True),
        (side_t, "A", True),
        (side_t + 0.05, "B", True),
        (up + 0.05, "A", False),
        (up + 0.06, "B", False),
        (up + 0.5, "STOP", False),
    ]


def answer_all(t_s, buttons=("A", "B", "STOP")):
    steps = []
    for button in buttons:
        steps += [(t_s, button, True), (t_s + 0.15, button, False)]
        t_s += 1
    return steps


def test_the_gesture_starts_a_self_test_that_asks_each_button_and_passes():
    clock = clock_at_zero()
    made = edges(clock, *three_held())
    assert made == []  # the gesture itself makes no record
    assert clock.view(at(7)).selftest.asked == "A"
    seen = []
    for t_s, button, down in answer_all(8):
        clock.edge(button, down, at(t_s))
        clock.advance(at(t_s + 0.01))
        view = clock.view(at(t_s + 0.01)).selftest
        seen.append((view.phase, view.asked, view.answered))
    assert seen[:2] == [("ask", "A", ()), ("ask", "B", ("A",))]
    assert seen[-1] == ("light", None, ("A", "B", "STOP"))
    made = clock.advance(at(20))
    assert [decode(encode(r)) for r in made] == [r.as_dict() for r in made]  # the wire's own check
    (test,) = events([r.as_dict() for r in made], "selftest")
    assert test["result"] == "pass" and test["failed"] == [] and test["source"] == "buttons"
    assert test["buttons"]["A"] == {"answer_ms": 2500, "held_ms": 150, "chatter": 0}
    assert test["buttons"]["STOP"]["held_ms"] == 150
    assert test["state"] == "ready" and test["A"]["used_ms"] == 0 and test["B"]["used_ms"] == 0
    assert clock.view(at(20)).selftest.result == "pass"


def test_presses_while_it_asks_make_no_record_and_charge_no_time():
    clock = clock_at_zero()
    made = edges(clock, *three_held(), *answer_all(8))
    assert made == []  # no start, no ignored, no call: the presses were the test's
    assert clock.state == "ready" and clock.used_ns("A", at(11)) == 0 == clock.used_ns("B", at(11))


def test_a_dead_button_fails_after_its_time_limit_and_the_test_goes_on():
    clock = clock_at_zero()
    edges(clock, *three_held())
    # A never answers: after 10 s B is asked, and B and STOP answer
    made = edges(clock, *answer_all(17.5, ("B", "STOP")))
    made += [r.as_dict() for r in clock.advance(at(30))]
    (test,) = events(made, "selftest")
    assert test["result"] == "fail" and test["failed"] == ["A not pressed"]
    assert test["buttons"]["A"] == {"answer_ms": None, "held_ms": None, "chatter": 0}
    assert clock.view(at(30)).selftest.failed == ("A not pressed",)


def test_chatter_on_a_contact_fails_the_test():
    clock = clock_at_zero()
    edges(clock, *three_held())
    steps = [(8, "A", True), (8.1, "A", False), (8.102, "A", True), (8.2, "A", False)]  # a 2 ms pulse
    steps += answer_all(9, ("B", "STOP"))
    made = edges(clock, *steps) + [r.as_dict() for r in clock.advance(at(30))]
    (test,) = events(made, "selftest")
    assert test["result"] == "fail" and test["failed"] == ["A chatter"]
    assert test["buttons"]["A"]["chatter"] == 1 and test["buttons"]["B"]["chatter"] == 0


def test_a_game_after_a_self_test_is_the_game_it_would_have_been():
    def game(with_test):
        clock = clock_at_zero()
        if with_test:
            edges(clock, *three_held(), *answer_all(8))
            clock.advance(at(20))
        made = [r.as_dict() for r in tap(clock, "B", 30) + tap(clock, "A", 95) + tap(clock, "STOP", 100)]
        return [r for r in made if r["ev"] != "selftest"], clock.view(at(100))

    plain, plain_view = game(False)
    tested, tested_view = game(True)
    strip = lambda records: [{k: v for k, v in r.items() if k != "seq"} for r in records]  # noqa: E731  (a one-line helper, read where it is used)
    assert strip(tested) == strip(plain) and tested_view.A == plain_view.A and tested_view.B == plain_view.B


def test_the_first_press_of_the_game_clears_the_result_and_starts_it():
    clock = clock_at_zero()
    edges(clock, *three_held(), *answer_all(8))
    clock.advance(at(20))
    made = [r.as_dict() for r in tap(clock, "B", 30)]
    assert [r["ev"] for r in made] == ["start"] and clock.view(at(31)).selftest is None


def test_a_game_started_while_the_panels_light_cancels_the_test():
    clock = clock_at_zero()
    edges(clock, *three_held(), *answer_all(8))  # the light runs 10.15 s to 12.15 s
    made = [r.as_dict() for r in clock.late_start(at(11.5), "A")]
    assert [r["ev"] for r in made] == ["late_start", "selftest"]
    assert made[1]["result"] == "cancelled" and clock.view(at(12)).selftest is None


def test_the_first_press_of_a_game_while_the_panels_light_starts_it_and_cancels_the_test():
    clock = clock_at_zero()
    edges(clock, *three_held(), *answer_all(8))  # the light runs 10.15 s to 12.15 s
    made = [r.as_dict() for r in tap(clock, "B", 11.5)]
    assert [r["ev"] for r in made] == ["start", "selftest"] and made[1]["result"] == "cancelled"
    assert made[0]["run"] == "A" and made[0]["t_ms"] == 11_500  # the game's start, as ever


def test_a_self_test_from_the_hall_lights_dark_panels_and_its_presses_answer_it():
    clock = GameClock(PROFILES["naspa"], dark_after_ms=60_000)
    clock.new_game(0)
    assert clock.idle_ns(at(120)) == at(120)  # dark between rounds
    clock.selftest(at(120), source="hall")
    assert clock.idle_ns(at(121)) == at(1)  # lit by the test
    made = edges(clock, *answer_all(122)) + [r.as_dict() for r in clock.advance(at(140))]
    assert events(made, "selftest")[0]["result"] == "pass" and not events(made, "ignored")


def test_a_self_test_hold_as_long_as_a_stuck_button_is_a_setting_refused():
    from tileclock.clock.core import ButtonTiming

    assert ButtonTiming(selftest_hold_ms=10_000).conflict()[0] == "selftest_hold_ms"
    assert ButtonTiming().conflict() is None


def test_the_director_s_selftest_runs_only_on_a_fresh_game():
    clock = clock_at_zero()
    assert clock.selftest(at(1), by="desk") == []
    assert clock.view(at(1)).selftest.asked == "A"
    again = [r.as_dict() for r in clock.selftest(at(2))]
    assert again[0]["ev"] == "error" and "already running" in again[0]["detail"]
    edges(clock, *answer_all(3))
    (test,) = events([r.as_dict() for r in clock.advance(at(20))], "selftest")
    assert test["source"] == "serial" and test["by"] == "desk" and test["result"] == "pass"
    tap(clock, "B", 30)
    refused = [r.as_dict() for r in clock.selftest(at(40))]
    assert refused[0]["ev"] == "error" and "fresh game" in refused[0]["detail"]
    assert clock.view(at(40)).selftest is None


# --- the gestures beside it: none is taken for it, and it for none


def test_the_both_late_chord_is_still_both_late():
    clock = clock_at_zero()
    made = edges(clock, *three_held(together_s=0.3))
    assert [r["ev"] for r in made] == ["late_start"] and made[0]["player"] == "both"


def test_both_sides_held_just_under_3_s_are_both_late_not_a_self_test():
    clock = clock_at_zero()
    made = edges(clock, *three_held(together_s=2.9))
    assert [r["ev"] for r in made] == ["late_start"] and clock.view(at(10)).selftest is None


def test_the_three_held_on_a_stopped_game_is_no_self_test():
    clock = clock_at_zero()
    tap(clock, "B", 1)
    tap(clock, "STOP", 5)
    made = edges(clock, *three_held(t_s=10))
    assert [r["ev"] for r in made] == ["ignored"] and made[0]["reason"] == "both_sides"
    assert clock.view(at(20)).selftest is None


def test_the_three_held_on_an_ended_game_reopens_it_as_before():
    clock = clock_at_zero()
    tap(clock, "B", 1)
    tap(clock, "STOP", 5)
    edges(clock, (10, "STOP", True), (12.5, "STOP", False), (13, "STOP", True), (13.1, "STOP", False))
    assert clock.state == "ended"
    made = edges(clock, *three_held(t_s=20))
    assert [r["ev"] for r in made] == ["reopen"] and clock.view(at(30)).selftest is None


def test_one_side_held_3_s_under_stop_is_a_late_start():
    clock = clock_at_zero()
    made = edges(clock, (1, "STOP", True), (2, "A", True), (5.5, "A", False), (6, "STOP", False))
    assert [r["ev"] for r in made] == ["late_start"] and made[0]["player"] == "B"


def test_stop_held_alone_asks_to_confirm_the_end_not_a_self_test():
    clock = clock_at_zero()
    made = edges(clock, (1, "STOP", True), (6, "STOP", False))
    assert made == [] and clock.view(at(6.5)).hint == "confirm_end" and clock.view(at(6.5)).selftest is None


def test_three_stop_taps_call_the_director():
    clock = clock_at_zero()
    made = edges(clock, *[(t, "STOP", d) for t0 in (1, 1.5, 2) for t, d in ((t0, True), (t0 + 0.1, False))])
    assert [r["ev"] for r in made] == ["ignored", "ignored", "call"]


def test_both_sides_without_stop_start_the_game():
    clock = clock_at_zero()
    made = edges(clock, (1, "A", True), (1.05, "B", True), (4.5, "A", False), (4.5, "B", False))
    assert made[0]["ev"] == "start" and clock.view(at(6)).selftest is None


def test_stop_touched_just_before_the_sides_is_no_modifier():
    clock = clock_at_zero()
    made = edges(clock, *three_held(stop_lead_s=0.3))
    assert made[0]["ev"] == "start" and clock.view(at(8)).selftest is None


@pytest.mark.parametrize("held_s", [10.5])
def test_a_stop_held_so_long_it_is_stuck_makes_no_self_test(held_s):
    clock = clock_at_zero()
    steps = [(1, "STOP", True), (2, "A", True), (2.05, "B", True), (5.1, "A", False), (5.1, "B", False)]
    made = edges(clock, *steps, (5.1 + held_s, "STOP", False))
    assert [r["ev"] for r in made] == ["fault", "fault_cleared"] and clock.view(at(20)).selftest is None


def test_chatter_inside_the_sides_hold_neither_breaks_nor_shortens_the_gesture():
    clock = clock_at_zero()
    steps = three_held()
    steps.insert(3, (3.5, "A", False))  # a 2 ms open pulse on A halfway through the hold: chatter
    steps.insert(4, (3.502, "A", True))
    assert edges(clock, *steps) == [] and clock.view(at(7)).selftest.asked == "A"


def test_a_new_game_s_hold_opens_a_game_that_can_then_be_self_tested():
    clock = clock_at_zero()
    tap(clock, "B", 1)
    tap(clock, "STOP", 5)
    edges(clock, (10, "STOP", True), (12.5, "STOP", False), (13, "STOP", True), (13.1, "STOP", False))
    made = edges(clock, (20, "STOP", True), (23, "STOP", False))  # hold STOP on the ended game
    assert [r["ev"] for r in made] == ["new_game"] and clock.view(at(24)).selftest is None
    assert edges(clock, *three_held(t_s=30)) == [] and clock.view(at(37)).selftest.asked == "A"


def test_on_dark_panels_the_first_press_only_wakes_them_and_makes_no_self_test():
    clock = GameClock(PROFILES["naspa"], dark_after_ms=60_000)
    clock.new_game(0)
    edges(clock, *three_held(t_s=120))
    assert clock.view(at(130)).selftest is None  # STOP's press woke the panels: no modifier held
