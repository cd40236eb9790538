"""The benchmark's exactness check is also a behaviour: the clock charges every nanosecond exactly."""

from tileclock.bench.run import KEYS, exact_max_error_ns, table


def test_random_presses_stops_and_corrections_are_charged_to_the_nanosecond():
    assert exact_max_error_ns(inputs=3_000, seed=5) == 0


def test_the_table_names_every_figure():
    text = table({key: 1.0 for key in KEYS})
    assert all(key in text for key in KEYS)
