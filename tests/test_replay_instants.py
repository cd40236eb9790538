"""Replay agrees with the record at every instant (issue 23): the state "at" an instant of a record is
the state after every record of that instant, each at its exact instant (`history.state_at`)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from support.command_line import run
from support.games import games, play
from tileclock.clock.core import ButtonTiming, GameClock
from tileclock.clock.history import split_games, view_at
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS, NS_PER_S


def played(game, offset_ns):
    """`game` (test_properties' tuple) played with its first edge `offset_ns` into a millisecond (a
    kernel's edge stamps are never whole milliseconds), so every instant of it is off the grid."""
    rules, start_a, start_b, edges, end_gap_ms = game
    clock = GameClock(PROFILES[rules], ButtonTiming(), {"A": start_a, "B": start_b})
    records = clock.new_game(0)
    t = offset_ns
    for gap, button, down in edges:
        t += gap * NS_PER_MS
        records += clock.edge(button, down, t)
    return [r.as_dict() for r in records + clock.status(t + end_gap_ms * NS_PER_MS)]


@settings(max_examples=examples(150), deadline=None, derandomize=True)
@given(games(), st.integers(0, NS_PER_MS - 1))
def test_the_view_at_a_records_instant_is_what_the_last_record_of_that_instant_says(game, offset_ns):
    records = played(game, offset_ns)
    for recorded in split_games(records):
        for record in recorded.records:
            last = [r for r in recorded.records if r["t_ms"] == record["t_ms"]][-1]
            view, _, _ = view_at(recorded, at_ms=record["t_ms"])
            assert (view.state, view.run) == (last["state"], last["run"]), last
            for side in "AB":
                shown = getattr(view, side)
                assert (shown.shown, shown.pen, shown.used_ms) == (
                    last[side]["shown"],
                    last[side]["pen"],
                    last[side]["used_ms"],
                ), last
            if record is last:  # `replay --after-seq` an instant's last record: what that record says
                view, at_record, _ = view_at(recorded, after_seq=record["seq"])
                assert at_record is record and (view.state, view.run) == (record["state"], record["run"])
                assert [getattr(view, side).used_ms for side in "AB"] == [
                    record[side]["used_ms"] for side in "AB"
                ]
        with pytest.raises(ValueError, match=f"seq {recorded.seq - 1} is before this game"):
            view_at(recorded, after_seq=recorded.seq - 1)


def test_replay_at_a_penalty_step_off_the_millisecond_shows_the_penalty(tmp_path):
    """B's press at 0.4 ms starts A's 0:06: A reads -0:01 (10 points) at 7.0004 s, recorded at 0:07.
    Replay at 0:07 shows what that record says, not the state 0.4 ms before it."""
    code, out, _ = run(["sim", "--script", "-", "--time", "A=0:06"], "0.0004 press B\n0:08 until\n")
    log = tmp_path / "game.log"
    log.write_text(out)
    code, out, _ = run(["replay", str(log), "--at", "0:07"])
    assert code == 0 and out.splitlines()[1].split()[:4] == ["A:", "-0:01", "penalty", "10"]


def test_replay_after_a_forfeit_record_shows_the_game_ended_as_that_record_says(tmp_path):
    """A forfeit is written with the game already ended; its `end` follows at the same instant.
    `replay --after-seq` the forfeit shows it ended, not running."""
    code, out, _ = run(["sim", "--script", "-"], "0 press B\n36:00 until\n")  # A runs 25:00 and 10:00 over
    log = tmp_path / "game.log"
    log.write_text(out)
    forfeit = next(r for r in map(json.loads, out.splitlines()) if r["ev"] == "forfeit")
    assert forfeit["state"] == "ended" and forfeit["run"] is None
    code, out, _ = run(["replay", str(log), "--after-seq", str(forfeit["seq"])])
    lines = out.splitlines()
    assert code == 0 and lines[0].endswith(f"after record {forfeit['seq']} (forfeit at 2101000 ms): ended")
    assert lines[1].split() == [
        "A:",
        "-10:01",
        "penalty",
        "100",
        "used",
        "2101000",
        "ms",
        "lost",
        "on",
        "time",
    ]


def test_play_is_the_suites_own():
    """The games here are test_properties' games, played the same way when not shifted."""
    game = ("naspa", 30, 30, [(0, "B", True), (100, "B", False)], 40_000)
    assert [r.as_dict() for r in play(*game)[1]] == played(game, 0)


@pytest.mark.parametrize("rules", ["naspa", "school"])
def test_replay_after_a_power_cut_during_a_late_start_shows_the_game_stopped_as_the_clock_came_back(rules):
    """A is late (its time runs under NASPA, only its absence under the school rules) when the
    power goes; the clock comes back stopped. Replay after its `recovered` record, and a minute
    later, shows it stopped with A's time as it was, not A's absence running on."""
    clock = GameClock(PROFILES[rules], checkpoint_ms=1000)
    made = clock.new_game(5 * NS_PER_S, {"boot_id": "b1"})
    made += clock.late_start(6 * NS_PER_S, "A") + clock.advance(20 * NS_PER_S)
    records = [json.loads(json.dumps(r.as_dict())) for r in made]
    back = GameClock(PROFILES[rules], checkpoint_ms=1000)
    records += [r.as_dict() for r in back.recover(records, 10**15, {"boot_id": "b2"})]
    recovered = records[-1]
    assert (recovered["ev"], recovered["state"], recovered["run"]) == ("recovered", "paused", None)
    (game,) = split_games(records)
    for view, _, _ in (
        view_at(game, after_seq=recovered["seq"]),
        view_at(game, at_ms=recovered["t_ms"] + 60_000),
    ):
        assert (view.state, view.run) == ("paused", None)
        assert [getattr(view, side).used_ms for side in "AB"] == [recovered[side]["used_ms"] for side in "AB"]


def test_a_boards_folder_given_to_replay_or_plot_names_the_game_to_give(tmp_path):
    """A board's folder of the hall's records holds game files, not a journal: replay and plot
    said `no game in this log`; they now name its newest game file to give instead."""
    code, out, _ = run(["sim", "--script", "-"], stdin="0 press B\n30 press A\n40 until\n")
    assert code == 0
    board = tmp_path / "records" / "board-7"
    board.mkdir(parents=True)
    (board / "game-1-clock-7.log").write_text(out)
    for argv in (["replay", str(board), "--at", "0:10"], ["plot", str(board), str(tmp_path / "p.svg")]):
        code, _, err = run(argv)
        assert code != 0 and err.count("\n") == 1, err
        assert f"{board} is a board's folder of 1 game file(s), not a clock's journal" in err, err
        assert f"e.g. {board / 'game-1-clock-7.log'} (its newest)" in err, err
    code, _, err = run(["replay", str(board / "game-1-clock-7.log"), "--at", "0:10"])
    assert code == 0, err  # the file it names is one replay takes
