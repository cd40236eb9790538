"""One clock's session on the director's side (director/follow/session.py), alone: a store on a temporary
folder and a transport that only keeps what is sent, the lines a clock would see on its port or topic."""

import json

import pytest

from tileclock.director.follow.session import ClockSession
from tileclock.director.follow.store import RecordStore
from tileclock.wire.protocol import frame, parse_command, unframe

SIDE = {"used_ms": 0, "shown": "25:00", "pen": 0}


class Wire:
    """A transport that keeps every line sent; strict: a line must be one the clock would parse."""

    def __init__(self, name="hall:c1"):
        self.name = name
        self.sent = []

    def send(self, line):
        parse_command(line.encode("ascii"))  # the clock's own parser: a malformed command fails here
        self.sent.append(line)


class Clock:
    """Framed records of clock `c1`, numbered in order."""

    def __init__(self, clock_id="c1"):
        self.clock_id = clock_id
        self.seq = 0

    def line(self, ev, **fields):
        body = {"seq": self.seq, "clock": self.clock_id, "ev": ev, "t_ms": self.seq * 1000, **fields}
        body |= {"state": "paused", "run": None, "A": SIDE, "B": SIDE}
        self.seq += 1
        return frame(json.dumps(body, separators=(",", ":")))

    def game(self):
        """A whole game: new_game, a pause, its end."""
        summary = {side: {**SIDE, "overtime_s": 0, "turns": 0, "lost_on_time": False} for side in "AB"}
        return [
            self.line("new_game", rules="naspa", time_ms={"A": 1500000, "B": 1500000}),
            self.line("pause", button="STOP"),
            self.line("end", reason="confirmed", summary={**summary, "stopped_ms": 0, "corrections": []}),
        ]


class Now:
    def __init__(self):
        self.s = 0.0

    def __call__(self):
        return self.s


@pytest.fixture
def parts(tmp_path):
    now = Now()
    wire = Wire()
    session = ClockSession("c1", RecordStore(str(tmp_path / "out")), wire, clock=now)
    return session, wire, now


def take(session, line):
    record = unframe(line)
    log = session.take(record, line)
    if log is not None:
        session.heard(record)
        session.settle(record)
    return log


def test_a_whole_game_in_order_is_stored_and_acknowledged_once(parts):
    session, wire, _ = parts
    lines = Clock().game()
    for line in lines:
        take(session, line)
    assert session.log.expected == 3 and session.log.games == 1
    assert [line.partition("*")[0] for line in wire.sent] == ["ack 2"]
    take(session, lines[1])  # a duplicate changes nothing and asks nothing
    session.ask()
    assert len(wire.sent) == 1 and session.log.duplicates == 1


def test_a_gap_is_asked_for_once_then_again_only_when_nothing_moves(parts):
    session, wire, now = parts
    clock = Clock()
    lines = [clock.line("pause", button="STOP") for _ in range(6)]
    for line in lines[:2] + lines[4:]:
        take(session, line)
    session.ask()
    session.ask()
    assert wire.sent == ["resend 2 3"]
    now.s = 2.0  # no progress for the first wait: asked again
    session.ask()
    assert wire.sent == ["resend 2 3", "resend 2 3"]
    take(session, lines[2])
    take(session, lines[3])
    now.s = 100.0
    session.ask()
    assert len(wire.sent) == 2 and session.log.expected == 6


def test_the_records_a_clock_names_are_asked_for_though_none_came(parts):
    session, wire, _ = parts
    session.named(41)  # its answer to `status`: it holds up to 41, and nothing came yet
    session.ask()
    assert wire.sent == ["resend 0 41"]


def test_a_lost_tail_is_asked_for_at_once_unless_records_wait_for_a_gap(parts):
    session, wire, _ = parts
    clock = Clock()
    lines = [clock.line("pause", button="STOP") for _ in range(5)]
    take(session, lines[0])
    session.tail_lost(4)
    assert wire.sent == ["resend 1 4"]
    take(session, lines[3])  # now one waits for the gap: the gap plan asks, not the tail
    session.tail_lost(4)
    assert wire.sent == ["resend 1 4"]


def test_a_record_of_another_clock_is_refused_with_its_reason_and_marks_nothing(parts, tmp_path):
    session, wire, _ = parts
    line = Clock("c2").line("pause", button="STOP")
    assert session.take(unframe(line), line) is None
    assert "c2" not in session.store.clocks and "c1" not in session.store.clocks
    rejected = json.loads((tmp_path / "out" / "rejects.log").read_text())
    assert rejected["reason"] == "foreign_clock" and rejected["from"] == "hall:c1"
    assert "'c2'" in rejected["detail"] and rejected["line"] == line


def test_a_refused_resend_is_stepped_over_from_the_field_the_clock_sends(parts):
    session, wire, _ = parts
    clock = Clock()
    clock.seq = 10  # the clock pruned 0-9
    take(session, clock.line("error", detail="(words the director does not parse)", holds=[10, 10]))
    assert session.log.expected == 11 and session.log.gap() is None
    session.ask()
    assert wire.sent == []


def test_reconnecting_forgets_what_was_asked(parts):
    session, wire, _ = parts
    session.named(3)
    session.ask()
    session.ask()
    session.reconnected()
    session.ask()
    assert wire.sent == ["resend 0 3", "resend 0 3"]


def test_a_fresh_session_asks_nothing_and_takes_the_first_record_as_live(parts):
    session, wire, _ = parts
    session.ask()
    session.tail_lost(3)  # nothing stored yet: no tail to have lost
    assert wire.sent == []
    record = unframe(Clock().line("pause", button="STOP"))
    assert session.heard(record) is True and session.heard(record) is False  # seq 0 live once


def test_a_lost_tail_of_one_record_is_asked_for_and_a_state_naming_no_seq_asks_nothing(parts):
    session, wire, _ = parts
    take(session, Clock().line("pause", button="STOP"))
    for named in (None, "1", 1.0, 0):  # not a seq, or one already stored
        session.tail_lost(named)
    assert wire.sent == []
    session.tail_lost(1)
    assert wire.sent == ["resend 1 1"]


def test_a_clock_of_protocol_1_is_known_by_its_port(tmp_path):
    from tileclock.director.follow.store import clock_of

    record = {"seq": 0, "ev": "pause"}  # protocol 1 names no clock
    port = Wire("/dev/ttyUSB0")
    session = ClockSession(clock_of(record, port.name), RecordStore(str(tmp_path / "out")), port)
    assert session.mine(record)
    other = ClockSession(clock_of(record, "/dev/ttyUSB1"), RecordStore(str(tmp_path / "out2")), port)
    assert not other.mine(record)


def test_a_record_naming_the_very_next_seq_is_asked_for(parts):
    session, wire, _ = parts
    take(session, Clock().line("pause", button="STOP"))
    session.named(1)  # the clock holds one more than has come
    session.ask()
    assert wire.sent == ["resend 1 1"]
