"""Display, overtime penalty and the 10-minute cap, through `tileclock sim --script`.

Rules: docs/rules.md#time, docs/rules.md#display-and-penalty-one-rule-for-both,
docs/rules.md#the-10-minute-cap-naspa-vg3.
"""

from conftest import events

A_STARTS_AT_ZERO = "0 down B\n0.1 up B\n"


def test_a_fresh_side_shows_its_starting_time(sim):
    records = sim("0 until\n")  # an empty script is refused: nothing to run
    assert records[0]["ev"] == "new_game"
    assert records[0]["A"] == {"used_ms": 0, "shown": "25:00", "pen": 0, "late_pen": 0}
    assert records[-1]["ev"] == "status"


def test_zero_shows_for_the_whole_second_past_the_limit_and_costs_nothing(sim):
    records = sim(A_STARTS_AT_ZERO + "25:00.999 press A\n")
    switch = events(records, "switch")[0]
    assert switch["A"] == {"used_ms": 1500999, "shown": "0:00", "pen": 0, "late_pen": 0}
    assert not events(records, "overtime", "penalty")


def test_minus_one_second_costs_ten_points_at_that_exact_instant(sim):
    records = sim(A_STARTS_AT_ZERO + "25:01 until\n")
    overtime, penalty = events(records, "overtime", "penalty")
    assert overtime["t_ms"] == penalty["t_ms"] == 1_501_000
    assert overtime["player"] == "A"
    assert penalty["A"] == {"used_ms": 1_501_000, "shown": "-0:01", "pen": 10, "late_pen": 0}


def test_penalty_steps_at_each_started_minute(sim):
    records = sim(A_STARTS_AT_ZERO + "27:05 until\n")
    steps = [(r["t_ms"], r["A"]["shown"], r["A"]["pen"]) for r in events(records, "penalty")]
    assert steps == [(1_501_000, "-0:01", 10), (1_561_000, "-1:01", 20), (1_621_000, "-2:01", 30)]
    assert records[-1]["A"]["shown"] == "-2:05" and records[-1]["A"]["pen"] == 30


def test_minus_one_minute_is_still_ten_points(sim):
    records = sim(A_STARTS_AT_ZERO + "26:00 press A\n")
    assert events(records, "switch")[0]["A"] == {
        "used_ms": 1_560_000,
        "shown": "-1:00",
        "pen": 10,
        "late_pen": 0,
    }


def test_naspa_ends_the_game_at_minus_ten_one_with_a_deduction_of_100(sim):
    # B goes 12 s over first; then A runs into the cap.
    script = "0 press A\n0:42 press B\n50:00 until\n"
    records = sim(script, "--time", "B=0:30")
    forfeit, end = events(records, "forfeit", "end")
    assert forfeit["player"] == "A" and forfeit["reason"] == "overtime_limit"
    assert forfeit["t_ms"] == 42_000 + 1_500_000 + 601_000
    assert forfeit["A"] == {"used_ms": 2_101_000, "shown": "-10:01", "pen": 100, "late_pen": 0}
    assert forfeit["B"]["shown"] == "-0:12" and forfeit["B"]["pen"] == 10
    assert end["state"] == "ended" and end["run"] is None
    # nothing runs after the end
    assert records[-1]["A"] == forfeit["A"] and records[-1]["B"] == forfeit["B"]
    last_penalty = events(records, "penalty")[-1]
    assert last_penalty["A"]["pen"] == 100 and last_penalty["A"]["shown"] == "-9:01"


def test_naspa_minus_ten_exactly_is_not_yet_the_end(sim):
    records = sim(A_STARTS_AT_ZERO + "35:00.999 press A\n")
    assert not events(records, "forfeit")
    assert events(records, "switch")[0]["A"] == {
        "used_ms": 2_100_999,
        "shown": "-10:00",
        "pen": 100,
        "late_pen": 0,
    }


def test_nsa1997_and_school_have_no_overtime_cap(sim):
    for rules in ("nsa1997", "school"):
        records = sim(A_STARTS_AT_ZERO + "40:00 until\n", "--rules", rules)
        assert not events(records, "forfeit", "end")
        assert records[-1]["A"] == {"used_ms": 2_400_000, "shown": "-15:00", "pen": 150, "late_pen": 0}
        assert records[0]["rules"] == rules


def test_each_side_can_start_with_its_own_time(sim):
    records = sim(A_STARTS_AT_ZERO + "30:01 until\n", "--time", "A=30:00")
    assert records[0]["time_ms"] == {"A": 1_800_000, "B": 1_500_000}
    assert events(records, "overtime")[0]["t_ms"] == 1_801_000


def test_config_file_sets_rules_and_times(sim, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[clock]\nrules = "school"\ntime_a = "20:00"\n')
    records = sim(A_STARTS_AT_ZERO, "--config", str(config))
    assert records[0]["rules"] == "school"
    assert records[0]["time_ms"] == {"A": 1_200_000, "B": 1_500_000}


def test_overtime_instants_stay_exact_after_many_switches_and_stops(sim):
    # A's turns: 0.000-7.777, 20.000-1500.111 less a stop; every instant in ms, not ns-rounded guesses
    script = """
    0 press B
    7.777 press A
    13.5 press B        # B used 5.723 s
    20 press STOP       # A used 7.777 + 6.5 = 14.277 s
    30 press B          # resumes A at 30
    1516.723 until
    """
    records = sim(script)
    overtime = events(records, "overtime")[0]
    # A needs 1501 s: 14.277 s before the stop, so 1486.723 s after 30 s
    assert overtime["t_ms"] == 30_000 + 1_486_723
    assert overtime["A"]["used_ms"] == 1_501_000
    assert overtime["B"]["used_ms"] == 5_723
