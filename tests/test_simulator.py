"""The simulated stack: the loop's wake-ups, the real library backends, the command line."""

import subprocess
import sys

import pytest

from conftest import tap
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.assembly import RunningClock, simulated_parts
from tileclock.device.config_schema import Config
from tileclock.device.hardware.virtual import VirtualTime
from tileclock.sim.script import PRESS_NS
from tileclock.sim.simulator import Simulator
from tileclock.sim.terminal import HELPS, REPEAT_S, KeyPad, frame_to_text, screen_text, status_text
from tileclock.wire.protocol import unframe, with_crc


@pytest.fixture
def simulator():
    sim = Simulator(Config())
    yield sim
    sim.close()


def test_a_clock_built_is_not_started_until_it_boots():
    time = VirtualTime(5 * NS_PER_S)
    clock = RunningClock(Config(), simulated_parts(time))
    assert clock.journal.next_seq == 0 and clock.started_ns is None and clock.daemon.frames == {}
    assert clock.boot() is clock and clock.started_ns == 5 * NS_PER_S
    assert [unframe(line)["ev"] for line in clock.journal.lines] == ["boot", "new_game"]
    assert set(clock.daemon.frames) == {"A", "B"}  # shown on both panels
    clock.close()


def test_the_loop_wakes_once_per_displayed_second_while_a_side_runs(simulator):
    tap(simulator, "B", 0)
    before = simulator.daemon.wakeups
    simulator.run_to(600 * NS_PER_S)
    # A's clock runs from the press at 0 s: its display changes at 1 s, 2 s, ... 599 s, one wake-up each
    assert simulator.daemon.wakeups - before == 599


def test_a_stopped_clock_wakes_only_to_spare_the_panels_then_sleeps(simulator):
    tap(simulator, "B", 0)
    tap(simulator, "STOP", 10)
    before = simulator.daemon.wakeups
    simulator.run_to(311 * NS_PER_S)  # dims 5 minutes after the last edge (10.1 s)
    assert simulator.daemon.wakeups - before == 1
    simulator.run_to(1811 * NS_PER_S)  # moves once a minute, then goes dark at 30 minutes
    assert simulator.daemon.wakeups - before == 1 + 24 + 1
    simulator.run_to(3 * 3600 * NS_PER_S)
    assert simulator.daemon.wakeups - before == 26


def test_records_come_out_of_the_serial_port_and_frames_reach_the_panels(simulator):
    tap(simulator, "B", 0)
    simulator.run_to(5 * NS_PER_S)
    records = [unframe(line) for line in simulator.serial_lines()]
    assert [r["ev"] for r in records[:3]] == ["boot", "new_game", "start"]
    assert records[0]["board"] == "1" and records[0]["rules"] == "naspa" and records[0]["protocol"] == 2
    for output in simulator.panels:
        assert output.frames_sent >= 2
        assert simulator.buses[output.panel.faces].bytes_on_wire() > 0


def test_a_panel_that_stops_answering_never_stops_the_clock(simulator):
    simulator.buses["A"].fail = OSError(121, "Remote I/O error")
    tap(simulator, "B", 0)
    simulator.run_to(5 * NS_PER_S)
    assert simulator.daemon.alerts == ("PANEL A FAULT",)
    tap(simulator, "A", 10)
    simulator.buses["A"].fail = None
    simulator.run_to(12 * NS_PER_S)
    records = [unframe(line) for line in simulator.serial_lines()]
    evs = [r["ev"] for r in records]
    assert evs[:5] == ["boot", "new_game", "start", "fault", "switch"] and "fault_cleared" in evs
    assert records[3]["part"] == "panel A" and records[3]["detail"]
    assert records[4]["A"]["used_ms"] == 10_000  # time kept exactly through the fault
    assert simulator.panels[0].faults >= 5  # retried every second
    assert simulator.daemon.alerts == ()


def test_the_terminal_shows_both_real_frames_and_a_text_line(simulator):
    tap(simulator, "B", 0)
    simulator.run_to(62 * NS_PER_S)
    view = simulator.clock.view(62 * NS_PER_S)
    rows = frame_to_text(simulator.daemon.frames["A"])
    assert len(rows) == 32 and all(len(row) == 64 for row in rows)
    assert any(ch != " " for row in rows for ch in row)
    assert ">A 23:58" in status_text(view, set()) and "RUNNING" in status_text(view, set())
    wide = screen_text(simulator.daemon.frames, view, {"STOP"}, columns=200, rows=50)
    stacked = screen_text(simulator.daemon.frames, view, set(), columns=120, rows=40)
    compact = screen_text(simulator.daemon.frames, view, set(), columns=80, rows=24)
    assert len(wide) == 2 * 16 + 4 and "held: STOP" in wide[-2]  # the frames at 2x2 pixels a cell
    assert len(stacked) == 2 * (16 + 2) + 2 <= 40  # one above the other, at 2x4 pixels a cell
    assert len(compact) <= 24 and all(len(line) <= 80 for line in compact)


def typed(keys, key, t_s, real_s=None):
    """`key` typed at the clock's `t_s` seconds (and, for the auto-repeat, at real time `real_s`:
    by default the same), its taps let go when due."""
    t_ns = int(t_s * NS_PER_S)
    keys.release_due(t_ns)
    keys.key(key, t_ns, t_s if real_s is None else real_s)
    keys.advance(t_ns + NS_PER_S // 2)  # as the terminal's loop wakes after a key


def test_a_redraw_slower_than_a_tap_lets_go_of_it_at_its_own_time(simulator):
    """On a loaded machine the loop can wake after a tap is due: the tap is let go where it was
    due, not at the late wake (CI once saw `virtual time cannot go back` here)."""
    keys = KeyPad(simulator)
    keys.key("l", 0, 0.0)
    late_ns = PRESS_NS + NS_PER_S // 3  # the next wake, well after the tap's release was due
    keys.advance(late_ns)
    keys.key(" ", late_ns, 5.0)  # another key typed at that late wake
    keys.advance(late_ns + NS_PER_S)
    records = [unframe(line) for line in simulator.serial_lines()]
    assert [(r["ev"], r["at_ns"]) for r in records if r["ev"] in ("start", "pause")] == [
        ("start", 0),
        ("pause", late_ns),
    ]
    assert keys.releases == [] and not any(r["ev"] == "error" for r in records)


def test_the_director_key_answers_a_call_taken_then_done(simulator):
    keys = KeyPad(simulator)
    typed(keys, "d", 0)  # no call open: nothing is sent
    for t_s in (1, 1.6, 2.2):  # three STOP taps within 2 s on a clock not started: a call
        typed(keys, " ", t_s)
    assert simulator.view().call == "called"
    typed(keys, "d", 10)
    assert simulator.view().call == "taken"  # TD COMING
    typed(keys, "d", 20)
    view = simulator.view()
    assert view.call is None and view.notice.kind == "call_done"  # CALL DONE
    records = [unframe(line) for line in simulator.serial_lines()]
    call = next(r for r in records if r["ev"] == "call")
    answers = [(r["call"], r["answer"]) for r in records if r["ev"] == "call_answer"]
    assert answers == [(call["seq"], "taken"), (call["seq"], "done")]
    assert not any(r["ev"] == "error" for r in records)
    assert all(" d: " in text for text in HELPS) and "d: the director answers a call" in HELPS[0]


def held_down(keys, key, t_s, for_s, delay_s=0.5, every_s=0.04):
    """`key` held down from `t_s` for `for_s` seconds, as a terminal repeats it: typed once, again
    after `delay_s`, then every `every_s` (the clock runs at real time here)."""
    typed(keys, key, t_s)
    repeat_s = t_s + delay_s
    while repeat_s < t_s + for_s:
        t_ns = int(repeat_s * NS_PER_S)
        keys.release_due(t_ns)
        keys.key(key, t_ns, repeat_s)
        keys.sim.catch_up(t_ns)
        repeat_s += every_s
    assert every_s < REPEAT_S < delay_s  # what the terminal's repeat is taken to be


def test_a_key_held_down_never_calls_the_director_nor_asks_the_end(simulator):
    keys = KeyPad(simulator)
    typed(keys, "l", 0)  # A's clock runs
    held_down(keys, " ", 5, 4)  # space held 4 s: STOP tapped twice (as typed and its first repeat)
    assert simulator.view().state.value == "paused" and simulator.view().call is None
    held_down(keys, "S", 20, 3)  # Shift+S held 3 s: STOP down once, and kept down
    assert keys.held == {"STOP"}
    typed(keys, "S", 23.3)  # typed again later: still held (a hold is let go by u only)
    assert keys.held == {"STOP"} and simulator.view().hint.value == "end_game"  # RELEASE: END GAME
    records = [unframe(line) for line in simulator.serial_lines()]
    assert not any(r["ev"] in ("call", "end") for r in records)
    stop_edges = [r for r in records if r.get("button") == "STOP"]
    assert len(stop_edges) <= 3  # the stop, one ignored tap, the hold: no flurry of taps
    typed(keys, "u", 24)  # let go: the end is asked, as on the clock after a 2 s hold
    assert keys.held == set() and simulator.view().hint.value == "confirm_end"
    held_down(keys, "u", 31, 2)  # u repeated: nothing more to let go
    held_down(keys, "d", 40, 2)  # d repeated with no call open: nothing sent
    assert not any(
        unframe(line)["ev"] in ("call", "call_answer", "error") for line in simulator.serial_lines()
    )


def test_at_80x24_the_own_turn_pointer_and_the_calls_line_show(simulator):
    keys = KeyPad(simulator)
    typed(keys, "l", 0)  # A's clock runs
    lines = screen_text(simulator.daemon.frames, simulator.view(), set(), columns=80, rows=24)
    a_top, b_top = lines[1][1:38], lines[1][42:79]  # inside each box (37 wide): A's panel, then B's
    assert a_top.startswith("> ") and "> A 25:00" in b_top  # A's own pointer; on B's, beside A's time
    assert not b_top.startswith(">")
    typed(keys, " ", 5)  # stopped, then the call: three taps within 2 s
    for t_s in (7, 7.6, 8.2):
        typed(keys, " ", t_s)
    simulator.send(with_crc("adjust A +60000"), 10 * NS_PER_S)  # a correction takes the top line
    simulator.run_to(11 * NS_PER_S)
    lines = screen_text(simulator.daemon.frames, simulator.view(), set(), columns=80, rows=24)
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
    assert lines[1].count("A +1:00") == 2  # the correction, on both panels' top lines
    assert lines[2].count("CALLED TD") == 2  # and the call on its own line under it, as on the panel


def test_a_correction_after_the_end_shows_where_final_did_and_the_band_stays(simulator):
    """docs/player-guide.md, "After the game": FINAL, or the correction the director made since."""
    keys = KeyPad(simulator)
    for key, t_s in (("l", 0), (" ", 5), ("S", 6), ("u", 8.5), (" ", 9)):  # play, stop, end the game
        typed(keys, key, t_s)
    lines = screen_text(simulator.daemon.frames, simulator.view(), set(), columns=80, rows=24)
    assert lines[1].count("FINAL") == 2 and lines[8].count("GAME OVER") == 2
    simulator.send(with_crc("adjust A -60000"), 12 * NS_PER_S)
    simulator.run_to(13 * NS_PER_S)
    lines = screen_text(simulator.daemon.frames, simulator.view(), set(), columns=80, rows=24)
    assert lines[1].count("A -1:00") == 2 and "FINAL" not in lines[1]  # every correction shows
    assert lines[8].count("GAME OVER") == 2 and "23:55" in lines[1]  # still ended; A's new time


def test_the_console_script_runs_a_script_file(tmp_path):
    script = tmp_path / "game.txt"
    script.write_text("0 press B\n25:01.000 until\n")
    result = subprocess.run(
        [sys.executable, "-m", "tileclock", "sim", "--script", str(script)],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert '"ev":"overtime"' in lines[3] and '"ev":"status"' in lines[-1]


@pytest.mark.parametrize(
    "script, message",
    [
        ("5 press B\n4 press A\n", "line 2: time goes backwards"),
        ("5 press C\n", "line 1: expected a button"),
        ("five press A\n", "line 1: not a time"),
        ("5 jump A\n", "line 1: expected down, up, press, hold, send, power or until"),
        ("5 hold A\n", "line 1: hold takes a button and seconds"),
    ],
)
def test_a_bad_script_line_is_named_and_nothing_runs(tmp_path, script, message):
    path = tmp_path / "bad.txt"
    path.write_text(script)
    result = subprocess.run(
        [sys.executable, "-m", "tileclock", "sim", "--script", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 2 and message in result.stderr and result.stdout == ""


def test_speed_is_for_the_live_clock_and_refused_with_a_script(tmp_path, capsys):
    from tileclock.cli import main

    script = tmp_path / "game.txt"
    script.write_text("0 press B\n")
    assert main(["sim", "--script", str(script), "--speed", "10"]) == 2
    assert "--speed is for the live clock" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sim", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--speed N live only (refused with --script" in help_text and "--time SIDE=m:ss" in help_text
    assert "live or with --script" in help_text


def test_interactive_sim_without_a_terminal_says_so(monkeypatch, capsys):
    from tileclock.cli import main

    monkeypatch.setattr("sys.stdin", open("/dev/null"))
    assert main(["sim"]) == 2
    assert "--script" in capsys.readouterr().err
