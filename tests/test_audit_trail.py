"""The audit trail's own file: each action's id, what became of it, and reading it back in bounded
memory whatever the file holds (docs/hall.md, "The audit trail"). End to end with clocks and a real
mosquitto: tests/test_hall_calls.py and tests/test_hall_event.py."""

import json
import os
import threading
import tracemalloc

import pytest

from tileclock.director.hall.audit import AuditLog
from tileclock.director.hall.audit_read import outcome_of, read, table_history
from tileclock.wire.labels import is_label

BOARD = {
    "board": "12",
    "table": "12",
    "round": 3,
    "online": True,
    "A": {"shown": "3:10"},
    "B": {"shown": "0:20"},
}


def adjust(trail, by="page-3f2a9c1b", board=BOARD):
    return trail.record(
        "adjust", by, "10.0.0.5", "adjust B +60000", "c1", board, {"side": "B"}, answered=True
    )


def record(ev, by, seq, **fields):
    return {
        "seq": seq,
        "ev": ev,
        "t_ms": 1000,
        "by": by,
        "A": {"shown": "3:10"},
        "B": {"shown": "1:20"},
        **fields,
    }


def test_each_action_has_an_id_its_clock_s_answer_names_and_the_outcome_follows_it(tmp_path):
    trail = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)
    gave, refused, lost = adjust(trail), adjust(trail), adjust(trail, board={**BOARD, "online": False})
    # who asked, the hall's run (its start, base 36) and a count
    assert [gave["id"], refused["id"], lost["id"]] == [
        "page-3f2a9c1b_t6as9s_1",
        "page-3f2a9c1b_t6as9s_2",
        "page-3f2a9c1b_t6as9s_3",
    ]
    assert gave["command"] == "adjust B +60000 by=page-3f2a9c1b_t6as9s_1" and lost["online"] is False
    trail.answered("c1", record("adjust", gave["id"], 40))
    trail.answered("c1", record("end", gave["id"], 41, reason="stop_hold"))  # the same action's: not again
    trail.answered("c1", record("error", refused["id"], 42, detail="adjust: only while the clock is stopped"))
    trail.answered("c1", record("adjust", "cli", 43))  # no action of the trail's: no outcome
    trail.answered("c1", record("pause", gave["id"], 44))  # not an answer
    assert trail.flush(5)
    lines = [json.loads(line) for line in open(tmp_path / "audit.log")]
    assert [(e["action"], e.get("of"), e.get("outcome")) for e in lines[3:]] == [
        ("outcome", lost["id"], "not_delivered"),  # with its action's line: the clock was offline
        ("outcome", gave["id"], "applied"),
        ("outcome", refused["id"], "refused"),
    ]
    assert lines[4]["seq"] == 40 and lines[4]["after"] == {"A": "3:10", "B": "1:20"}
    assert (
        lines[5]["reason"] == "adjust: only while the clock is stopped" and lines[5]["by"] == "page-3f2a9c1b"
    )
    # read back: each action with what became of it, as the director's page shows it
    entries = read(str(tmp_path))
    assert [outcome_of(e, "c1")["state"] for e in entries] == ["applied", "refused", "not delivered"]
    assert outcome_of(entries[0], "c1")["seq"] == 40 and outcome_of(entries[1], "c1")["seq"] == 42
    history = table_history(read(str(tmp_path)), [], "c1", "12", online=True)
    assert [a["outcome"]["state"] for a in history["actions"]] == ["not delivered", "refused", "applied"]
    # no answer: the clock online says "not yet", the clock gone offline since says so
    waiting = read(str(tmp_path))[2] | {"online": True, "outcomes": {}}
    assert outcome_of(waiting, "c1") == {"state": "no answer yet"}
    assert outcome_of(waiting, "c1", online=False)["state"] == "clock offline"
    # a restart of the hall in the same second: a run of its own, never repeating an id
    assert adjust(AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.9))["id"] == "page-3f2a9c1b_t6as9t_1"


def test_a_command_to_a_clock_away_is_not_delivered_never_applied(tmp_path):
    """Issue 37: a command to a clock heard offline, or one its clock refused as stale or made
    before its game began, is on the trail as not delivered; a later answer (a replay) is not
    written as applied."""
    trail = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)
    lost = adjust(trail, board={**BOARD, "online": False})
    late, old, unsynced = adjust(trail), adjust(trail), adjust(trail)
    over = trail.record(
        "round_over", "page-3f2a9c1b", None, "round over", "all", None, {}, True, None, ["c2"]
    )
    trail.answered("c1", record("adjust", lost["id"], 40))  # a replay the clock took: not "applied"
    trail.answered(
        "c1", record("error", late["id"], 41, detail="refused: adjust: a stale command", refused="stale")
    )
    trail.answered("c1", record("error", old["id"], 42, detail="refused: before", refused="before_game"))
    trail.answered(
        "c1", record("error", unsynced["id"], 43, detail="not synchronised", refused="unsynchronised")
    )
    trail.answered("c2", record("end", over["id"], 44, reason="round_over"))  # c2 was offline
    trail.answered("c1", record("end", over["id"], 45, reason="round_over"))
    assert trail.flush(5)
    entries = read(str(tmp_path))
    assert [outcome_of(e, "c1")["state"] for e in entries[:4]] == [
        "not delivered",
        "not delivered",
        "not delivered",
        "refused",  # it got it, and could not judge it: the director acts at the board
    ]
    assert "offline when it was sent" in outcome_of(entries[0], "c1")["reason"]
    assert outcome_of(entries[1], "c1") == {
        "state": "not delivered",
        "seq": 41,
        "at": outcome_of(entries[1], "c1")["at"],
        "reason": "refused: adjust: a stale command",
    }
    assert outcome_of(entries[4], "c2")["state"] == "not delivered"
    assert outcome_of(entries[4], "c1")["state"] == "applied"
    # after a restart too: the answer of the replay is not written again as applied
    again = AuditLog(str(tmp_path), clock=lambda: 1_764_100_001.5)
    assert again.answered("c1", record("adjust", lost["id"], 40)) is None


def test_an_id_stays_a_label_and_a_line_cut_off_by_a_power_cut_is_ended(tmp_path):
    (tmp_path / "audit.log").write_bytes(b'{"at": "2025-11-25T19:46:40.5')  # a power cut mid-line
    entry = adjust(AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5), by="page-" + "x" * 27)
    assert entry["id"] == "page-" + "x" * 18 + "_t6as9s_1" and len(entry["id"]) == 32
    refused = []
    assert [e["id"] for e in read(str(tmp_path), refused)] == [entry["id"]] and [n for n, _ in refused] == [1]


def test_a_huge_or_endless_audit_log_is_read_in_bounded_memory(tmp_path):
    trail = AuditLog(str(tmp_path))
    first = adjust(trail)
    with open(tmp_path / "audit.log", "ab") as out:
        out.write(b'{"at":"' + b"9" * 4_000_000 + b'"}\n')  # one 4 MB line: twice the memory allowed
        line = json.dumps({**first, "id": None}).replace(', "id": null', "")
        out.write((line + "\n").encode() * 5_000)  # and many honest lines (their dicts: megabytes)
    trail.answered("c1", record("adjust", first["id"], 40))
    assert trail.flush(5)
    tracemalloc.start()
    try:
        refused = []
        entries = read(str(tmp_path), refused, newest=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak  # the whole file is over 5 MB
    assert len(entries) == 100 and [n for n, _ in refused] == [2]
    (mine,) = read(str(tmp_path), keep=lambda e: e.get("id") == first["id"])
    assert outcome_of(mine, "c1")["state"] == "applied"  # its outcome, 5,000 lines on


def test_a_round_started_on_some_boards_is_in_their_history_only(tmp_path):
    trail = AuditLog(str(tmp_path))
    changed = {"round": 3, "start_ms": 1, "start": "14:00:00", "boards": ["11", "12"]}
    trail.record("round_start", "page-1a", None, "set round=3 start=1", "all", None, changed, answered=True)
    trail.record("round_over", "page-1a", None, "round over", "all", None, {"round": 3}, answered=True)

    def history(board):
        return [
            a["action"] for a in table_history(read(str(tmp_path)), [], "c", None, True, board)["actions"]
        ]

    assert history("12") == ["round_over", "round_start"]
    assert history("13") == ["round_over"]  # never sent the start: it is not waiting for an answer


def test_an_id_is_never_handed_out_twice_after_a_failed_write_a_restart_or_a_new_folder(
    tmp_path, monkeypatch
):
    """Ids were line numbers, counted before the write: a failed write (a 503, nothing sent) used
    one up, a restart recounted the file and handed it out again, and a new --out folder with the
    same browser tab started again from 1."""
    trail = AuditLog(str(tmp_path / "a"), clock=lambda: 1_764_100_000.5)
    ids = [adjust(trail)["id"]]
    real_fsync = os.fsync

    def full(fd):
        monkeypatch.setattr(os, "fsync", real_fsync)  # the disk refuses this one write
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    kept = (tmp_path / "a" / "audit.log").read_bytes()
    with pytest.raises(OSError):
        adjust(trail)  # the page answers 503: nothing was sent...
    assert (tmp_path / "a" / "audit.log").read_bytes() == kept  # ...and the trail never says it was
    ids.append(adjust(trail)["id"])
    ids.append(adjust(AuditLog(str(tmp_path / "a"), clock=lambda: 1_764_100_000.5))["id"])  # a restart
    ids.append(adjust(AuditLog(str(tmp_path / "b"), clock=lambda: 1_764_100_030.0))["id"])  # a new folder
    assert len(set(ids)) == len(ids) == 4, ids
    assert all(len(i) <= 32 and "." not in i and is_label(i) for i in ids)


def test_an_outcome_is_written_only_for_an_id_the_trail_sent_there_and_once(tmp_path):
    """A clock (or anything publishing as it) naming another clock's action, or an id never
    issued, wrote "applied" to the trail; a restart wrote a resent answer's outcome again."""
    trail = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)
    gave = adjust(trail)  # to c1
    forged = "page-3f2a9c1b_t6as9s_99"
    assert trail.answered("c9", record("adjust", gave["id"], 40)) is None  # not sent to c9
    assert trail.answered("c1", record("adjust", forged, 41)) is None  # never issued
    assert trail.answered("c1", record("adjust", "page-zz_1", 42)) is None  # of another trail's form
    start = trail.record("round_start", "page-1a", None, "set round=3", "all", None, {}, True, ["c1", "c2"])
    over = trail.record("round_over", "page-1a", None, "round over", "all", None, {}, answered=True)
    assert trail.answered("c3", record("set", start["id"], 43)) is None  # a start not sent to c3
    assert trail.answered("c1", record("adjust", gave["id"], 44))["outcome"] == "applied"
    assert trail.answered("c2", record("set", start["id"], 45))["outcome"] == "applied"
    assert trail.answered("c7", record("end", over["id"], 46))["outcome"] == "applied"  # every clock's
    assert trail.flush(5)
    again = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)  # a restart: the answers resent
    assert again.answered("c1", record("adjust", gave["id"], 44)) is None
    assert again.answered("c2", record("set", start["id"], 45)) is None
    assert again.answered("c9", record("adjust", gave["id"], 44)) is None
    assert again.answered("c1", record("set", start["id"], 47))["outcome"] == "applied"  # not yet heard
    assert again.flush(5)
    outcomes = [(e["of"], e["clock"]) for e in map(json.loads, open(tmp_path / "audit.log")) if e.get("of")]
    assert outcomes == [
        (gave["id"], "c1"),
        (start["id"], "c2"),
        (over["id"], "c7"),
        (start["id"], "c1"),
    ]


def test_the_clocks_answers_are_written_off_the_feeds_thread_with_their_syncs_shared(tmp_path, monkeypatch):
    """A round over to 100 boards was 100 syncs in a row on the feed's thread, each stalling the
    page's updates; now the feed's thread only queues them and a writer syncs them together."""
    trail = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)
    over = trail.record("round_over", "page-1a", None, "round over", "all", None, {}, answered=True)
    real_fsync, synced, held = os.fsync, [], []
    syncing, gate = threading.Event(), threading.Event()

    def fsync(fd):
        synced.append(threading.current_thread().name)
        if threading.current_thread() is not threading.main_thread():
            syncing.set()
            held.append(gate.wait(10))  # a slow disk: held until every answer has been heard
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert trail.answered("c0", record("end", over["id"], 40)) is not None
    assert syncing.wait(10)  # the writer is in its sync: the feed's thread goes on meanwhile
    for n in range(1, 100):
        assert trail.answered(f"c{n}", record("end", over["id"], 40 + n)) is not None
    assert "MainThread" not in synced  # the feed's thread never waited on the disk
    gate.set()
    assert trail.flush(10) and all(held)  # (False: the gate ran out, the feed's thread was held)
    assert 1 <= len(synced) <= 2, synced  # the first answer's, then the 99 queued meanwhile
    lines = [json.loads(line) for line in open(tmp_path / "audit.log")]
    assert sorted(e["clock"] for e in lines[1:]) == sorted(f"c{n}" for n in range(100))


@pytest.mark.parametrize("action", ["selftest", "speech", "large", "move", "moved", "new_game"])
def test_every_action_the_hall_audits_is_read_back_into_the_history(tmp_path, action):
    """An action the trail writes but its reader refuses vanishes from a board's history (a
    self-test from the page once did): each the hall sends is read back."""
    trail = AuditLog(str(tmp_path))
    trail.record(action, "page-1a", None, action, "c1", None, {}, answered=True)
    refused = []
    assert [e["action"] for e in read(str(tmp_path), refused)] == [action] and refused == []
