"""Hostile input on the fields added lately: the clock's time service in its retained state (chrony's
offset), the hall's score link (`code`) and a round's start (`set start=MS`). Each with a wrong type,
a huge value, deep nesting and another clock's credentials: a typed error with its reason, and
nothing changed on the clock."""

import json

import pytest

from conftest import tap
from tileclock.clock.timecode import NS_PER_S
from tileclock.device.config_schema import Config
from tileclock.sim.simulator import Simulator
from tileclock.wire.decoder import Reason, WireError
from tileclock.wire.protocol import CommandError, parse_command, with_crc
from tileclock.wire.seal import SealError, seal, unseal
from tileclock.wire.state import StateError, decode_state

S = NS_PER_S
TIME = {"offset_us": -1200, "error_us": 350, "synced": True}
HONEST = {"clock": "t01", "board": "7", "seq": 12, "state": "running", "run": "A", "time": TIME}


def state_of(clock_id="t01", **changes):
    return decode_state(json.dumps({**HONEST, **changes}).encode(), clock_id)


def test_an_honest_time_report_is_taken():
    assert state_of()["time"] == TIME


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        # a wrong type
        ({**HONEST, "time": "synced"}, "wrong_kind"),
        ({**HONEST, "time": {**TIME, "offset_us": "-1200"}}, "wrong_kind"),
        ({**HONEST, "time": {**TIME, "synced": 1}}, "wrong_kind"),
        # huge: past the quarter hour either way, past JavaScript's integers, past any float
        ({**HONEST, "time": {**TIME, "offset_us": 10**9 + 1}}, "wrong_kind"),
        ({**HONEST, "time": {**TIME, "error_us": 2**63}}, "bad_number"),
        (
            '{"clock": "t01", "time": {"offset_us": 1' + "0" * 400 + ', "error_us": 0, "synced": true}}',
            "bad_number",
        ),
        # deep nesting inside the report
        ({**HONEST, "time": {"offset_us": {"us": {"really": {"deep": 1}}}}}, "too_deep"),
    ],
)
def test_a_time_report_out_of_shape_refuses_the_state_with_its_reason(payload, reason):
    text = payload if isinstance(payload, str) else json.dumps(payload)
    with pytest.raises(StateError) as caught:
        decode_state(text.encode(), "t01")
    assert caught.value.reason == reason


def test_a_state_naming_another_clock_is_refused_on_this_clock_s_topic():
    # t02's honest state, published with t01's credentials on t01's topic (the ACL lets t01 write
    # only there): refused, never taken as t02's offset
    with pytest.raises(StateError) as caught:
        state_of("t01", clock="t02")
    assert (caught.value.reason, str(caught.value)) == ("wrong_kind", "wrong_kind: field 'clock' not valid")


BASE = "HTTP://10.0.0.1:8080/S/12"
TOKEN = "ABCD2345"


@pytest.mark.parametrize(
    "line",
    [
        f"code twelve {BASE} {TOKEN}",  # a wrong type: the game's seq a word
        f"code 12 {BASE} {TOKEN.lower()}",  # a token the QR's alphanumeric mode cannot hold
        f"code {'9' * 13} {BASE} {TOKEN}",  # a seq of 13 digits
        f"code 12 {BASE}{'/X' * 40} {TOKEN}",  # a link longer than a panel's code holds
        f"code 12 {BASE}{'(' * 30} {TOKEN}",  # nesting where a link has none
        f"code 12 {BASE} {TOKEN} {TOKEN} {TOKEN}",  # a token a side: two at most
        f"code 12 {BASE} {TOKEN} by=director",
    ],
)
def test_a_hostile_score_link_is_refused_and_the_panels_show_no_code(line):
    with pytest.raises(CommandError):
        parse_command(with_crc(line).encode())
    sim = Simulator(Config())
    try:
        sim.send(with_crc(line), 1 * S)
        assert sim.daemon.commands.score_code.link is None
        errors = [r for r in sim.journal.records() if r["ev"] == "error"]
        assert errors and ("code" in errors[-1]["detail"] or "too long" in errors[-1]["detail"])
    finally:
        sim.close()


@pytest.mark.parametrize(
    "word",
    [
        "start=noon",  # a wrong type
        "start=-5",
        "start=1.7e12",
        "start=" + "9" * 400,  # huge
        "start=99999999999999",  # past the year 2100
        "start=start=1764000000000",  # nested
        "start=",
    ],
)
def test_a_hostile_round_start_is_refused_and_nothing_is_set(word):
    with pytest.raises(CommandError, match="set:|too long"):
        parse_command(with_crc(f"set {word}").encode())
    sim = Simulator(Config())
    try:
        sim.send(with_crc(f"set round=3 {word}"), 1 * S)  # refused whole: not even its round
        records = sim.journal.records()
        assert not [r for r in records if r["ev"] == "set"]
        assert [r for r in records if r["ev"] == "error"]
    finally:
        sim.close()


def test_a_command_sealed_with_another_clock_s_key_opens_on_neither_clock():
    mine, theirs = bytes.fromhex("11" * 32), bytes.fromhex("22" * 32)
    for line in (with_crc(f"code 12 {BASE} {TOKEN}"), with_crc("set start=1764000000000")):
        forged = seal(theirs, "c2", 5, line, 1_764_000_000_000).encode()  # c2's key and counter, sent to c1
        with pytest.raises(SealError, match="not this clock's key"):
            unseal(mine, "c1", forged, 0)
        relabelled = seal(theirs, "c1", 5, line, 1_764_000_000_000).encode()  # c2's key claiming to be for c1
        with pytest.raises(SealError, match="not this clock's key"):
            unseal(mine, "c1", relabelled, 0)


# --- who hears the clock (`speech` in the retained state) and a game moved to a spare (`moved`)


def nested(depth):
    """A JSON list nested `depth` deep: `[[[...]]]`."""
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("speech", "reason"),
    [
        ('"' + "A" * 1_000_000 + '"', Reason.TOO_LARGE),  # a 1 MB string
        (nested(10_000), Reason.TOO_LARGE),  # a 10,000-deep list: its bytes alone are too many
        ('{"a":' * 9_999 + "{}" + "}" * 9_999, Reason.TOO_LARGE),  # a 10,000-deep object
        (nested(1_500), Reason.TOO_DEEP),  # as deep as the state's bytes allow
        ('{"a":' * 600 + "{}" + "}" * 600, Reason.TOO_DEEP),
        ("1", Reason.WRONG_KIND),  # wrong types
        ("true", Reason.WRONG_KIND),
        ('["A"]', Reason.WRONG_KIND),
        ('{"A": true}', Reason.WRONG_KIND),
        ('"ba"', Reason.WRONG_KIND),  # a word no clock says
        ('"A\\u0000"', Reason.WRONG_KIND),  # a control character
    ],
    ids=[
        "1MB",
        "deep-list",
        "deep-object",
        "deep-list-small",
        "deep-object-small",
        "number",
        "bool",
        "list",
        "object",
        "ba",
        "nul",
    ],
)
def test_a_hostile_speech_in_the_state_refuses_the_state_whole(speech, reason):
    honest = json.dumps(HONEST)
    payload = (honest[:-1] + f', "speech": {speech}}}').encode()
    with pytest.raises(StateError) as caught:
        decode_state(payload, "t01")
    assert isinstance(caught.value, WireError) and caught.value.reason == reason
    assert len(str(caught.value)) < 300  # quotes none of it


def test_an_honest_speech_in_the_state_is_taken():
    assert state_of(speech="AB")["speech"] == "AB"


HUGE_GAME = "9" * 200


@pytest.mark.parametrize(
    "args",
    [
        HUGE_GAME + " c2",  # a huge game id: past the line's 120 bytes
        "79" + "0" * 90 + " c2",  # a long game id inside the line: no game has it
        "[[[[[[[[790]]]]]]]] c2",  # nested JSON where the game id goes
        '{"game":790} c2',
        "790 [[[[c2]]]]",  # ... and where the spare goes
        "790 c2\x00",  # control characters
        "790 c2\x1b[2J",
        "790\tc2\x07",
        "790 " + "c" * 33,  # a spare id too long (at most 32)
        "790 " + "c" * 200,
        "-1 c2",  # wrong types
        "seven c2",
        "7.5 c2",
        "790",
        "790 c2 c3",
        "790 c2;rm",
    ],
)
def test_a_hostile_moved_is_refused_and_the_game_goes_on(args):
    line = with_crc(f"moved {args}")
    try:
        parse_command(line.encode("ascii", "replace"))
    except CommandError as error:
        assert len(str(error)) < 300
    else:  # taken as words: then the clock's game has no such seq, refused there
        assert args.startswith("79" + "0" * 90)
    sim = Simulator(Config())
    try:
        tap(sim, "B", 1)  # a game in play: A's clock runs
        before = sim.clock.game.seq, sim.clock.game.state
        sim.send(line, 2 * S)
        records = sim.journal.records()
        assert not [r for r in records if r["ev"] == "moved"]  # the game did not end
        assert [r for r in records if r["ev"] == "error"]  # a clear refusal, on the clock's record
        assert (sim.clock.game.seq, sim.clock.game.state) == before
    finally:
        sim.close()
