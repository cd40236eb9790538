"""Taking up the last game is a function of the journal's records (issue 26 point 1): the same
records give the same game, the records are left as they were, and the game taken up after a
restart is the one replay rebuilds from them (`history.rebuild`)."""

import copy
import json

from tileclock.clock.core import GameClock
from tileclock.clock.history import last_game, rebuild
from tileclock.clock.recovery import take_up
from tileclock.clock.rules import PROFILES
from tileclock.clock.state import State

NS_PER_S = 10**9
RULES = PROFILES["naspa"]
START_NS = {"A": RULES.time_s * NS_PER_S, "B": RULES.time_s * NS_PER_S}


def played():
    """A game's records as the journal holds them (A runs at the end), and the last instant."""
    clock = GameClock(RULES, checkpoint_ms=1000)
    made = clock.new_game(5 * NS_PER_S, {"boot_id": "b1"})
    t_ns = 6 * NS_PER_S
    for button in "BABAB":
        made += clock.edge(button, True, t_ns) + clock.edge(button, False, t_ns + 50_000_000)
        t_ns += 7 * NS_PER_S + 123_457
    made += clock.advance(t_ns)
    return [json.loads(json.dumps(record.as_dict())) for record in made], t_ns


def test_the_same_records_give_the_same_game_and_are_left_as_they_were():
    records, t_ns = played()
    kept = copy.deepcopy(records)
    first = take_up(records, t_ns + NS_PER_S, {"boot_id": "b1"}, RULES, START_NS)
    again = take_up(records, t_ns + NS_PER_S, {"boot_id": "b1"}, RULES, START_NS)
    assert records == kept
    assert first.game == again.game and first.next_seq == again.next_seq == records[-1]["seq"] + 1
    assert first.game.run == "A" and first.down == {"reason": "restart", "down_ms": 1000}


def test_after_a_restart_the_game_taken_up_is_the_one_replay_rebuilds():
    records, t_ns = played()
    taken = take_up(records, t_ns + 3 * NS_PER_S, {"boot_id": "b1"}, RULES, START_NS)
    origin = 5 * NS_PER_S  # the game's new_game, in this boot
    assert taken.same_boot and taken.notes == []
    assert taken.game == rebuild(last_game(records).records, origin, RULES)
    assert taken.game.used_ns("A", t_ns) == rebuild(last_game(records).records, origin, RULES).used_ns(
        "A", t_ns
    )


def test_after_a_power_cut_the_game_is_stopped_as_its_newest_record_left_it():
    records, t_ns = played()
    taken = take_up(records, 10**15, {"boot_id": "b2"}, RULES, START_NS)
    newest = records[-1]
    assert not taken.same_boot and taken.was_running == "A"
    assert taken.game.state == State.PAUSED
    for side in "AB":
        # to the millisecond its instant is floored to
        assert abs(taken.game.used_ns(side, 10**15) // 1_000_000 - newest[side]["used_ms"]) <= 1
    assert taken.down == {"reason": "power_cut", "uncertain_ms": None}
