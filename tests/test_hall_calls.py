"""A call and the audit trail end to end: simulated clocks, a real mosquitto, the director's page.

The clock's side of a call: tests/test_calls.py. In Chromium: tests/test_hall_page_calls.py.
"""

import glob
import json
import os
import re

from conftest import tap
from support.call_hall import (
    Hall,
    call_from,
    hall,  # noqa: F401  (the fixture: two clocks, the feed and the page)
)
from support.hall_helpers import wait_for
from support.halls import settle
from tileclock.device.assembly import SIM_EPOCH_NS
from tileclock.director.event.players import TablePlayers
from tileclock.director.hall.audit_read import read
from tileclock.director.pages.web import HallPage

S = 1_000_000_000


def test_a_call_reaches_the_page_is_answered_there_and_the_clock_shows_it(hall):  # noqa: F811  (the fixtures imported from their module)
    call_from(hall, "c1")
    wait_for(lambda: (hall.board("c1") or {}).get("call"), what="the call on the page")
    board = hall.board("c1")
    call = board["call"]
    assert call["state"] == "called" and board["attention"] == 0 and board["state"] == "paused"
    assert hall.feed.snapshot()["boards"][0]["clock"] == "c1"  # a calling board comes first
    assert hall.board("c2")["call"] is None

    status, answer = hall.post("/api/board/c1/call", {"call": call["seq"], "answer": "taken"})
    assert status == 200 and answer and f"by={hall.label}_" in json.loads(answer)["sent"]
    wait_for(lambda: any(r["ev"] == "call_answer" for r in hall.clock_records("c1")), what="the answer")
    assert hall.clocks.sims["c1"].view().call == "taken"  # the panels say TD COMING
    wait_for(lambda: hall.board("c1")["call"]["state"] == "taken", what="the page to show it taken")

    status, _ = hall.post("/api/board/c1/call", {"call": call["seq"], "answer": "done"})
    assert status == 200
    wait_for(lambda: hall.clock_records("c1") and hall.board("c1")["call"] is None, what="the call closed")
    # on file: the audit trail with the session that answered, each answer an action of its own...
    trail = read(hall.folder)
    actions = [(e["action"], e["clock"], e["changed"].get("answer"), e["by"]) for e in trail]
    assert actions == [("call", "c1", "taken", hall.label), ("call", "c1", "done", hall.label)]
    assert all(e["id"].startswith(hall.label + "_") for e in trail) and trail[0]["id"] != trail[1]["id"]
    # ...and the clock's records name each action, and each took
    answers = [r for r in hall.clock_records("c1") if r["ev"] == "call_answer"]
    assert [(a["answer"], a["source"], a["by"]) for a in answers] == [
        ("taken", "hall", trail[0]["id"]),
        ("done", "hall", trail[1]["id"]),
    ]
    wait_for(lambda: all(e["outcomes"] for e in read(hall.folder)), what="both outcomes on the trail")
    outcomes = [e["outcomes"]["c1"] for e in read(hall.folder)]
    assert [(o["outcome"], o["seq"]) for o in outcomes] == [("applied", a["seq"]) for a in answers]
    history = hall.get("/api/board/c1/history")
    assert [r["ev"] for r in history["recorded"]][:3] == ["call_answer", "call_answer", "call"]


def test_an_open_call_survives_a_restart_of_the_director(hall):  # noqa: F811  (the fixtures imported from their module)
    call_from(hall, "c1")
    wait_for(lambda: (hall.board("c1") or {}).get("call"), what="the call on the page")
    seq = hall.board("c1")["call"]["seq"]
    hall.close()  # the director's laptop restarts: the page and the feed come back from the records folder
    hall.start()
    wait_for(lambda: (hall.board("c1") or {}).get("call"), what="the call again after the restart")
    assert hall.board("c1")["call"]["seq"] == seq and hall.board("c1")["call"]["waited_ms"] >= 0


def test_a_calls_wait_counts_from_its_raise_across_a_restart_of_the_hall_and_a_new_game(hall):  # noqa: F811  (the fixtures imported from their module)
    epoch_ms = SIM_EPOCH_NS // 1_000_000
    raised_s = hall.clocks.t["c1"] + 3.1  # the third tap, let go (0.1 s): c1's virtual time
    hall.now_ms = epoch_ms + int(raised_s * 1000)  # the laptop's time agrees with the clock's (chrony)
    call_from(hall, "c1")
    wait_for(lambda: (hall.board("c1") or {}).get("call"), what="the call on the page")
    (record,) = [r for r in hall.clock_records("c1") if r["ev"] == "call"]
    assert record["wall_ms"] == epoch_ms + int(raised_s * 1000)  # the clock's time of day of the raise
    hall.now_ms = record["wall_ms"] + 95_000  # the director looks 1:35 later
    assert hall.board("c1")["call"]["waited_ms"] == 95_000

    hall.close()  # the laptop restarts, 4 minutes on: the wait goes on from the raise, not from 0:00
    hall.now_ms += 240_000
    hall.start()
    wait_for(lambda: (hall.board("c1") or {}).get("call"), what="the call again after the restart")
    assert hall.board("c1")["call"]["waited_ms"] == 335_000

    clocks = hall.clocks  # the players end the game and open the next: the call goes with them
    clocks.end_game("c1")
    clocks.open_game("c1")
    hall.now_ms += 60_000
    opened = [r for r in hall.clock_records("c1") if r["ev"] == "new_game"][-1]
    wait_for(lambda: hall.board("c1")["seq"] >= opened["seq"], what="the next game on the page")
    assert (opened["call"], opened["call_wall_ms"]) == (record["seq"], record["wall_ms"])
    assert hall.board("c1")["call"] == {
        "seq": record["seq"],
        "state": "called",
        "raised_ms": record["wall_ms"],
        "waited_ms": 395_000,
    }


def test_an_answer_for_a_board_with_no_such_call_open_is_refused_and_never_sent(hall):  # noqa: F811  (the fixtures imported from their module)
    call_from(hall, "c1")
    wait_for(lambda: (hall.board("c1") or {}).get("call"), what="the call on the page")
    seq = hall.board("c1")["call"]["seq"]
    sent_before = len(read(hall.folder))
    status, why = hall.post("/api/board/c2/call", {"call": seq, "answer": "done"})  # the other board
    assert status == 409 and why == f"not sent: board {hall.board('c2')['board']} has no open call"
    status, why = hall.post("/api/board/c1/call", {"call": seq + 1, "answer": "done"})
    assert status == 409 and f"open call is call {seq}, not {seq + 1}" in why
    assert hall.post("/api/board/c1/call", {"call": seq, "answer": "taken"})[0] == 200
    wait_for(lambda: hall.clock_records("c1") and hall.board("c1")["call"]["state"] == "taken", what="taken")
    status, why = hall.post("/api/board/c1/call", {"call": seq, "answer": "taken"})  # a second page, late
    assert status == 409 and "already taken" in why
    assert [e["changed"] for e in read(hall.folder)][sent_before:] == [{"call": seq, "answer": "taken"}]
    assert not [r for r in hall.clock_records("c2") if r["ev"] in ("call_answer", "error")]


def pairings(folder, rows):
    """The hall given a pairings CSV (`tileclock hall --pairings FILE`), as `tileclock hall` gives it."""
    path = folder / "pairings.csv"
    path.write_text("round,table,first,second\n" + "".join(f"{row}\n" for row in rows))
    return TablePlayers.of_files([str(path)])


def test_the_players_at_a_table_are_read_again_when_the_pairings_change(tmp_path):
    players = pairings(tmp_path, ["2,12,Ann,Bob"])
    assert players.names(2, "12") == "Ann v Bob" and players.names(2, "012") == "Ann v Bob"
    assert players.names(1, "12") is None and players.names(None, "12") is None
    path = tmp_path / "pairings.csv"
    path.write_text("round,table,first,second\n2,12,Cat,Dan\n")
    os.utime(path, ns=(1, 1))  # a new stamp, however fast the disk
    assert players.pairings.wait_fresh(5)  # read in the pairings' own thread
    assert players.names(2, "12") == "Cat v Dan"
    path.write_text("not a pairings file")
    os.utime(path, ns=(2, 2))
    assert players.pairings.wait_fresh(5)
    assert players.names(2, "12") == "Cat v Dan"  # TSH mid-write: the last names read, until it reads again
    assert "pairings.csv: the header must name" in players.pairings.problem


def test_who_gave_b_a_minute_at_table_12_and_when_from_the_files_alone(hall, tmp_path):  # noqa: F811  (the fixtures imported from their module)
    clocks = hall.clocks
    clocks.end_game("c1")
    clocks.open_game("c1")  # table 12's game: the table set before anyone presses
    hall.feed.players = pairings(tmp_path, ["2,12,Ann,Bob", "2,13,Cat,Dan"]).names
    hall.feed.command("set round=2 table=12", "c1")
    wait_for(lambda: any(r["ev"] == "set" for r in hall.clock_records("c1")), what="the table set")
    for after_s, button in ((1, "B"), (20, "STOP")):  # played a little, then stopped for a correction
        tap(clocks.sims["c1"], button, clocks.t["c1"] + after_s)
    clocks.t["c1"] += 21
    wait_for(lambda: hall.clock_records("c1") and hall.board("c1")["table"] == "12", what="table 12")
    assert hall.board("c1")["players"] == "Ann v Bob"  # a call's banner names them
    status, _ = hall.post(
        "/api/board/c1/command", {"action": "adjust", "side": "B", "delta_s": "60"}, "77aa01"
    )
    assert status == 200
    status, _ = hall.post(
        "/api/board/c1/command", {"action": "adjust", "side": "A", "delta_s": "-60"}, "0b0b"
    )
    wait_for(lambda: sum(r["ev"] == "adjust" for r in hall.clock_records("c1")) == 2, what="both adjusts")
    tap(clocks.sims["c1"], "B", clocks.t["c1"] + 1)  # play goes on: A's clock runs
    clocks.t["c1"] += 2
    status, _ = hall.post(
        "/api/board/c1/command", {"action": "adjust", "side": "B", "delta_s": "60"}, "77aa01"
    )
    assert status == 200  # sent: the clock refuses a correction while a clock runs
    wait_for(lambda: any(r["ev"] == "error" for r in hall.clock_records("c1")), what="the refusal")
    settle(hall.feed, hall.clocks, "the adjusts on file")

    def answers_on_the_trail():
        with open(os.path.join(hall.folder, "audit.log")) as trail:
            return sum('"action":"outcome"' in line for line in trail)

    wait_for(lambda: answers_on_the_trail() == 3, what="the clock's three answers on the trail")

    # the question, answered from the records folder alone: the audit trail...
    with open(os.path.join(hall.folder, "audit.log")) as trail:
        lines = [json.loads(line) for line in trail]
    gave, refused = [
        e
        for e in lines
        if e["action"] == "adjust"
        and str(e["table"]) == "12"
        and e["changed"] == {"side": "B", "delta_ms": 60_000}
    ]
    assert gave["by"] == hall.tab("77aa01") and gave["at"].endswith("+00:00") and gave["addr"] == "127.0.0.1"
    assert re.fullmatch(rf"{hall.tab('77aa01')}_[0-9a-z]{{6}}_1", gave["id"])  # who, the hall's run, a count
    assert gave["command"] == f"adjust B +60000 by={gave['id']}"
    # ...did it take: the outcome line of that action, from the clock's answer...
    outcome = {e["of"]: e for e in lines if e["action"] == "outcome"}
    assert (outcome[gave["id"]]["outcome"], outcome[gave["id"]]["clock"]) == ("applied", "c1")
    assert outcome[refused["id"]]["outcome"] == "refused" and outcome[refused["id"]]["reason"]
    # ...and the clock's own record of it, in the game file of table 12, names the same action
    game_files = glob.glob(os.path.join(hall.folder, "**", "game-*.log"), recursive=True)
    records = [json.loads(line) for path in game_files for line in open(path) if line.strip()]
    (adjust,) = [r for r in records if r["ev"] == "adjust" and r["player"] == "B" and r["delta_ms"] == 60_000]
    assert adjust["by"] == gave["id"] and adjust["source"] == "hall" and adjust["clock"] == "c1"
    assert (
        outcome[gave["id"]]["seq"] == adjust["seq"]
        and outcome[gave["id"]]["after"]["B"] == adjust["B"]["shown"]
    )
    table = [r for r in records if r.get("clock") == "c1" and r["ev"] == "set" and r.get("table") == "12"]
    assert table and table[0]["seq"] < adjust["seq"]
    assert adjust["B"]["shown"] != gave["before"]["B"]  # what it changed: B's time, before and after
    (error,) = [r for r in records if r["ev"] == "error" and r.get("by") == refused["id"]]
    assert (
        outcome[refused["id"]]["reason"] == error["detail"] and outcome[refused["id"]]["seq"] == error["seq"]
    )
    # the table's history on the page: the refusal as refused, beside the clock's record of it
    history = hall.get("/api/board/c1/history")
    took = [(a["by"], a["outcome"]["state"]) for a in history["actions"] if a["action"] == "adjust"]
    assert took == [
        (hall.tab("77aa01"), "refused"),
        (hall.tab("0b0b"), "applied"),
        (hall.tab("77aa01"), "applied"),
    ]
    assert history["actions"][0]["outcome"]["reason"] == error["detail"]
    assert (
        history["recorded"][0]["what"] == f"refused: {error['detail']}"
        and history["recorded"][0]["by"] == refused["id"]
    )


def test_a_command_the_audit_trail_cannot_take_is_not_sent_and_a_bad_one_never_crashes(tmp_path):
    from support.feeds import Feed

    feed = Feed(tmp_path)
    server = HallPage(feed, port=0).start()
    try:
        hall = type("Hall", (), {"page": server, "tabs": {}, "tab": Hall.tab})()  # no clocks: its page
        post = lambda form: Hall.post(hall, "/api/board/c1/command", form)  # noqa: E731  (a one-line helper)
        for delta in ("+-5", "60.5", "1e3", "", "0", "601"):
            assert post({"action": "adjust", "side": "B", "delta_s": delta})[0] == 400, delta
        assert post({"action": "explode"})[0] == 400 and feed.sent == []
        (tmp_path / "audit.log").mkdir()  # the trail cannot be written: nothing goes out
        status, text = post({"action": "adjust", "side": "B", "delta_s": "60"})
        assert status == 503 and "audit trail" in text and feed.sent == []
    finally:
        server.close()


def test_the_audit_trail_reads_back_what_it_wrote_and_skips_what_is_not_a_line(tmp_path):
    from tileclock.director.hall.audit import AuditLog, session_label

    trail = AuditLog(str(tmp_path), clock=lambda: 1_764_100_000.5)
    board = {"board": "12", "table": "12", "round": 3, "A": {"shown": "3:10"}, "B": {"shown": "-0:20"}}
    trail.record(
        "adjust", "page-77aa", "10.0.0.5", "adjust B +60000 by=page-77aa", "c1", board, {"side": "B"}
    )
    with open(tmp_path / "audit.log", "a") as trail_file:
        trail_file.write('not json\n{"action": "explode"}\n[1, 2]\n')  # damage, and lines of no action
    (entry,) = read(str(tmp_path))
    assert entry["at"] == "2025-11-25T19:46:40.500+00:00" and entry["wall_ms"] == 1_764_100_000_500
    assert entry["before"] == {"A": "3:10", "B": "-0:20"} and (entry["table"], entry["round"]) == ("12", 3)
    assert session_label("3f2a9c1b") == "page-3f2a9c1b"
    assert session_label(None) == session_label("a b") == session_label("../x") == "page"
    assert read(str(tmp_path / "nowhere")) == []


def test_a_command_to_a_clock_that_is_offline_reads_as_lost_never_as_done(hall):  # noqa: F811  (the fixtures imported from their module)
    hall.clocks.sims["c2"].close()  # its uplink says offline as it goes
    wait_for(lambda: not hall.board("c2")["online"], what="c2 offline on the page")
    status, answer = hall.post("/api/board/c2/command", {"action": "adjust", "side": "B", "delta_s": "60"})
    assert status == 200  # sent, and on the trail: the director did ask
    (asked,) = read(hall.folder)
    assert asked["online"] is False and asked["id"] in json.loads(answer)["sent"]
    (action,) = hall.get("/api/board/c2/history")["actions"]
    assert action["outcome"]["state"] == "not delivered" and "never got it" in action["outcome"]["reason"]


def test_the_directors_end_and_new_game_from_the_page_each_audited_with_what_became_of_it(hall):  # noqa: F811  (the fixtures imported from their module)
    command = lambda action: hall.post("/api/board/c1/command", {"action": action})  # noqa: E731  (one line)
    assert command("new_game")[0] == 200  # sent; the clock refuses it: its game is in play
    wait_for(lambda: any(r["ev"] == "error" for r in hall.clock_records("c1")), what="the refusal")
    assert command("round_over")[0] == 200  # the director's end of this game
    wait_for(lambda: any(r["ev"] == "end" for r in hall.clock_records("c1")), what="the end")
    assert command("new_game")[0] == 200
    wait_for(lambda: sum(r["ev"] == "new_game" for r in hall.clock_records("c1")) == 2, what="the new game")
    wait_for(lambda: len([e for e in read(hall.folder) if e["outcomes"]]) == 3, what="three outcomes")
    history = hall.get("/api/board/c1/history")
    took = [(a["action"], a["outcome"]["state"]) for a in history["actions"]]
    assert took == [("new_game", "applied"), ("round_over", "applied"), ("new_game", "refused")]
    assert "only on an ended game" in history["actions"][2]["outcome"]["reason"]
    opened = [r for r in hall.clock_records("c1") if r["ev"] == "new_game"][-1]
    assert (opened["by"], opened["source"]) == (history["actions"][0]["id"], "hall")
    assert history["recorded"][-1]["what"] == "new game"  # the game on the page: the director opened it
    assert hall.post("/api/board/c1/command", {"action": "wipe"})[0] == 400
