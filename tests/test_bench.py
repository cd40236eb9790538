"""The benchmark's pieces behave: exactness beside a ticking clock, /proc readings, latencies, the table.

The benchmark itself (`tileclock bench`) is not a test and times nothing here; one small run of the
service through it checks that every press is measured and nothing is lost.
"""

import io
import os
import threading

from tileclock.bench import procstat
from tileclock.bench.busbytes import measure as measure_bus
from tileclock.bench.exactness import beside_a_ticking_clock, exact_max_error_ns, intervals, ticking_used_s
from tileclock.bench.report import KEYS, table, targets, verdict
from tileclock.bench.run import Progress
from tileclock.bench.service import SERVICE_NICE, measure_service, press_latencies
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S

S = NS_PER_S


def test_random_presses_stops_and_corrections_are_charged_to_the_nanosecond():
    assert exact_max_error_ns(inputs=3_000, seed=5) == 0


def test_beside_a_whole_second_ticking_clock_the_clock_is_exact_and_the_ticking_one_is_not():
    figures = beside_a_ticking_clock(games=150, seed=11)
    assert figures["clock_max_error_ns"] == 0 and figures["clock_wrong_penalty_pct"] == 0
    assert figures["overtime_games"] > 20
    assert 300 < figures["tick_median_error_ms"] < 3000  # about a second, one way or the other


def test_a_ticking_clock_charges_the_ticks_that_fall_while_a_side_runs():
    presses = [(S // 2, "B"), (3 * S, "A"), (int(4.9 * S), "STOP")]  # A runs 0.5-3 s, B 3-4.9 s
    runs = intervals(presses)
    assert runs == [("A", S // 2, 3 * S), ("B", 3 * S, int(4.9 * S))]
    assert ticking_used_s(runs, phase_ns=0) == {"A": 2, "B": 2}  # ticks at 1, 2 | 3, 4
    assert ticking_used_s(runs, phase_ns=6 * S // 10) == {"A": 3, "B": 2}  # ticks at 0.6, 1.6, 2.6 | 3.6, 4.6


def test_press_latency_adds_the_bus_time_worked_out_from_the_bytes():
    edge = 10 * S
    rows = [
        {"edges": [["A", True, edge]], "records": [[7, "switch", edge]], "panels_ns": edge + 2 * NS_PER_MS,
         "journaled_ns": edge + 5 * NS_PER_MS, "sent_ns": edge + 6 * NS_PER_MS,
         "bus_bytes": 600, "bus_transactions": 20},
        {"edges": [["A", False, edge + 10 * NS_PER_MS]], "records": [], "panels_ns": 0,
         "journaled_ns": 0, "sent_ns": 0, "bus_bytes": 0, "bus_transactions": 0},
    ]  # fmt: skip  # two wakes as the service writes them, a field group a line
    found = press_latencies(rows, 400_000)
    bus = (600 * 9 + 20 * 2) / 400  # ms
    assert found["bus"] == [bus]
    assert found["panel"] == [2 + bus] and found["record"] == [5 + bus]
    # the turn marks went first: 90 bytes in 8 transactions on the two panels' shared bus
    rows[0].update(turn_ns=edge + NS_PER_MS, turn_buses=[[50, 4], [40, 4]])
    found = press_latencies(rows, 400_000)
    assert found["turn"] == [1 + (90 * 9 + 8 * 2) / 400] and found["panel"] == [2 + bus]


def test_proc_readings_see_every_thread_and_the_filesystem(tmp_path):
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        found = procstat.threads(os.getpid())
        assert threading.get_native_id() in found and thread.native_id in found
        assert all(v >= 0 and n >= 0 and cpu >= 0 for v, n, cpu in found.values())
    finally:
        done.set()
        thread.join()
    mounts = tmp_path / "mountinfo"
    mounts.write_text(
        "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "30 22 0:26 / /var/tmp rw - tmpfs tmpfs rw\n"
        "31 22 0:27 / /var/tmpfiles rw - xfs /dev/vdb rw\n"
    )
    assert procstat.filesystem("/var/tmp/x", str(mounts))[0] == "tmpfs"
    assert procstat.filesystem("/var/tmpfiles", str(mounts))[0] == "xfs"
    assert procstat.filesystem("/home", str(mounts)) == ("ext4", "/dev/vda", "/")


def test_the_table_shows_each_figure_beside_its_target_and_marks_it():
    figures = {"exact_max_error_ns": 0, "wakeups_per_s": 1.3, "cpu_percent": 0.25, "rss_mb": 41.5}
    rows = {line.split()[0]: line.split()[1:] for line in table(figures).splitlines()[1:]}
    assert rows["exact_max_error_ns"] == ["0", "==", "0", "met"]
    assert rows["wakeups_per_s"] == ["1.300", "<=", "1.1", "MISSED"]
    assert rows["cpu_percent"] == ["0.250", "<", "0.5", "met"]
    assert rows["press_to_panel_p99_ms"] == ["n/a", "<", "25"]  # not measured this time: no mark
    assert rows["press_to_turn_shown_p99_ms"] == ["n/a", "<", "10"]
    assert rows["bus_bytes_per_switch"] == ["n/a"]  # shown, with no target
    assert rows["rss_mb"] == ["41.500", "<", "45", "met"]


def test_the_table_names_every_figure_and_marks_each_target():
    figures = {key: 1.0 for key in KEYS}
    figures.update(exact_max_error_ns=0, wakeups_per_s=2.0, press_to_panel_p99_ms=12.0)
    text = table(figures)
    assert all(key in text for key in KEYS)
    assert verdict("wakeups_per_s", 2.0) == "MISSED" and verdict("press_to_panel_p99_ms", 12.0) == "met"
    assert verdict("bus_bytes_per_switch", 600) == ""
    history = {"startup_s_0_games": 0.25, "rss_mb_0_games": 35.0}
    assert verdict("startup_s_1000_games", 0.27, figures=history) == "met"  # within 10 % of none
    assert verdict("startup_s_1000_games", 0.30, figures=history) == "MISSED"
    assert verdict("rss_mb_1000_games", 39.0, figures=history) == "MISSED"
    assert verdict("rss_mb_1000_games", 39.0) == ""  # nothing to compare with


def test_the_json_gives_every_target_and_whether_it_was_met():
    figures = {"press_to_turn_shown_p99_ms": 12.0, "takeover_rss_mb": 36.0, "rss_mb_1000_games": 36.0}
    figures["rss_mb_0_games"] = 35.0
    found = targets(figures)
    assert found["press_to_turn_shown_p99_ms"] == {"target": "< 10", "met": False}
    assert found["takeover_rss_mb"] == {"target": "< 60", "met": True}
    assert found["rss_mb_1000_games"] == {"target": "<= 1.1x rss_mb_0_games", "met": True}
    assert found["press_to_panel_p99_ms"] == {"target": "< 25", "met": None}  # not measured
    assert set(found) <= set(KEYS) and "bus_bytes_per_switch" not in found  # (no target)


def test_a_short_run_of_the_service_measures_every_press(tmp_path):
    stream = io.StringIO()
    figures = measure_service(
        idle_s=2, presses=6, progress=Progress(1, stream), state_parent=str(tmp_path), every_s=0.4, hold_s=0.2
    )  # held long, so that a loaded machine's late presser cannot shrink a press into a glitch
    assert (
        figures["presses_measured"] == figures["switches_made"] == 6
    )  # every press switched, and was measured
    assert figures["press_to_panel_p99_ms"] > figures["press_to_frame_p99_ms"] > 0
    assert figures["press_to_panel_p99_ms"] > figures["press_to_turn_shown_p99_ms"] > 0
    assert figures["wakeups_per_s"] > 0 and figures["startup_s"] > 0 and figures["rss_mb"] > 0
    # boot to clock: READY=1, plus the panels' start-up and first frame on the bus (both whole)
    assert figures["boot_to_clock_s"] > figures["startup_s"] + 2 * 1024 * 9 / 400_000
    assert "service up" in stream.getvalue()
    assert os.listdir(tmp_path) == []  # its scratch folder is gone


def test_panel_bytes_are_counted_for_ticks_and_switches_beside_the_floor_and_luma():
    """A switch is taken once its press has outlasted the glitch filter, in a later wake than its
    edge: it must still be counted as a switch (it once was counted as a tick, and a switch's bytes
    read 0). docs/screens.md."""
    script = "0 press B\n10 press A\n20.5 press B\n31 press STOP\n40 press A\n"
    figures = measure_bus(script)
    assert figures["switches"] == 4  # the start, two turns, the restart after STOP; STOP itself none
    assert figures["ticks"] >= 25  # a second of the running side each, none while stopped
    for kind in ("tick", "switch"):
        ours, floor, stock = (figures[f"{key}_per_{kind}"] for key in ("bytes", "floor_bytes", "stock_bytes"))
        assert 0 < floor < ours < stock
    assert figures["floor_bytes_per_switch"] > 400  # both bottom bands flip, on both panels
    assert figures["bytes_per_switch"] > 4 * figures["bytes_per_tick"]


def test_the_bench_runs_the_service_at_the_priority_its_unit_gives_it():
    unit = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "systemd", "tileclock.service"
    )
    with open(unit) as file:
        assert f"Nice={SERVICE_NICE}" in file.read().splitlines()
