"""The one decoder at the edge (tileclock/wire/decoder.py): limits first, then a schema per record,
and a refusal that says why with a reason code. Each hostile input here once crashed a reader."""

import itertools
import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from tileclock.director.records.history import exported_games
from tileclock.wire.decoder import LIMITS, Limits, Reason, WireError, depth, load, load_object
from tileclock.wire.protocol import FieldError, FrameError, frame, unframe, unframe_any
from tileclock.wire.records import RecordError, decode

SIDE = {"used_ms": 1000, "shown": "24:59", "pen": 0}


def record(**fields):
    return {"seq": 7, "ev": "pause", "t_ms": 1000, "button": "STOP", "state": "paused", "run": None} | {
        "A": dict(SIDE),
        "B": dict(SIDE),
        **fields,
    }


def framed(value):
    return frame(json.dumps(value, separators=(",", ":")))


@pytest.fixture
def an_end_record(sim):
    """A real `end` record, from a whole game played on the simulator."""
    records = sim("0 press B\n10 press A\n20 press STOP\n22 hold STOP 2.5\n25 press STOP\n")
    return next(r for r in records if r["ev"] == "end")


def test_a_record_nested_a_thousand_deep_is_refused_as_too_deep_not_a_crash():
    nested = "[" * 1000 + "]" * 1000  # a good record, then deep nesting in a field of its own
    text = json.dumps(record(), separators=(",", ":"))[:-1] + f',"deep":{nested}}}'
    with pytest.raises(FieldError) as caught:
        unframe(frame(text))
    assert caught.value.reason == Reason.TOO_DEEP and caught.value.record is None
    with pytest.raises(RecordError) as caught:
        decode(text)
    assert caught.value.reason == "too_deep"


def test_a_seq_of_five_thousand_digits_is_refused_as_a_bad_number():
    text = json.dumps(record(), separators=(",", ":")).replace('"seq":7', '"seq":' + "9" * 5000)
    with pytest.raises(FieldError) as caught:
        unframe(frame(text))
    assert caught.value.reason == Reason.BAD_NUMBER
    assert len(str(caught.value)) < 200  # the message quotes none of it


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", str(2**63)])
def test_numbers_no_clock_writes_are_refused(number):
    text = json.dumps(record(), separators=(",", ":")).replace('"t_ms":1000', f'"t_ms":{number}')
    with pytest.raises(RecordError) as caught:
        decode(text)
    assert caught.value.reason == Reason.BAD_NUMBER


def test_a_line_over_the_size_limit_is_refused_before_its_crc_is_read():
    huge = framed(record(detail="x" * (LIMITS.max_bytes + 1)))
    with pytest.raises(FrameError) as caught:
        unframe(huge)
    assert caught.value.reason == Reason.TOO_LARGE and not isinstance(caught.value, FieldError)
    with pytest.raises(FrameError) as caught:
        unframe_any(huge.encode())
    assert caught.value.reason == Reason.TOO_LARGE


def test_the_limits_can_be_set():
    line = framed(record())
    assert unframe(line)["seq"] == 7
    with pytest.raises(FrameError) as caught:
        unframe(line, Limits(max_bytes=50))
    assert caught.value.reason == Reason.TOO_LARGE
    with pytest.raises(FieldError) as caught:
        unframe(line, Limits(max_depth=1))
    assert caught.value.reason == Reason.TOO_DEEP


@pytest.mark.parametrize(
    "damage, field",
    [
        (lambda s: s.update(forfeit="x"), "end.summary.forfeit"),
        (lambda s: s.update(forfeit={"player": "A", "reason": 3}), "end.summary.forfeit.reason"),
        (lambda s: s["A"].update(turns="3"), "end.summary.A.turns"),
        (lambda s: s["B"].update(shown="soon"), "end.summary.B.shown"),
        (lambda s: s.update(corrections=[{"player": "C"}]), "end.summary.corrections.0.player"),
        (lambda s: s.update(corrections="none"), "end.summary.corrections"),
        (lambda s: s.update(first=["A"]), "end.summary.first"),
        (lambda s: s.pop("stopped_ms"), "end.summary.stopped_ms"),
    ],
)
def test_an_end_summary_is_checked_field_by_field_and_the_field_is_named(an_end_record, damage, field):
    end = an_end_record
    damage(end["summary"])
    with pytest.raises(FieldError) as caught:
        unframe(framed(end))
    assert caught.value.field == field and caught.value.record["seq"] == end["seq"]
    assert caught.value.reason in (Reason.WRONG_KIND, Reason.MISSING_FIELD)


def test_an_honest_end_record_passes_and_is_far_inside_the_limits(an_end_record):
    end = an_end_record
    end["summary"]["corrections"] = [{"player": "A", "delta_ms": 60000, "t_ms": n} for n in range(12)]
    text = json.dumps(end, separators=(",", ":"))
    assert decode(text) == end
    assert len(text) * 10 < LIMITS.max_bytes and depth(text) + 2 <= LIMITS.max_depth


def test_every_record_of_a_played_game_passes_the_decoder(sim):
    # side A never arrives: a late start, overtime for the absent side, a forfeit, the end
    records = sim("0 down STOP\n0.6 press B\n1 up STOP\n26:00 until\n")
    assert {"late_start", "forfeit", "end"} <= {r["ev"] for r in records}


def test_a_clock_id_that_is_not_a_label_is_refused():
    with pytest.raises(RecordError) as caught:
        decode(json.dumps(record(clock="../../etc")))
    assert caught.value.field == "pause.clock" and caught.value.reason == Reason.WRONG_KIND


def test_depth_counts_brackets_outside_strings_only():
    assert depth('{"a":"[[[[{{{{","b":[1,[2]]}') == 3
    assert depth('"\\"[[["') == 0 and depth("[]") == 1 and depth("7") == 0


def test_an_export_file_with_a_bad_record_is_refused_naming_the_file():
    data = json.dumps([{"board": "3", "records": [record(seq="x")]}]).encode()
    with pytest.raises(ValueError, match=r"^games\.json: .*'seq'"):
        exported_games("games.json", data)
    assert exported_games("games.json", json.dumps([{"board": "3", "records": [record()]}]))[0][1] == "3"


@settings(max_examples=examples(300), derandomize=True, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200)))
def test_any_input_is_a_value_or_a_wire_error_never_anything_else(data):
    try:
        load_object(data)
    except WireError as error:
        assert isinstance(error.reason, Reason) and str(error)


@settings(max_examples=examples(200), derandomize=True, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=3), c),
        max_leaves=30,
    )
)
def test_what_the_decoder_takes_is_what_json_reads(value):
    text = json.dumps(value)
    try:
        assert load(text) == json.loads(text)
    except WireError as error:  # only for a limit it broke
        assert error.reason in (Reason.TOO_DEEP, Reason.BAD_NUMBER)
        assert depth(text) > LIMITS.max_depth or error.reason == Reason.BAD_NUMBER


def careful_load(text, limits=LIMITS):
    """The decoder's checks done the plain way, each on every input: brackets counted outside the
    strings, every integer's digits and range checked by the parser as it meets it."""
    outside = re.sub(r'"(?:[^"\\]|\\.)*"', "", text, flags=re.S)
    levels = max(
        itertools.accumulate(
            {"[": 1, "{": 1, "]": -1, "}": -1}[c] for c in re.sub(r"[^\[\]{}]", "", outside)
        ),
        default=0,
    )
    if levels > limits.max_depth:
        raise WireError(Reason.TOO_DEEP, "deep")

    def integer(digits):
        if (
            len(digits.lstrip("-")) > limits.max_int_digits
            or not limits.min_int <= int(digits) <= limits.max_int
        ):
            raise WireError(Reason.BAD_NUMBER, "number")
        return int(digits)

    def finite(text):
        if not math.isfinite(float(text)):
            raise WireError(Reason.BAD_NUMBER, "number")
        return float(text)

    def constant(name):
        raise WireError(Reason.BAD_NUMBER, "number")

    try:
        return json.loads(text, parse_int=integer, parse_float=finite, parse_constant=constant)
    except json.JSONDecodeError:
        raise WireError(Reason.NOT_JSON, "json") from None


def verdict(decode_, text, *args):
    try:
        return "value", decode_(text, *args)
    except WireError as error:
        return "refused", error.reason


#: pieces of hostile text: long digit runs in strings and out, brackets in strings, escapes,
#: unterminated strings, integers at the edges of the range, a BOM
PIECES = [
    "{", "}", "[", "]", ",", ":", '"', '\\"', "\\", "\ufeff", " ", "-", "1", "0", "9" * 18, "9" * 19,
    "9" * 30, str(2**63 - 1), str(2**63), str(-(2**63)), str(-(2**63) - 1), "1.5", "1e999", "NaN",
    '"a"', '"[[[["', '"' + "7" * 25 + '"', "true", "null",
]  # fmt: skip  # the pieces read best as the plain list they are


@settings(max_examples=examples(1500), derandomize=True, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=24),
    st.sampled_from([LIMITS, Limits(max_depth=2), Limits(min_int=0, max_int_digits=3)]),
)
def test_the_quick_paths_decide_exactly_as_the_careful_checks(pieces, limits):
    text = "".join(pieces)
    assert verdict(load, text, limits) == verdict(careful_load, text, limits)


def test_the_quick_paths_decide_exactly_as_the_careful_checks_on_records_and_their_edges():
    honest = json.dumps(record(), separators=(",", ":"))
    texts = [
        honest,
        honest.replace('"seq":7', '"seq":' + "9" * 19),  # out of range: the careful path finds it
        honest.replace('"seq":7', f'"seq":{2**63 - 1}'),
        honest.replace('"button":"STOP"', '"button":"' + "1" * 40 + '"'),  # a long run, in a string
        honest.replace('"button":"STOP"', '"button":"' + "[" * 40 + '"'),  # deep, in a string
        '{"a":"\\"' + "1" * 30 + '"}',  # an escaped quote: the digits are still in the string
        '{"a":"x,"b":' + "1" * 30 + "}",  # the quotes pair up otherwise: the digits are outside
    ]
    for text in texts:
        assert verdict(load, text) == verdict(careful_load, text), text


@pytest.mark.parametrize(
    "wall_ms", [0, 1_500_000_000_000, 4_102_444_800_001, 2**63 - 1, -1, True, "1764079200000"]
)
@pytest.mark.parametrize("ev, field", [("call", "wall_ms"), ("new_game", "call_wall_ms")])
def test_a_calls_time_of_day_outside_2020_to_2100_refuses_its_record_naming_the_field(ev, field, wall_ms):
    # forged, or an unset wall clock's: the hall would count the call's wait from it (years, or never)
    fields = {
        "call": {"button": "STOP"},
        "new_game": {"rules": "naspa", "time_ms": {"A": 1, "B": 1}, "call": 5},
    }
    with pytest.raises(RecordError) as caught:
        decode(record(ev=ev, **fields[ev], **{field: wall_ms}))
    assert caught.value.reason == Reason.WRONG_KIND and caught.value.field == f"{ev}.{field}"
    assert "is not a time of day 2020 to 2100" in str(caught.value)
    with pytest.raises(FieldError):  # and on the wire: a whole record kept aside, not a crash
        unframe(framed(record(ev=ev, **fields[ev], **{field: wall_ms})))
    for good in (1_577_836_800_000, 1_764_079_200_000, 4_102_444_800_000):
        assert decode(record(ev=ev, **fields[ev], **{field: good}))[field] == good
