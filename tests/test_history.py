"""Reading records back: the one decoder, games in a stream, and a game's view at any instant."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from tileclock.clock.core import GameClock
from tileclock.clock.history import GameSplitter, last_game, split_games, view_at
from tileclock.clock.rules import PROFILES
from tileclock.clock.timecode import NS_PER_MS, format_clock, parse_clock
from tileclock.director.records.gamefiles import NoGames, load_games
from tileclock.wire.protocol import FrameError, frame, unframe
from tileclock.wire.records import RecordError, decode, encode

SIDE = {"used_ms": 0, "shown": "25:00", "pen": 0}


def record(seq, ev, **fields):
    return {"seq": seq, "ev": ev, "t_ms": 0, **fields, "state": "ready", "run": None, "A": SIDE, "B": SIDE}


@pytest.mark.parametrize(
    "broken, why",
    [
        ({"ev": None}, "'ev'"),
        ({"t_ms": "0"}, "'t_ms'"),
        ({"state": "sleeping"}, "'state'"),
        ({"A": {"used_ms": 0, "shown": "25:00"}}, "'pen' missing"),
        ({"player": "C"}, "'player'"),
    ],
)
def test_decode_names_the_field_that_is_wrong(broken, why):
    good = record(3, "overtime", player="A")
    decode(good)
    with pytest.raises(RecordError, match=why):
        decode(good | broken)


def test_a_record_with_a_valid_integrity_field_but_a_missing_field_is_a_frame_error():
    body = '{"seq":1,"t_ms":0,"state":"ready","run":null}'
    with pytest.raises(FrameError, match="'ev' missing"):
        unframe(frame(body))


def test_an_unknown_event_from_a_newer_clock_passes_with_its_common_fields_checked():
    assert decode(record(4, "hologram", colour="blue"))["colour"] == "blue"


def test_every_record_a_clock_writes_decodes_to_itself():
    clock = GameClock(PROFILES["naspa"], times_s={"A": 1})
    written = clock.new_game(0, boot={"board": "7", "boot_id": "x"})
    for t_ms, button, down in [
        (0, "B", True),
        (100, "B", False),
        (700_000, "STOP", True),
        (700_100, "STOP", False),
    ]:
        written += clock.edge(button, down, t_ms * NS_PER_MS)
    written += clock.adjust(700_200 * NS_PER_MS, "B", 60_000) + clock.status(700_300 * NS_PER_MS)
    assert {r.ev for r in written} >= {"boot", "new_game", "start", "overtime", "penalty", "forfeit", "end"}
    for r in written:
        assert decode(encode(r)) == r.as_dict()


@given(st.integers(-6000, 6000))
def test_parse_clock_is_the_inverse_of_format_clock(seconds):
    assert parse_clock(format_clock(seconds)) == seconds


def test_a_boot_leads_the_game_it_opens_and_stays_inside_the_game_it_takes_up_again():
    stream = [
        record(0, "boot", boot_id="one"),
        record(1, "new_game", rules="naspa", time_ms={"A": 1, "B": 1}, mono_ns=5),
        record(2, "boot", boot_id="one"),
        record(3, "recovered", reason="restart", was_running=None, mono_ns=5),
        record(4, "boot", boot_id="two"),
        record(5, "new_game", rules="naspa", time_ms={"A": 1, "B": 1}, mono_ns=9),
        record(6, "status"),
    ]
    first, second = split_games(stream)
    assert [r["seq"] for r in first.lead] == [0] and [r["seq"] for r in first.records] == [1, 2, 3]
    assert [r["seq"] for r in second.lead] == [4] and [r["seq"] for r in second.records] == [5, 6]
    assert first.origin_boot_id() == "one" and second.origin_boot_id() == "two"
    assert last_game(stream) is not None and last_game(stream).seq == 5
    assert last_game(stream[:1]) is None


def test_a_boot_is_placed_by_the_record_after_it_when_streaming():
    splitter = GameSplitter()
    assert splitter.add(record(0, "boot")) == [] and len(splitter.pending()) == 1
    placed = splitter.add(record(1, "new_game", rules="naspa", time_ms={"A": 1, "B": 1}))
    assert [(game.seq, r["seq"]) for game, r in placed] == [(1, 0), (1, 1)]
    assert splitter.add(record(2, "status"))[0][0].seq == 1


EDGES = st.lists(
    st.tuples(st.integers(0, 200_000), st.sampled_from(["A", "B", "STOP"]), st.booleans()), max_size=40
)


@settings(max_examples=examples(150))
@given(st.sampled_from(sorted(PROFILES)), EDGES, st.lists(st.integers(0, 2_000_000), max_size=8))
def test_replay_shows_what_the_clock_showed_at_every_instant(rules, edges, probes_ms):
    """The view rebuilt from the records equals the live clock's view, at any whole millisecond."""
    clock = GameClock(PROFILES[rules], times_s={"A": 60, "B": 90})
    records = clock.new_game(0)
    t_ms = 0
    views = {}
    steps = [(gap, button, down) for gap, button, down in edges] + [
        (p, None, None) for p in sorted(probes_ms)
    ]
    for gap, button, down in steps:
        t_ms += gap
        if button is None:
            records += clock.advance(t_ms * NS_PER_MS)
            # a change being told from a bounce or a glitch shows once taken (dated at its first
            # edge), so the live view is compared only with no contact timer left to run
            if not list(clock.contacts.timers()):
                views[t_ms] = clock.view(t_ms * NS_PER_MS)
        else:
            records += clock.edge(button, down, t_ms * NS_PER_MS)
    games = split_games([r.as_dict() for r in records])
    if len(games) != 1:
        return  # a new game was started: the probes may belong to either
    for at_ms, live in views.items():
        replayed, _, _ = view_at(games[0], at_ms=at_ms)
        assert (replayed.state, replayed.run, replayed.A, replayed.B) == (
            live.state,
            live.run,
            live.A,
            live.B,
        )


def test_replay_of_a_game_played_under_a_changed_round_limit_counts_down_that_limit():
    from tileclock.clock.rules import profile

    clock = GameClock(profile("school", {"round_limit_s": 120}))  # a director's 2:00 round
    records = clock.new_game(0) + clock.edge("B", True, 10**9) + clock.edge("B", False, 10**9 + 10**8)
    records += clock.status(60 * 10**9)
    [game] = split_games([record.as_dict() for record in records])
    view, _, _ = view_at(game, at_ms=60_000)
    assert view.round_left_s == clock.view(60 * 10**9).round_left_s == 120 - 59


@pytest.mark.parametrize("changes", [{"bogus": 1}, {"name": "naspa2"}])
def test_replay_of_a_game_under_a_rules_setting_it_does_not_know_says_so_in_words(tmp_path, changes):
    """A `new_game` naming a rules setting this version does not know (a newer clock's, or a damaged
    record) is refused by replay with the setting named, never a traceback."""
    from support.command_line import run

    clock = GameClock(PROFILES["naspa"])
    records = clock.new_game(0) + clock.edge("B", True, 10**9) + clock.edge("B", False, 10**9 + 10**8)
    lines = [record.as_dict() for record in records + clock.status(20 * 10**9)]
    lines[0]["rules_set"] = changes
    log = tmp_path / "game.log"
    log.write_text("".join(frame(json.dumps(line)) + "\n" for line in lines))
    code, out, err = run(["replay", str(log), "--at", "0:15"])
    assert code == 2 and err.strip() == f"tileclock: unknown rules settings {sorted(changes)}"


def test_the_audit_trail_beside_the_games_is_no_game_file(tmp_path):
    """The hall keeps audit.log in its records folder: reading the games there leaves it alone, so
    a folder with no game yet says so, not that audit.log could not be read (the TSH queue's
    pass quietly skips such a round)."""
    (tmp_path / "audit.log").write_text('{"action":"lock","by":"page-1"}\n', encoding="utf-8")
    with pytest.raises(NoGames, match="no recorded game there"):
        load_games([str(tmp_path)])
