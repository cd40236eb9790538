"""The three buttons, collisions and bounce (docs/rules.md#the-buttons), through `tileclock sim --script`."""

import pytest

from conftest import events


def test_from_a_fresh_game_b_starts_a_and_a_starts_b(sim):
    start = events(sim("1 press B\n"), "start")[0]
    assert start["run"] == "A" and start["button"] == "B" and start["t_ms"] == 1000
    assert events(sim("1 press A\n"), "start")[0]["run"] == "B"


def test_a_sides_press_ends_its_turn_and_runs_the_other(sim):
    records = sim("0 press B\n10 press A\n25 press B\n")
    switches = events(records, "switch")
    assert [(s["button"], s["run"]) for s in switches] == [("A", "B"), ("B", "A")]
    assert switches[1]["A"]["used_ms"] == 10_000 and switches[1]["B"]["used_ms"] == 15_000


def test_a_press_on_the_idle_side_is_recorded_and_changes_nothing(sim):
    records = sim("0 press B\n5 press B\n9 until\n")
    ignored = events(records, "ignored")[0]
    assert ignored["button"] == "B" and ignored["reason"] == "not_running" and ignored["t_ms"] == 5000
    assert ignored["run"] == "A"
    assert records[-1]["A"]["used_ms"] == 9000 and records[-1]["B"]["used_ms"] == 0


def test_stop_stops_both_and_a_side_press_from_stopped_runs_the_other_side(sim):
    records = sim("0 press B\n10 press STOP\n70 press B\n75 until\n")
    pause, resume = events(records, "pause", "resume")
    assert pause["state"] == "paused" and pause["run"] is None and pause["A"]["used_ms"] == 10_000
    # after a challenge the loser starts the other side: B's press runs A
    assert resume["run"] == "A" and resume["t_ms"] == 70_000
    assert records[-1]["A"]["used_ms"] == 15_000 and records[-1]["B"]["used_ms"] == 0


@pytest.mark.parametrize("first", ["A", "B"])
def test_both_sides_pressed_in_the_same_instant_make_exactly_one_switch(sim, first):
    second = "B" if first == "A" else "A"
    script = f"0 press B\n10 down {first}\n10 down {second}\n10.1 up {first}\n10.1 up {second}\n"
    records = sim(script)
    switches = events(records, "switch")
    assert len(switches) == 1 and switches[0]["button"] == "A" and switches[0]["run"] == "B"
    ignored = events(records, "ignored")
    assert len(ignored) == 1 and ignored[0]["button"] == "B"


def test_a_press_within_a_quarter_second_of_the_turn_starting_is_ignored(sim):
    records = sim("0 press B\n10 press A\n10.2 press B\n10.25 until\n")
    assert events(records, "ignored")[0]["reason"] == "too_soon"
    assert records[-1]["run"] == "B"


def test_contact_bounce_is_one_press_timed_from_its_first_edge(sim):
    bounce = "\n".join(
        f"10.{ms:03d} {'down' if i % 2 == 0 else 'up'} A" for i, ms in enumerate((0, 2, 3, 7, 9))
    )
    release = "\n".join(
        f"10.{ms:03d} {'up' if i % 2 == 0 else 'down'} A" for i, ms in enumerate((300, 301, 304, 306, 311))
    )
    records = sim("0 press B\n" + bounce + "\n" + release + "\n12 until\n")
    assert [r["ev"] for r in records] == ["new_game", "start", "switch", "status"]
    assert records[2]["A"]["used_ms"] == 10_000


def test_a_bounce_storm_is_one_press(sim):
    storm = "\n".join(f"{10 + i * 0.003:.3f} {'down' if i % 2 == 0 else 'up'} A" for i in range(401))
    records = sim("0 press B\n" + storm + "\n12 up A\n13 until\n")
    assert [r["ev"] for r in records] == ["new_game", "start", "switch", "status"]
    assert records[2]["t_ms"] == 10_000


def test_presses_after_the_end_change_nothing(sim):
    records = sim(
        "0 press B\n5 press STOP\n6 hold STOP 2\n8.5 press STOP\n10 press A\n11 press B\n20 until\n"
    )
    assert events(records, "end")[0]["t_ms"] == 8500
    assert [r["reason"] for r in events(records, "ignored")] == ["ended", "ended"]
    assert records[-1]["state"] == "ended" and records[-1]["A"]["used_ms"] == 5000


def test_with_the_glitch_window_set_to_zero_each_edge_counts_at_its_own_instant(sim, tmp_path):
    """`buttons.min_press_ms = 0` (allowed: docs/rules.md) turns the glitch filter off: a press
    counts at its edge, a 1 ms pulse is a press, and the clock still plays."""
    config = tmp_path / "config.toml"
    config.write_text("[buttons]\nmin_press_ms = 0\n")
    records = sim("1 press B\n10 down A\n10.001 up A\n25 press B\n30 until\n", "--config", str(config))
    start, *switches = events(records, "start", "switch")
    assert (start["run"], start["t_ms"]) == ("A", 1000)
    assert [(s["button"], s["run"], s["t_ms"]) for s in switches] == [("A", "B", 10_000), ("B", "A", 25_000)]
    assert records[-1]["A"]["used_ms"] == 9000 + 5000 and records[-1]["B"]["used_ms"] == 15_000
