"""The director's one-time values in memory (pages/once.py): each good for one action of the
session it was handed to, and held within bounds however many a page asks for."""

from tileclock.director.pages.once import FRESH, REPLAY, UNKNOWN, OneTimeValues


def test_a_value_is_good_once_and_for_its_own_session_only():
    values = OneTimeValues()
    value = values.issue("page-a")
    assert values.take("page-b", value) == UNKNOWN  # another session's: left for its own
    assert values.take("page-a", value) == FRESH
    assert values.take("page-a", value) == REPLAY
    assert values.take("page-b", value) == REPLAY
    assert values.take("page-a", "") == UNKNOWN


def test_values_asked_for_without_end_are_held_within_the_bounds():
    values = OneTimeValues(waiting=3, taken=2)
    handed = [values.issue("page-a") for _ in range(5)]
    assert [values.take("page-a", v) for v in handed] == [UNKNOWN, UNKNOWN, FRESH, FRESH, FRESH]
    # the oldest used one is forgotten: a replay of it is refused still, as unknown
    assert [values.take("page-a", v) for v in handed[2:]] == [UNKNOWN, REPLAY, REPLAY]
    assert len(values._waiting) == 0 and len(values._taken) == 2
