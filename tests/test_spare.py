"""A spare clock takes over a dead clock's game (issue 40 point 4): where the hall's copy of the
dead clock's records ends, to the millisecond, stopped; its records say from which clock and seq."""

import json

import pytest

from tileclock.clock.core import GameClock
from tileclock.clock.rules import PROFILES
from tileclock.clock.spare import NoGame, command, handover
from tileclock.clock.state import State
from tileclock.wire.protocol import MAX_COMMAND, CommandError, frame, parse_command, unframe, with_crc
from tileclock.wire.records import encode
from tileclock.wire.seal import MAX_SEALED

NS_PER_S = 10**9
RULES = PROFILES["naspa"]


def as_read(records):
    """Records as the hall reads them off the wire: framed, decoded, checked."""
    return [unframe(frame(encode(record))) for record in records]


def press(clock, button, t_ns):
    return clock.edge(button, True, t_ns) + clock.edge(button, False, t_ns + 40_000_000)


def dead_clock_game():
    """A game on `clock-12`: B late 61.5 s, a correction, turns into overtime for A; then the
    clock dies with A's clock running (its last record a checkpoint). Its records, as read."""
    clock = GameClock(RULES, checkpoint_ms=1000)
    made = clock.new_game(1 * NS_PER_S, {"boot_id": "b1"})
    made += clock.late_start(2 * NS_PER_S, "B")
    t = 63_500_000_123
    made += press(clock, "A", t)  # B arrives: B's clock runs
    t += 60 * NS_PER_S + 7_777_777
    made += press(clock, "B", t)
    t += 3 * NS_PER_S
    made += press(clock, "STOP", t)
    made += clock.adjust(t + NS_PER_S, "A", -60_000)
    t += 2 * NS_PER_S
    made += press(clock, "B", t)  # resumes: A runs
    t += 26 * 60 * NS_PER_S + 345_678_901  # into overtime
    made += clock.advance(t)
    return as_read(made)


def test_the_spare_stands_exactly_where_the_dead_clocks_records_end():
    records = dead_clock_game()
    last = records[-1]
    assert last["state"] == "running" and last["run"] == "A" and last["A"]["shown"].startswith("-")
    taken = handover("clock-12", records, RULES)
    line = with_crc(command(taken) + " by=director-1")
    assert len(line) <= MAX_COMMAND and len(line) + MAX_SEALED - MAX_COMMAND <= MAX_SEALED
    parsed = parse_command(line.encode())
    game = next(r for r in records if r["ev"] == "new_game")["seq"]
    assert parsed.name == "takeover" and parsed.args[:3] == ("clock-12", last["seq"], game)

    spare = GameClock(RULES, first_seq=500)
    spare.new_game(900 * NS_PER_S, {"boot_id": "s1"})
    at = 1000 * NS_PER_S
    (record,) = as_read(spare.take_over(at, taken, source="hall", by="director-1"))
    assert record["ev"] == "takeover" and record["from"] == "clock-12" and record["from_seq"] == last["seq"]
    assert record["from_game"] == game and record["was_running"] == "A" and record["by"] == "director-1"
    # stopped, each side's time used, shown and penalty as the dead clock's last record: to the ms
    assert record["state"] == "paused" and record["run"] is None
    for side in "AB":
        assert record[side] == last[side], side
    assert spare.balanced(at)
    view = spare.view(at)
    assert view.state == State.PAUSED and view.notice.kind == "takeover"
    # the time the dead clock was down is no one's: a minute later the sides still read the same
    later = at + 60 * NS_PER_S
    spare.advance(later)
    assert [spare.used_ns(side, later) // 1_000_000 for side in "AB"] == [last[s]["used_ms"] for s in "AB"]
    # the game goes on: A presses (B runs), STOP, and the round is over; the end holds both parts
    press(spare, "A", later)
    press(spare, "STOP", later + 5 * NS_PER_S)
    ended = [r for r in as_read(spare.round_over(later + 6 * NS_PER_S)) if r["ev"] == "end"]
    summary = ended[-1]["summary"]
    assert summary["A"]["used_ms"] == last["A"]["used_ms"]
    assert summary["B"]["used_ms"] == last["B"]["used_ms"] + 5000
    assert summary["B"]["late_pen"] == last["B"].get("late_pen", 0)
    assert summary["A"]["start_ms"] == RULES.time_s * 1000 and summary["stopped_ms"] >= 0


def test_a_takeover_is_refused_on_a_game_in_play_and_taken_once():
    taken = handover("clock-12", dead_clock_game(), RULES)
    spare = GameClock(RULES)
    spare.new_game(0, {"boot_id": "s1"})
    press(spare, "A", NS_PER_S)  # the spare's own game has started
    (error,) = as_read(spare.take_over(2 * NS_PER_S, taken))
    assert error["ev"] == "error" and "fresh game" in error["detail"]
    fresh = GameClock(RULES)
    fresh.new_game(0, {"boot_id": "s2"})
    fresh.take_over(NS_PER_S, taken)
    (again,) = as_read(fresh.take_over(2 * NS_PER_S, taken))  # a taken-over game is in play
    assert again["ev"] == "error"


def test_an_ended_game_has_nothing_to_take_over():
    clock = GameClock(RULES)
    made = clock.new_game(0, {"boot_id": "b"}) + press(clock, "A", NS_PER_S)
    made += clock.round_over(2 * NS_PER_S)
    with pytest.raises(NoGame):
        handover("clock-3", as_read(made), RULES)


def test_a_spare_restarted_after_a_takeover_takes_up_the_game_taken_over():
    records = dead_clock_game()
    taken = handover("clock-12", records, RULES)
    spare = GameClock(RULES, checkpoint_ms=1000)
    made = spare.new_game(0, {"boot_id": "s1"}) + spare.take_over(NS_PER_S, taken)
    journal = [json.loads(json.dumps(r)) for r in as_read(made)]
    again = GameClock(RULES, checkpoint_ms=1000)
    again.recover(journal, 5 * NS_PER_S, {"boot_id": "s1"})
    assert [again.used_ns(side, 5 * NS_PER_S) // 1_000_000 for side in "AB"] == [
        records[-1][s]["used_ms"] for s in "AB"
    ]
    assert again.state == State.PAUSED and again.balanced(5 * NS_PER_S)


def test_the_dead_clock_told_its_game_moved_ends_it_there_and_no_time_runs_on_it():
    records = dead_clock_game()
    game = next(r for r in records if r["ev"] == "new_game")["seq"]
    assert parse_command(with_crc(f"moved {game} clock-31").encode()).args == (game, "clock-31")
    with pytest.raises(CommandError):
        parse_command(f"moved {game} clock-31".encode())  # it ends a game: only with its CRC
    clock = GameClock(RULES, checkpoint_ms=1000)
    journal = [json.loads(json.dumps(r)) for r in records]
    at = records[-1]["t_ms"] * 1_000_000 + 90 * NS_PER_S  # restarted a while later
    journal += as_read(clock.recover(journal, at, {"boot_id": "b2"}))
    (wrong,) = as_read(clock.moved(at, game + 1, "clock-31", source="hall"))
    assert wrong["ev"] == "error" and "not " + str(game + 1) in wrong["detail"]
    made = as_read(clock.moved(at + NS_PER_S, game, "clock-31", source="hall", by="hall_x_1"))
    (told,) = [r for r in made if r["ev"] == "moved"]
    assert (told["game_seq"], told["to"], told["by"]) == (game, "clock-31", "hall_x_1")
    assert told["state"] == "ended"
    assert clock.view(at + NS_PER_S).notice.kind == "moved"
    used = [told[side]["used_ms"] for side in "AB"]
    later = at + 60 * NS_PER_S
    press(clock, "A", later)
    press(clock, "B", later + 2 * NS_PER_S)
    assert [clock.used_ns(side, later + 9 * NS_PER_S) // 1_000_000 for side in "AB"] == used
    (no,) = as_read(clock.adjust(later + 10 * NS_PER_S, "A", 60_000))  # given on the spare, not here
    assert no["ev"] == "error" and "moved" in no["detail"]
    (again,) = as_read(clock.moved(later + 11 * NS_PER_S, game, "clock-31"))
    assert again["ev"] == "error"
    # restarted once more, it reads the game as ended: moved
    journal += made
    third = GameClock(RULES, checkpoint_ms=1000)
    third.recover(journal, later + 20 * NS_PER_S, {"boot_id": "b3"})
    assert third.state == State.ENDED and third.game.end_reason == "moved"


def called_game():
    """A game on `clock-12`, stopped, its players calling the director (STOP tapped three times)
    when the clock dies: its records, as read."""
    clock = GameClock(RULES)
    made = clock.new_game(0, {"boot_id": "b1"}) + press(clock, "A", NS_PER_S)
    made += press(clock, "STOP", 5 * NS_PER_S)
    for t_s in (6, 6.5, 7):
        made += press(clock, "STOP", int(t_s * NS_PER_S))
    made += clock.advance(10 * NS_PER_S)
    return as_read(made)


def test_an_open_call_goes_to_the_spare_and_stays_open_there_across_a_restart():
    records = called_game()
    (call,) = [r for r in records if r["ev"] == "call"]
    taken = handover("clock-12", records, RULES)
    assert (taken.call.seq, taken.call.taken) == (call["seq"], False)
    line = with_crc(command(taken) + " by=director-1")
    assert f" call={call['seq']}:called " in line and len(line) <= MAX_COMMAND
    assert parse_command(line.encode()).args[6] == (call["seq"], False)
    spare = GameClock(RULES, first_seq=500)
    made = spare.new_game(0, {"boot_id": "s1"}) + spare.take_over(NS_PER_S, taken)
    assert spare.view(NS_PER_S).call == "called"  # CALLED TD on the spare
    journal = [json.loads(json.dumps(r)) for r in as_read(made)]
    again = GameClock(RULES)
    again.recover(journal, 5 * NS_PER_S, {"boot_id": "s1"})
    assert again.view(5 * NS_PER_S).call == "called"
    (answer,) = as_read(again.answer_call(6 * NS_PER_S, call["seq"], "done", source="hall"))
    assert (answer["ev"], answer["call"]) == ("call_answer", call["seq"])
    assert again.view(6 * NS_PER_S).call is None


@pytest.mark.parametrize(
    "word", ["call=x:called", "call=5:maybe", "call=5", "call=5:taken:1", "call=-5:taken"]
)
def test_a_takeover_with_a_call_it_cannot_read_is_refused(word):
    line = with_crc(f"takeover clock-12 811 790 A=1:2:0 B=1:2:0 {word}")
    with pytest.raises(CommandError, match="usage: takeover"):
        parse_command(line.encode())
    twice = with_crc("takeover clock-12 811 790 A=1:2:0 B=1:2:0 call=5:taken call=6:called")
    with pytest.raises(CommandError, match="usage: takeover"):
        parse_command(twice.encode())
