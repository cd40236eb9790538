"""The wire's one decoder on what issue 30 brought from outside: a board's call and the director's
answers (records from a clock), the audit trail's lines and the saved round (files in the records
folder anyone can edit). Each hostile case is a typed refusal naming its reason, never a crash and
never taken; another clock's call is kept aside by the hall (tests/test_hall_calls.py)."""

import json

import pytest

from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.audit_read import read
from tileclock.wire.decoder import Reason, WireError
from tileclock.wire.director_files import decode_audit_line, decode_round
from tileclock.wire.records import RecordError, decode

SIDE = {"used_ms": 1000, "shown": "24:59", "pen": 0}
DEEP = "[" * 3000 + "]" * 3000


def record(ev, **fields):
    return {"seq": 9, "ev": ev, "t_ms": 5000, "state": "paused", "run": None, "A": SIDE, "B": SIDE, **fields}


CALL = record("call", button="STOP")
ANSWER = record("call_answer", call=9, answer="taken", source="hall", by="page-3f2a9c1b")


def test_honest_calls_and_answers_pass():
    assert decode(json.dumps(CALL))["ev"] == "call"
    assert decode(json.dumps(ANSWER))["by"] == "page-3f2a9c1b"


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"call": "9"}, "call_answer.call"),  # a seq is a number
        ({"call": -1}, "call_answer.call"),
        ({"call": True}, "call_answer.call"),
        ({"answer": "maybe"}, "call_answer.answer"),
        ({"answer": ["taken"]}, "call_answer.answer"),
        ({"by": "<script>"}, "call_answer.by"),  # who asked: a label only
        ({"by": "x" * 40}, "call_answer.by"),
        ({"by": {"session": "p"}}, "call_answer.by"),
        ({"source": 7}, "call_answer.source"),
    ],
)
def test_an_answer_of_the_wrong_kind_is_refused_naming_its_field(fields, field):
    with pytest.raises(RecordError) as caught:
        decode(json.dumps({**ANSWER, **fields}))
    assert caught.value.reason == Reason.WRONG_KIND and caught.value.field == field


@pytest.mark.parametrize(
    "line, reason",
    [
        (json.dumps({**CALL, "button": 3}), Reason.WRONG_KIND),
        (json.dumps({k: v for k, v in CALL.items() if k != "button"}), Reason.MISSING_FIELD),
        (json.dumps({**CALL, "note": "x" * 70_000}), Reason.TOO_LARGE),
        (json.dumps({**CALL, "note": "DEEP"}).replace('"DEEP"', DEEP), Reason.TOO_DEEP),
        (json.dumps({**ANSWER, "call": 0}).replace('"call": 0', '"call": ' + "9" * 5000), Reason.BAD_NUMBER),
        (json.dumps({**CALL, "clock": "../c1"}), Reason.WRONG_KIND),
    ],
)
def test_a_hostile_call_record_is_a_typed_refusal(line, reason):
    with pytest.raises(RecordError) as caught:
        decode(line)
    assert caught.value.reason == reason


def test_the_audit_trail_s_own_lines_pass_and_read_back(tmp_path):
    log = AuditLog(tmp_path, clock=lambda: 1_764_079_200.25)
    board = {"board": "12", "table": "12", "round": 3, "A": {"shown": "3:10"}, "B": {"shown": "-0:43"}}
    entry = log.record("adjust", "page-3f2a9c1b", "127.0.0.1", "adjust B +60000 by=page-3f2a9c1b", "c12",
                       board, {"side": "B", "delta_ms": 60000})  # fmt: skip  # the call on two lines, its arguments in order
    assert decode_audit_line(json.dumps(entry)) == entry
    assert read(tmp_path) == [{**entry, "outcomes": {}}]


GOOD_LINE = {
    "at": "2025-11-25T14:03:00.250+00:00",
    "wall_ms": 1_764_079_380_250,
    "by": "page-3f2a9c1b",
    "addr": "127.0.0.1",
    "action": "adjust",
    "command": "adjust B +60000 by=page-3f2a9c1b",
    "clock": "c12",
    "changed": {"side": "B", "delta_ms": 60000},
}


@pytest.mark.parametrize(
    "line, reason",
    [
        ({**GOOD_LINE, "wall_ms": "soon"}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "by": "page 1; rm -rf"}, Reason.WRONG_KIND),  # who: a label
        ({**GOOD_LINE, "action": "format_disk"}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "changed": "all of it"}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "clock": "../../etc"}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "at": "yesterday"}, Reason.WRONG_KIND),
        ({k: v for k, v in GOOD_LINE.items() if k != "by"}, Reason.MISSING_FIELD),
        ({**GOOD_LINE, "command": "x" * 9000}, Reason.TOO_LARGE),
        ({**GOOD_LINE, "changed": {"a": {"b": {"c": {"d": 1}}}}}, Reason.TOO_DEEP),
        ({**GOOD_LINE, "wall_ms": 10**30}, Reason.BAD_NUMBER),
        ([GOOD_LINE], Reason.NOT_OBJECT),
        ({**GOOD_LINE, "id": "page-1_2; rm"}, Reason.WRONG_KIND),  # an action's id: a label
        ({**GOOD_LINE, "action": "outcome", "of": "x", "outcome": "maybe"}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "action": "outcome", "of": "../etc", "outcome": "applied"}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "action": "outcome", "of": "x_1", "outcome": "applied", "seq": -1}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "reason": "x" * 301}, Reason.WRONG_KIND),
        ({**GOOD_LINE, "online": "yes"}, Reason.WRONG_KIND),
    ],
)
def test_a_hostile_audit_line_is_refused_and_skipped_never_fatal(tmp_path, line, reason):
    with pytest.raises(WireError) as caught:
        decode_audit_line(json.dumps(line))
    assert caught.value.reason == reason
    (tmp_path / "audit.log").write_text(json.dumps(line) + "\n" + json.dumps(GOOD_LINE) + "\n\xff\n")
    refused = []
    assert read(tmp_path, refused) == [{**GOOD_LINE, "outcomes": {}}]  # the honest line stands
    assert [number for number, _ in refused] == [1, 3]


ROUND = {
    "v": 1,
    "round": 3,
    "start_ms": 1_764_079_200_000,
    "start": "14:00:00",
    "boards": ["12"],
    "clocks": ["c12"],
}


@pytest.mark.parametrize(
    "saved, reason",
    [
        ({**ROUND, "round": 0}, Reason.WRONG_KIND),
        ({**ROUND, "round": 100}, Reason.WRONG_KIND),
        ({**ROUND, "start": "2pm"}, Reason.WRONG_KIND),
        ({**ROUND, "boards": "12"}, Reason.WRONG_KIND),
        ({**ROUND, "boards": ["12"] * 1001, "clocks": ["c1"] * 1001}, Reason.WRONG_KIND),
        ({**ROUND, "clocks": ["c12", "c13"]}, Reason.WRONG_KIND),  # boards and clocks pair up
        ({**ROUND, "clocks": [5]}, Reason.WRONG_KIND),
        ({**ROUND, "clocks": [{"id": "c12"}]}, Reason.TOO_DEEP),
        ({**ROUND, "boards": [["12"]]}, Reason.TOO_DEEP),
        ({**ROUND, "start_ms": -5}, Reason.WRONG_KIND),
        ({**ROUND, "v": 2}, Reason.WRONG_KIND),
    ],
)
def test_a_hostile_saved_round_is_a_typed_refusal(saved, reason):
    assert decode_round(json.dumps(ROUND).encode())["round"] == 3
    with pytest.raises(WireError) as caught:
        decode_round(json.dumps(saved).encode())
    assert caught.value.reason == reason
