"""What the clock says to a blind player (clock/speech.py), against the records' state.

Rules: docs/player-guide.md#speech. Each phrase is read back into numbers by `heard` (the words a
listener or a recogniser gets) and checked against the record it came from.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import events, examples
from test_properties import GAMES, play
from tileclock.clock import speech
from tileclock.clock.speech import SpeechSetting, Utterance, parse_sides, said
from tileclock.clock.timecode import format_clock

WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
WORDS.update({w: 10 + i for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen".split())})
WORDS.update({"seventeen": 17, "eighteen": 18, "nineteen": 19})
WORDS.update(
    {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
)


def read_number(words):
    """The number a run of number words says (`twenty four`, `one hundred ten`)."""
    total = 0
    for word in words:
        if word in ("hundred", "thousand"):
            total *= 100 if word == "hundred" else 1000
        else:
            total += WORDS[word]
    return total


def read_duration(text):
    """Seconds from `twelve minutes thirty`, `one minute`, `forty seconds`, `no time`."""
    words = text.split()
    if words == ["no", "time"]:
        return 0
    if words[-1] in ("second", "seconds"):
        return read_number(words[:-1])
    at = words.index("minute") if "minute" in words else words.index("minutes")
    return 60 * read_number(words[:at]) + (read_number(words[at + 1 :]) if words[at + 1 :] else 0)


def heard(text):
    """(shown seconds, penalty or None) from a time as said: `... left` or `... over, P points`."""
    if text.endswith(" left"):
        return read_duration(text[: -len(" left")]), None
    over, pen = text.split(" over, ")
    return -read_duration(over), read_number(pen.split()[:-1])


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
