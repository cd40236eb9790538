"""A clock's retained state on the hall's broker, held to its shape before the director's page uses it
(docs/hall.md, "What the hall trusts"), and the keys and seals of the hall's commands.

A state refused is refused whole with a reason and the field named, so the page shows the clock as
sending nothing valid rather than a wrong time.
"""

import json

import pytest

from tileclock.wire.decoder import Reason, WireError
from tileclock.wire.seal import SealError, key_bytes, read_keys, seal, unseal
from tileclock.wire.state import StateError, decode_state

HONEST = {
    "clock": "t01",
    "board": "7",
    "table": "12b",
    "round": 3,
    "seq": 1841,
    "state": "running",
    "run": "B",
    "ev": "switch",
    "A": {"used_ms": 61_000, "pen": 0, "shown": "24:59"},
    "B": {"used_ms": 1_500_000, "pen": 10, "shown": "-0:25"},
    "faults": {"journal": "disk full"},
}


def decoded(**changes):
    state = dict(HONEST, **changes)
    return decode_state(json.dumps({k: v for k, v in state.items() if v is not ...}).encode(), "t01")


def refused(**changes):
    with pytest.raises(StateError) as caught:
        decoded(**changes)
    return caught.value


def test_an_honest_state_is_read_field_for_field():
    assert decoded() == {k: v for k, v in HONEST.items() if k != "clock"}


def test_a_table_is_a_label_or_a_number_up_to_9999_and_a_board_only_a_label():
    assert decoded(table=9999)["table"] == 9999
    assert decoded(table=0)["table"] == 0
    assert str(refused(table=10000)) == "wrong_kind: field 'table' not valid"
    assert str(refused(board=5)) == "wrong_kind: field 'board' not valid"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("round", 10000),
        ("round", -1),
        ("seq", 2**53),
        ("seq", True),
        ("state", "STATE"),
        ("run", "C"),
        ("ev", "not a label"),
        ("clock", "t02"),
        ("faults", ["journal"]),
        ("time", {"offset_us": 1.5, "error_us": 0, "synced": True}),
        ("time", {"offset_us": 0, "error_us": 0, "synced": "yes"}),
    ],
)
def test_a_field_out_of_shape_refuses_the_state_and_is_named(field, value):
    error = refused(**{field: value})
    assert error.reason == "wrong_kind" and str(error) == f"wrong_kind: field {field!r} not valid"


@pytest.mark.parametrize(
    "side",
    [
        {"pen": 0, "shown": "1:00"},
        {"used_ms": 0, "shown": "1:00"},
        {"used_ms": 0, "pen": 0},
        {"used_ms": 0, "pen": 0, "shown": "1 min"},
        {"used_ms": -5, "pen": 0, "shown": "1:00"},
        "24:59",
    ],
)
def test_a_side_with_a_figure_missing_or_out_of_shape_is_refused(side):
    assert str(refused(A=side)) == "wrong_kind: field 'A' not valid"


def test_faults_are_kept_as_sent_within_their_limits():
    assert decoded(faults={"link": "x" * 200})["faults"] == {"link": "x" * 200}
    assert decoded(faults=...)["faults"] == {}
    for faults in ({"link": "x" * 201}, {"p" * 33: "x"}, {"link": 5}, {str(n): "x" for n in range(17)}):
        assert str(refused(faults=faults)) == "wrong_kind: field 'faults' not valid"


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        (b"x" * 5000, "too_large: 5000 bytes (at most 4096)"),
        (b"[1]", "not_object: not a JSON object"),
        (b'{"a":' * 6 + b"1" + b"}" * 6, "too_deep: nested 6 deep (at most 4)"),
    ],
)
def test_a_payload_the_decoder_refuses_says_why(payload, said):
    with pytest.raises(StateError) as caught:
        decode_state(payload, "t01")
    assert str(caught.value) == said
    # a refusal at the edge like any other: a WireError with its decoder's reason code
    assert isinstance(caught.value, WireError) and caught.value.reason == Reason(said.split(":")[0])


KEY = "0123456789abcdef" * 4


def test_a_keys_file_with_comments_and_blank_lines_between_keys_reads_every_key():
    text = f"# the hall's keys\nt01 {KEY}\n\n# the second board\nt02 {KEY[::-1]}  # spare\n"
    assert read_keys(text) == {"t01": bytes.fromhex(KEY), "t02": bytes.fromhex(KEY[::-1])}


def test_a_bad_key_names_its_line_and_how_to_make_one():
    with pytest.raises(ValueError) as caught:
        read_keys(f"t01 {KEY}\nt02 {KEY[:-1]}\n")
    assert (
        str(caught.value) == "line 2: a key is 64 hex digits (tileclock hall-setup makes one for each clock)"
    )
    with pytest.raises(ValueError, match="^a key is 64 hex digits"):
        key_bytes(KEY.upper())


def test_an_unsealed_command_is_refused_saying_what_a_seal_looks_like():
    key = key_bytes(KEY)
    assert unseal(key, "t01", seal(key, "t01", 5, "pause", 1_764_000_000_000).encode(), 4) == (
        5,
        1_764_000_000_000,
        b"pause",
    )
    with pytest.raises(SealError) as caught:
        unseal(key, "t01", b"pause", 4)
    assert str(caught.value) == "refused: a command without this clock's seal (sig COUNTER MADE MAC COMMAND)"
    assert isinstance(caught.value, WireError) and caught.value.reason == Reason.BAD_COMMAND


@pytest.mark.parametrize("key", ["speech", "large"])
def test_who_hears_the_clock_or_has_large_digits_is_taken_as_said_and_anything_else_refuses_the_state(key):
    assert [decoded(**{key: said})[key] for said in ("", "A", "B", "AB")] == ["", "A", "B", "AB"]
    assert key not in decoded()  # an older clock: not said
    for bad in ("BA", "C", "off", 1, ["A"]):
        assert key in str(refused(**{key: bad}))


def test_a_self_test_is_taken_as_said_and_one_out_of_shape_refuses_the_state():
    said = {"result": "fail", "failed": ["A not pressed", "STOP chatter"]}
    assert decoded(selftest=said)["selftest"] == said
    assert "selftest" not in decoded()  # never tested since its start: not said
    for bad in (
        {"result": "maybe", "failed": []},
        {"result": "pass"},
        "pass",
        {"result": "fail", "failed": ["x" * 41]},
    ):
        assert "selftest" in str(refused(selftest=bad))
