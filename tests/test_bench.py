"""The benchmark's exactness check is also a behaviour: the clock charges every nanosecond exactly."""

from tileclock.bench.run import exact_max_error_ns, table


def test_random_presses_stops_and_corrections_are_charged_to_the_nanosecond():
    assert exact_max_error_ns(inputs=3_000, seed=5) == 0


def test_the_table_shows_each_figure_beside_its_target():
    figures = {"exact_max_error_ns": 0, "wakeups_per_s": 1.0, "cpu_percent": 0.25, "rss_mb": 41.5}
    rows = {line.split()[0]: line.split()[1:] for line in table(figures).splitlines()[1:]}
    assert rows == {
        "exact_max_error_ns": ["0", "==", "0"],
        "wakeups_per_s": ["1.000", "<=", "2.2"],
        "cpu_percent": ["0.250", "<", "1"],
        "press_to_record_p99_ms": ["n/a"],  # shown, with no target
        "press_to_frame_p99_ms": ["n/a", "<", "10"],  # not measured this time
        "bus_bytes_per_tick": ["n/a", "<=", "819.2"],
        "bus_bytes_per_switch": ["n/a"],
        "startup_s": ["n/a", "<", "1.5"],
        "rss_mb": ["41.500", "<", "60"],
    }
