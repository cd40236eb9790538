"""A spare clock takes over a dead clock's game from the hall's page (issue 40 points 4 and 5),
on a real mosquitto: the clock dies without a word mid-game, the director moves its game to a
spare, both sides' times are the dead clock's journal's to the millisecond, the game is played to
its end on the spare and is in results.csv once."""

import csv
import json

import pytest

from conftest import tap
from support.call_hall import Hall
from support.hall_helpers import closed_after, wait_for
from tileclock.director.hall.audit_read import read
from tileclock.director.records.history import iter_records


@pytest.fixture
def hall(broker, tmp_path):
    yield from closed_after(Hall(broker, tmp_path))


def die(clocks, clock):
    """`clock` gone at once and for good (a Pi that will not boot): no `offline`, no last save."""
    sim = clocks.sims.pop(clock)
    sim.uplink._closed = True
    sim.uplink.acked_file.cancel()
    sim.uplink.client.loop_stop()
    sim.uplink.client.socket().close()
    sim.uplink.close = lambda: None
    sim.journal.write_pending()
    sim.journal.close = lambda: None
    sim.close()


def test_a_dead_clocks_game_moves_to_a_spare_exact_to_the_ms_and_is_scored_once(hall):
    clocks = hall.clocks
    clocks.end_game("c1")  # round 3's game at table 12 opens on c1
    hall.feed.command("set round=3 table=12", "c1")
    wait_for(lambda: any(r["ev"] == "set" for r in hall.clock_records("c1")), what="c1's set")
    clocks.open_game("c1")
    clocks.end_game("c2")  # c2 is the spare: its game over, a fresh one open
    clocks.open_game("c2")
    for t_s in (1.234, 9.871, 14.002):  # c1 plays on: B, A, B each press, A's clock runs
        tap(clocks.sims["c1"], "AB"[int(t_s) % 2], clocks.t["c1"] + t_s)
    clocks.sims["c1"].daemon.pump(clocks.sims["c1"].time())
    clocks.pump()
    wait_for(lambda: hall.board("c2")["state"] == "ready", what="the spare's fresh game on the page")
    dead = [r for r in iter_records(clocks.journal("c1"))]
    wait_for(lambda: hall.page.game("c1").records[-1]["seq"] == dead[-1]["seq"], what="c1's last record")
    die(clocks, "c1")
    last = dead[-1]

    status, answer = hall.post("/api/board/c1/move", {"to": "c2"})
    assert status == 200, answer
    wait_for(
        lambda: any(r["ev"] == "takeover" for r in hall.clock_records("c2")), what="the spare's takeover"
    )
    (taken,) = [r for r in hall.clock_records("c2") if r["ev"] == "takeover"]
    assert (taken["from"], taken["from_seq"], taken["state"], taken["run"]) == (
        "c1",
        last["seq"],
        "paused",
        None,
    )
    for side in "AB":  # each side's time used, shown and penalty: the dead clock's journal's, to the ms
        assert taken[side] == last[side], side
    assert taken["by"] == json.loads(answer)["id"]
    # a second move of the same game is refused, never sent
    status, why = hall.post("/api/board/c1/move", {"to": "c2"})
    assert status == 409 and "not sent" in why
    # the spare plays the game to its end; results.csv has it once, with the dead clock's part
    tap(clocks.sims["c2"], "A", clocks.t["c2"] + 2)  # B runs 5 s
    clocks.t["c2"] += 7
    clocks.end_game("c2")
    clocks.pump()
    wait_for(lambda: len(rows(hall)) == 3, what="c1's first game and the spare's two in results.csv")
    row = rows(hall)[-1]
    assert int(row["A_used_ms"]) == last["A"]["used_ms"]
    assert int(row["B_used_ms"]) > last["B"]["used_ms"]
    moved = next(r for r in dead if r["ev"] == "new_game" and r.get("table") == "12")["seq"]
    assert not [r for r in rows(hall) if r["clock"] == "c1" and int(r["game_seq"]) == moved]
    assert (row["clock"], row["round"], row["table"]) == ("c2", "3", "12")  # the pairing's row
    (move,) = [e for e in read(hall.folder) if e["action"] == "move"]
    assert move["changed"]["from"] == "c1" and move["clock"] == "c2"


def rows(hall):
    path = hall.folder / "results.csv"
    if not path.exists():
        return []
    with open(path, newline="") as file:
        return list(csv.DictReader(file))
