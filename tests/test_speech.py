"""What the clock says to a blind player (clock/speech.py), against the records' state.

Rules: docs/player-guide.md#speech. Each phrase is read back into numbers by `heard` (the words a
listener or a recogniser gets) and checked against the record it came from.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import events, examples
from support.games import GAMES, play
from support.spoken import heard
from tileclock.clock import speech
from tileclock.clock.speech import SpeechSetting, Utterance, parse_sides, said
from tileclock.clock.timecode import format_clock


@given(st.integers(-5999, 5999), st.integers(0, 990))
def test_a_time_said_is_the_time_shown(shown_s, pen):
    text = speech.time_left(shown_s, pen)
    assert heard(text) == (shown_s, None if shown_s >= 0 else pen)
    assert text.replace(",", "").split() == text.replace(",", "").split()  # plain words, no digits
    assert not any(c.isdigit() for c in text)


def test_the_words_for_a_few_times():
    assert speech.time_left(750, 0) == "twelve minutes thirty left"
    assert speech.time_left(1490, 0) == "twenty four minutes fifty left"
    assert speech.time_left(300, 0) == "five minutes left"
    assert speech.time_left(61, 0) == "one minute one left"
    assert speech.time_left(45, 0) == "forty five seconds left"
    assert speech.time_left(0, 0) == "no time left"
    assert speech.time_left(-60, 10) == "one minute over, ten points"
    assert speech.penalty_step(-61, 20) == "one minute over, twenty points"
    assert speech.penalty_step(-1, 10) == "ten points"


def test_the_sides_setting_takes_a_b_both_or_none():
    assert parse_sides("AB") == parse_sides("BA") == {"A", "B"}
    assert parse_sides("") == frozenset() and SpeechSetting().sides == frozenset()
    for bad in ("C", "AA", "a", "A B", None):
        with pytest.raises(ValueError):
            parse_sides(bad)


def test_the_warning_falls_due_as_the_display_reaches_five_minutes_and_one():
    # 25:00 limit, 1,198.5 s used: 5:02 shown; 5:00 once 1,200 s are used, 1.5 s on
    assert speech.next_warning_ns(302, 1_198_500_000_000, 7_000_000_000) == 8_500_000_000
    assert speech.next_warning_ns(300, 1_200_000_000_000, 0) == 240_000_000_000  # then 1:00
    assert speech.next_warning_ns(60, 0, 0) is None
    assert speech.warning(5, "A", 300, {"A"}) == [Utterance(5, "A", "five minutes left")]
    assert speech.warning(5, "B", 300, {"A"}) == [] and speech.warning(5, "A", 301, {"A"}) == []


def _said(records, sides):
    return [u for r in records for u in said(r.as_dict(), sides)]


@settings(max_examples=examples(100), deadline=None)
@given(GAMES, st.sampled_from(["", "A", "B", "AB"]))
def test_every_phrase_says_the_state_of_the_record_it_comes_from(game, sides):
    """Over any game: each side hears only if its speech is on; a time said is the record's time and
    penalty for that side; the end is said once a game; the records are what they would be anyway."""
    _, records, _ = play(*game)
    on = parse_sides(sides)
    for record in records:
        body = record.as_dict()
        for item in said(body, on):
            assert item.side in on and item.t_ms == body["t_ms"]
            shown_s = speech.shown_seconds(body[item.side]["shown"])
            if item.kind == "request" or body["ev"] == "pause":
                time = item.text.removeprefix("clock stopped, ")
                got_shown, got_pen = heard(time)
                assert got_shown == shown_s
                assert got_pen in (None, body[item.side]["pen"])
            if body["ev"] == "penalty":
                assert speech.points(body[item.side]["pen"]) in item.text
    ends = [u for u in _said(records, on) if u.text.startswith(("game over", "round over"))]
    games_ended = len(events([r.as_dict() for r in records], "end")) - sum(
        "supersedes" in r.extra for r in records if r.ev == "end"
    )
    assert len(ends) <= len(on) * games_ended


def test_a_game_said_to_side_b_only():
    from tileclock.clock.core import GameClock
    from tileclock.clock.rules import PROFILES
    from tileclock.clock.timecode import NS_PER_S

    clock = GameClock(PROFILES["naspa"], times_s={"A": 120, "B": 120})
    records = clock.new_game(0)
    for t_s, button in ((1, "B"), (2, "B"), (3, "A"), (4, "STOP")):
        records += clock.edge(button, True, t_s * NS_PER_S) + clock.edge(
            button, False, t_s * NS_PER_S + 10**8
        )
    texts = [(u.side, u.text, u.kind) for u in _said(records, {"B"})]
    assert texts == [
        ("B", "new game", "event"),
        ("B", "opponent's clock runs", "event"),
        ("B", "two minutes left", "request"),  # B's own button while A runs: B asked
        ("B", "clock stopped, one minute fifty nine left", "event"),
    ]
    assert _said(records, set()) == [] and all(u.side == "A" for u in _said(records, {"A"}))
    assert format_clock(119) == "1:59"


# --- the request gesture against its neighbours (CLOCK_RULES §5, §9, §10): only the speaking side's
# own press while the other side's clock runs asks, and that press never acts on the game


def _asked(records, sides="AB"):
    return [(u.t_ms, u.side) for r in records for u in said(r, parse_sides(sides)) if u.kind == "request"]


@pytest.mark.parametrize(
    "script, asked",
    [
        ("0 press B\n10 press B\n", [(10_000, "B")]),  # A runs: B's own button asks B's time
        ("0 press B\n10 press A\n", []),  # a turn's end (a switch) is no request
        ("0 press B\n10 press A\n10.5 press A\n", [(10_500, "A")]),  # a second press of A while B runs asks
        ("0 press B\n10 press A\n10.1 press B\n", []),  # a collision's second press: too soon
        ("0 press B\n10 press STOP\n20 press A\n", []),  # from stopped a side's press resumes the other
        ("0 press B\n10 down STOP\n10.6 press B\n11 up STOP\n", []),  # STOP held while running: nothing
        ("0 press B\n10 press STOP\n20 down STOP\n20.6 press B\n21 up STOP\n", []),  # a chord corrects
        ("0 press B\n10 press STOP\n12 hold STOP 2\n15 press STOP\n20 press B\n", []),  # ended: nothing
        ("0 down B\n0.002 up B\n0.003 down B\n0.2 up B\n", []),  # chatter is no press
    ],
)
def test_only_the_own_press_while_the_other_runs_asks(sim, script, asked):
    records = sim(script + "30 until\n")
    assert _asked(records) == asked
    for r in records:  # the asking press is recorded as ignored, and the clock runs on as before
        if (r["t_ms"], r.get("button")) in asked:
            assert r["ev"] == "ignored" and r["reason"] == "not_running" and r["run"] != r["button"]


def test_asking_only_for_a_side_that_hears(sim):
    records = sim("0 press B\n10 press B\n20 press A\n30 press A\n40 until\n")
    assert _asked(records, "AB") == [(10_000, "B"), (30_000, "A")]
    assert _asked(records, "A") == [(30_000, "A")] and _asked(records, "") == []


def test_a_press_on_dark_panels_only_wakes_them_and_asks_nothing():
    from tileclock.clock.core import GameClock
    from tileclock.clock.rules import PROFILES
    from tileclock.clock.timecode import NS_PER_S

    clock = GameClock(PROFILES["naspa"], dark_after_ms=60_000)
    records = clock.new_game(0) + clock.advance(100 * NS_PER_S)
    records += clock.edge("B", True, 100 * NS_PER_S) + clock.edge("B", False, 101 * NS_PER_S)
    body = [r.as_dict() for r in records]
    assert events(body, "ignored")[0]["reason"] == "wake" and _asked(body) == []


@settings(max_examples=examples(100), deadline=None)
@given(GAMES)
def test_a_request_never_ends_a_turn(game):
    """Over any game: every request comes from an `ignored` press of the side whose clock does not
    run, and the record before it has the same side running: the press changed nothing."""
    _, records, _ = play(*game)
    body = [r.as_dict() for r in records]
    for index, record in enumerate(body):
        for item in said(record, {"A", "B"}):
            if item.kind == "request":
                assert record["ev"] == "ignored" and record["state"] == "running"
                assert record["run"] != item.side  # None: a school absence, which runs no game clock
                before = body[index - 1]
                assert before["run"] == record["run"] and before["state"] == "running"
