"""The director's `set` command and the journal's marks and segment checks, at the wire's edge
(docs/protocol.md): what a director types is taken or refused in words, never crashes the clock."""

import json

import pytest

from tileclock.wire import segments
from tileclock.wire.protocol import CommandError, frame, parse_command, with_crc

LAST_WALL_MS = 4_102_444_800_000  # 2100-01-01: the latest wall time `set` takes


def set_values(text):
    return parse_command(with_crc(text).encode()).args[0]


def test_set_takes_each_of_its_values_at_the_ends_of_their_ranges():
    assert set_values(f"set wall={LAST_WALL_MS}") == {"wall_ms": LAST_WALL_MS}
    assert set_values("set round=1 table=12b") == {"round": 1, "table": "12b"}
    assert set_values("set a=25:00 B=3:05") == {"times_s": {"A": 1500, "B": 185}}
    assert [set_values(f"set speech={v}") for v in ("A", "b", "BA", "off")] == [
        {"speech": s} for s in ("A", "B", "AB", "")
    ]
    assert set_values("set large=b speech=A") == {"large": "B", "speech": "A"}


@pytest.mark.parametrize(
    "word",
    [
        f"wall={LAST_WALL_MS + 1}",
        "round=0",
        "round=1000",
        "c=1:00",
        "colour=red",
        "speech=C",
        "speech=",
        "large=ON",
    ],
)
def test_set_refuses_what_it_does_not_know_naming_what_it_does(word):
    with pytest.raises(CommandError) as caught:
        set_values(f"set {word}")
    assert str(caught.value) == (
        f"set: {word!r} (known: wall=MS_SINCE_1970, start=MS_SINCE_1970, round=1-999, "
        "table=LABEL, A=m:ss, B=m:ss, speech=A|B|AB|off, large=A|B|AB|off)"
    )


def test_a_mark_set_again_leaves_one_mark_however_many_a_crash_left(tmp_path):
    for value in (3, 7, 9):  # a crash between a rename and an unlink can leave several
        (tmp_path / f"{segments.COLLECTED}{value}").touch()
    segments.set_mark(str(tmp_path), segments.COLLECTED, 12)
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"{segments.COLLECTED}12"]
    assert segments.read_mark(str(tmp_path), segments.COLLECTED) == 12


def test_a_record_out_of_order_in_a_segment_is_named_by_line_and_seq(tmp_path):
    side = {"used_ms": 0, "shown": "25:00", "pen": 0}

    def line(seq):
        body = {"seq": seq, "ev": "pause", "t_ms": 0, "button": "STOP", "state": "paused", "run": None}
        return frame(json.dumps(body | {"A": side, "B": side})) + "\n"

    path = tmp_path / segments.segment_name(5)
    path.write_text(line(5) + line(7) + line(6))
    assert segments.Segment(str(path)).problems == [(3, "seq 6 after 7")]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("round over", "round over ends the game: it needs its CRC (round over*xxxxxxxx)"),
        ("reopen", "reopen changes the game: it needs its CRC (reopen*xxxxxxxx)"),
        ("late a", "late starts a clock: it needs its CRC (late A*xxxxxxxx)"),
        ("late BOTH", "late starts a clock: it needs its CRC (late both*xxxxxxxx)"),
        ("set round=3", "set changes the game: it needs its CRC (set round=3*xxxxxxxx)"),
        ("late C", "usage: late A|B|both (the absent side, or both)"),
        ("reopen*00000000", "integrity check failed"),
    ],
)
def test_a_command_that_changes_the_game_without_its_crc_is_refused_showing_how_to_send_it(line, said):
    with pytest.raises(CommandError) as caught:
        parse_command(line.encode())
    assert str(caught.value) == said


@pytest.mark.parametrize(("word", "player"), [("a", "A"), ("B", "B"), ("Both", "both")])
def test_late_names_the_absent_side_or_both(word, player):
    from tileclock.wire.protocol import Command

    assert parse_command(with_crc(f"late {word}").encode()) == Command("late", (player,))
    assert parse_command(with_crc("reopen").encode()) == Command("reopen")


def test_a_record_line_refused_says_why_in_words_the_rejects_file_keeps():
    from tileclock.wire.protocol import FrameError, unframe

    for line, said in [
        (b"\xff\xfe", "not ASCII or UTF-8 text"),
        (b"x" * 100_000, "100000 bytes (at most 65536)"),
        ('{"seq":0}', "no integrity field"),
        (frame('{"seq": 1e999}'), "the number '1e999' is not finite"),
    ]:
        with pytest.raises(FrameError) as caught:
            unframe(line)
        assert str(caught.value) == said


def test_a_known_event_with_a_field_out_of_shape_is_refused_quoting_the_field_and_its_value():
    from tileclock.wire.records import RecordError, decode

    side = {"used_ms": 0, "shown": "1:00", "pen": 0}
    record = {"seq": 0, "ev": "pause", "t_ms": 0, "state": "paused", "run": None, "A": side, "B": side}
    with pytest.raises(RecordError) as caught:
        decode(json.dumps(record | {"button": 7}))
    assert str(caught.value) == "pause: field 'button' = 7 is not a button"
    with pytest.raises(RecordError) as caught:
        decode(json.dumps(record | {"button": "A", "t_ms": "x"}))  # a common field: named by its event too
    assert str(caught.value) == "pause: field 't_ms' = 'x' is not a int"


def test_a_side_s_late_penalty_is_in_the_record_beside_its_whole_penalty():
    from tileclock.wire.records import SideState

    side = SideState(used_ms=61_000, shown="23:59", pen=10, late_pen=10)
    assert side.as_dict() == {"used_ms": 61_000, "shown": "23:59", "pen": 10, "late_pen": 10}
