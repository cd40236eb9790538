"""The line protocol: framing and integrity, and the command parser under any input."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from tileclock.wire.protocol import CommandError, FrameError, frame, parse_command, unframe, with_crc

SIDE = '{"used_ms":1000,"shown":"24:59","pen":0}'
RECORD = (
    f'{{"seq":7,"ev":"switch","t_ms":1000,"button":"A","state":"running","run":"B","A":{SIDE},"B":{SIDE}}}'
)


def test_a_framed_record_is_still_json_and_unframes_to_itself():
    line = frame(RECORD)
    assert json.loads(line)["crc"] == line[-10:-2]
    assert unframe(line) == json.loads(RECORD)


@given(st.integers(0, len(frame(RECORD)) - 1), st.characters(min_codepoint=32, max_codepoint=126))
def test_any_changed_character_is_caught(position, char):
    line = frame(RECORD)
    changed = line[:position] + char + line[position + 1 :]
    if changed != line:
        with pytest.raises(FrameError):
            unframe(changed)


def test_a_cut_line_is_caught():
    line = frame(RECORD)
    for end in range(len(line) - 1):
        with pytest.raises(FrameError):
            unframe(line[:end])


@pytest.mark.parametrize(
    "line, command",
    [
        (b"status", ("status", ())),
        (b"  STATUS \r", ("status", ())),
        (b"resend 5", ("resend", (5, None))),
        (b"resend 5 9", ("resend", (5, 9))),
        (with_crc("adjust A +60000").encode(), ("adjust", ("A", 60000))),
        (with_crc("adjust b -60000").encode(), ("adjust", ("B", -60000))),
        (with_crc("status").encode(), ("status", ())),
    ],
)
def test_good_commands(line, command):
    parsed = parse_command(line)
    assert (parsed.name, parsed.args) == command


@pytest.mark.parametrize(
    "line, why",
    [
        (b"adjust A +60000", "needs its CRC"),
        (b"adjust A +60000*00000000", "integrity"),
        (with_crc("adjust C +60000").encode(), "usage"),
        (with_crc("adjust A +60500").encode(), "whole seconds"),
        (with_crc("adjust A +3600000").encode(), "at most 10 minutes"),
        (b"resend 9 5", "before the first"),
        (b"resend x", "unknown command"),
        (b"reboot", "unknown command"),
        (b"", "empty"),
        (b"status\x00", "control characters"),
        (b"\xff\xfe", "not ASCII"),
        (b"status " + b"x" * 200, "too long"),
    ],
)
def test_bad_commands_say_why(line, why):
    with pytest.raises(CommandError, match=why):
        parse_command(line)


@settings(max_examples=examples(2000))
@given(st.binary(max_size=200))
def test_noise_is_refused_and_never_adjusts(noise):
    try:
        command = parse_command(noise)
    except CommandError:
        return
    assert command.name in ("status", "resend")


@settings(max_examples=examples(500))
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60))
def test_printable_junk_is_refused_or_read_as_a_read_only_command(text):
    try:
        command = parse_command(text.encode())
    except CommandError:
        return
    assert command.name in ("status", "resend") or "*" in text


def test_round_over_needs_its_crc():
    from tileclock.wire.protocol import CommandError, parse_command, with_crc

    assert parse_command(with_crc("round over").encode()).name == "round_over"
    with pytest.raises(CommandError, match="CRC"):
        parse_command(b"round over")
    with pytest.raises(CommandError, match="unknown"):
        parse_command(with_crc("round overt").encode())


def test_new_game_needs_its_crc_and_may_name_its_action():
    from tileclock.wire.protocol import CommandError, parse_command, with_crc

    command = parse_command(with_crc("new game by=page-3f2a9c1b_12").encode())
    assert (command.name, command.by) == ("new_game", "page-3f2a9c1b_12")
    for line in (b"new game", with_crc("new games").encode(), with_crc("new").encode()):
        with pytest.raises(CommandError):
            parse_command(line)
