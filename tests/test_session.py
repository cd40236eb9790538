"""One clock's session on the director's side (director/follow/session.py), alone: a store on a temporary
folder and a transport that only keeps what is sent, the lines a clock would see on its port or topic."""

import json

import pytest

from tileclock.director.follow.session import ClockSession, Outcome
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


def rejects(tmp_path):
    """The entries of the store's rejects.log, oldest first."""
    path = tmp_path / "out" / "rejects.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_receive_stores_a_good_record_and_says_the_ack_it_sent(parts, tmp_path):
    session, wire, _ = parts
    first, *rest = Clock().game()
    received = session.receive(first.encode("ascii"))  # as the broker hands it: bytes
    assert received.outcome == Outcome.STORED and received.taken and received.live
    assert received.record["seq"] == 0 and received.log is session.log and received.acked is None
    *_, end = [session.receive(line) for line in rest]
    assert end.acked == wire.sent[-1] and end.acked.startswith("ack 2")
    assert session.log.expected == 3 and rejects(tmp_path) == []


def test_receive_says_a_duplicate_and_it_changes_nothing(parts):
    session, wire, _ = parts
    lines = Clock().game()
    for line in lines:
        session.receive(line)
    again = session.receive(lines[1])
    assert again.outcome == Outcome.DUPLICATE and again.taken and not again.live
    assert again.acked is None and len(wire.sent) == 1 and session.log.duplicates == 1


def test_receive_keeps_aside_a_record_the_decoder_refuses_and_never_asks_for_it(parts, tmp_path):
    session, wire, _ = parts
    clock = Clock()
    good = clock.line("pause", button="STOP")
    body = json.dumps({"seq": 1, "clock": "c1", "ev": "pause", "t_ms": "soon"}, separators=(",", ":"))
    damaged = frame(body)  # its integrity good, its fields not
    clock.seq = 2
    after = clock.line("pause", button="STOP")
    for line in (good, damaged, after):
        received = session.receive(line)
    refused = session.receive(damaged)  # (again: refused again, with the decoder's reason)
    assert refused.outcome == Outcome.DAMAGED and not refused.taken and refused.record["seq"] == 1
    assert refused.reason is not None and refused.detail
    assert received.outcome == Outcome.STORED and session.log.expected == 3 and session.log.gap() is None
    session.ask()
    assert wire.sent == []  # seq 1 is on file as refused: not asked for
    kept = rejects(tmp_path)[0]
    assert kept["line"] == damaged and kept["reason"] == str(refused.reason) and kept["from"] == "hall:c1"


def test_receive_refuses_another_clock_s_record_and_marks_no_seq_as_seen(parts, tmp_path):
    session, wire, _ = parts
    line = Clock("c2").line("pause", button="STOP")
    received = session.receive(line)
    assert received.outcome == Outcome.FOREIGN and not received.taken
    assert received.reason == "foreign_clock" and "'c2'" in received.detail
    assert session.store.clocks == {} and session.newest == -1
    assert [(r["reason"], r["line"]) for r in rejects(tmp_path)] == [("foreign_clock", line)]
    damaged = frame(json.dumps({"seq": 0, "clock": "c2", "ev": "pause", "t_ms": "x"}))
    assert session.receive(damaged).record is None  # damaged and another's: its seq is no one's here
    assert session.store.clocks == {}


def test_receive_counts_a_line_altered_on_the_way_as_noise_and_its_gap_is_asked_for(parts, tmp_path):
    session, wire, _ = parts
    clock = Clock()
    lines = [clock.line("pause", button="STOP") for _ in range(3)]
    altered = lines[1].replace('"pause"', '"pausf"')
    received = [session.receive(line) for line in (lines[0], altered, b"\xff\xfe", lines[2])]
    assert [r.outcome for r in received] == [
        Outcome.STORED,
        Outcome.UNREADABLE,
        Outcome.UNREADABLE,
        Outcome.STORED,
    ]
    assert [r.reason for r in received[1:3]] == ["bad_crc", "not_text"]  # (codes, never Python's words)
    session.ask()
    assert wire.sent == ["resend 1 1"] and rejects(tmp_path) == []


def test_receive_keeps_aside_a_line_the_director_fails_on_and_says_so_loudly(parts, tmp_path, caplog):
    session, wire, _ = parts
    line = Clock().line("pause", button="STOP")

    def broken(*args):
        raise KeyError("a bug")

    session.store.add = broken
    received = session.receive(line)
    assert received.outcome == Outcome.FAILED and received.reason == "internal"
    assert "KeyError" in received.detail and not received.taken
    assert [(r["reason"], r["line"]) for r in rejects(tmp_path)] == [("internal", line)]
    assert "bug" in session.store.notices[-1][1]  # told to the director
    assert any(r.exc_info and "rejects.log" in r.getMessage() for r in caplog.records)  # a traceback
    session.named(0)
    session.ask()
    assert wire.sent == ["resend 0 0"]  # nothing marked as seen: asked for again


def test_receive_leaves_the_disk_s_errors_to_its_caller(parts):
    session, _, _ = parts

    def full(*args):
        raise OSError(28, "No space left on device")

    session.store.add = full
    with pytest.raises(OSError):
        session.receive(Clock().line("pause", button="STOP"))


def test_the_store_tells_its_listeners_each_record_it_took_and_the_boards_keep_theirs(tmp_path):
    from tileclock.director.hall.board import Boards

    heard = []
    store = RecordStore(str(tmp_path / "out"), listeners=[lambda *told: heard.append(told)])
    boards = Boards(store, lambda clock_id: f"hall:{clock_id}", wall=lambda: 100.0)
    store.subscribe(boards.stored)
    session = ClockSession("c1", store, Wire())
    clock = Clock()
    lines = [clock.line("pause", button="STOP") for _ in range(3)]
    for line in (lines[0], lines[2], lines[2]):  # the last one a duplicate, held for the gap
        session.receive(line)
    assert [(clock_id, record["seq"], log) for clock_id, record, log in heard] == [
        ("c1", 0, session.log),
        ("c1", 2, session.log),
        ("c1", 2, session.log),
    ]
    board = boards["c1"]
    assert board.log is session.log and board.record["seq"] == 0 and board.received_at == 100.0
    session.receive(lines[1])  # fills the gap: the board moves on to the last record let through
    assert board.record["seq"] == 2 and boards.shown(100.5)[0]["age_ms"] == 500
    serial = ClockSession("c2", store, Wire("/dev/ttyUSB0"))  # the same store, fed by a port
    assert serial.receive(Clock("c2").line("pause", button="STOP")).taken
    assert list(boards) == ["c1"] and len(heard) == 5  # told, but no board of the hall's
